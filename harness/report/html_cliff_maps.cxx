// The cliff maps of report.html: for each scanned axis the measured series with its noise, every
// step marked where it happens and labelled with its cause and depth, and under the chart a table
// of the steps with their explanations. Drawn as SVG here, as the other charts are (html_report.cxx
// says why).

#include "harness/report/cliff_text.hxx"
#include "harness/report/html_parts.hxx"
#include "harness/report/html_text.hxx"
#include "harness/report/svg_chart.hxx"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace harness::report::html {

namespace {

constexpr const char* series_color = "#37474f";
constexpr const char* noise_color = "#90a4ae";

/// One colour per cause; red and green stay reserved for verdicts.
const char* cause_color(CliffCause cause)
{
    switch (cause) {
    case CliffCause::waves: return "#3366cc";
    case CliffCause::tiles: return "#8e5cc4";
    case CliffCause::alignment: return "#e8871e";
    case CliffCause::footprint: return "#c49a1b";
    case CliffCause::occupancy: return "#1b9aaa";
    case CliffCause::unexplained: return "#b5548a";
    }
    return color_neutral;
}

/// Which points of a pixel column a thinned line keeps.
enum class Keep { lowest, highest, both };

/// The points (x[i], y[i]) thinned to what the chart can show: per pixel column its lowest and/or
/// highest point, in axis order. So a scan of thousands of points stays a light polyline, and
/// every step and spike still reaches its full height.
std::vector<std::pair<double, double>> thin_to_pixels(const SvgChart& chart, const std::vector<double>& x,
                                                      const std::vector<double>& y, Keep keep)
{
    std::vector<std::pair<double, double>> out;
    std::size_t low = 0, high = 0;
    double column = 0;
    bool open = false;
    const auto close = [&] {
        if (!open) return;
        if (keep == Keep::lowest) {
            out.emplace_back(x[low], y[low]);
        } else if (keep == Keep::highest) {
            out.emplace_back(x[high], y[high]);
        } else {
            const auto [first, second] = std::minmax(low, high);
            out.emplace_back(x[first], y[first]);
            if (second != first) out.emplace_back(x[second], y[second]);
        }
    };
    for (std::size_t i = 0; i < std::min(x.size(), y.size()); ++i) {
        if (!chart.in_x(x[i]) || !chart.in_y(y[i])) continue;
        const double at = std::floor(chart.x_px(x[i]));
        if (!open || at != column) {
            close();
            column = at;
            low = high = i;
            open = true;
            continue;
        }
        if (y[i] < y[low]) low = i;
        if (y[i] > y[high]) high = i;
    }
    close();
    return out;
}

/// Whether the map measured noise for its points (an exact series has none).
bool has_noise(const CliffMap& map)
{
    return map.noise.size() == std::min(map.x.size(), map.values.size()) &&
           std::any_of(map.noise.begin(), map.noise.end(), [](double v) { return v > 0; });
}

std::string cliff_count_text(std::size_t n)
{
    return n == 0 ? "no cliff" : n == 1 ? "1 cliff" : fmt::format("{} cliffs", n);
}

/// The verdicts of one place as a table cell: each as a pill (its rule on hover) and what it says.
std::string verdict_cell(const std::vector<const CliffVerdict*>& verdicts)
{
    std::string html;
    for (const auto* v : verdicts)
        html += fmt::format("<div><span class=\"pill v-{}\" title=\"{}\">{}</span> {}</div>",
                            verdict_name(v->judgement.verdict), html_escape(v->judgement.rule),
                            verdict_label(v->judgement.verdict), html_escape(v->judgement.message));
    return "<td class=\"verdict\">" + html + "</td>";
}

/// The verdicts at places where this run has no cliff: cliffs of the baseline that vanished.
std::vector<const CliffVerdict*> vanished_cliffs(const CliffMap& map)
{
    auto out = verdicts_without_cliff(map);
    std::erase_if(out, [](const CliffVerdict* v) { return judges_whole_map(*v); });
    return out;
}

/// Every cliff, and every vanished one the gate names, in axis order; "" when there are none.
std::string cliff_table(const CliffMap& map)
{
    const auto vanished = vanished_cliffs(map);
    const bool verdicts = !vanished.empty() || std::any_of(map.cliffs.begin(), map.cliffs.end(), [&](const Cliff& c) {
        return !cliff_verdicts(map, c).empty();
    });
    std::vector<std::pair<double, std::string>> rows;
    for (const auto& c : map.cliffs)
        rows.emplace_back(
            c.x_before,
            fmt::format("<tr>{}{}{}{}<td class=\"cause\"><i class=\"swatch\" style=\"--c:{}\"></i>{}</td>{}{}</tr>\n",
                        number_cell(c.x_before, cliff_position_text(map, c)), text_cell(cliff_levels_text(map, c)),
                        number_cell(c.depth, cliff_depth_text(c.depth)),
                        number_cell(c.significance, cliff_significance_text(c)), cause_color(c.cause),
                        cliff_cause_name(c.cause), text_cell(c.explanation, "explanation"),
                        verdicts ? verdict_cell(cliff_verdicts(map, c)) : std::string()));
    for (const auto* v : vanished) {
        const auto was = v->judgement.baseline;
        rows.emplace_back(v->x_before,
                          fmt::format("<tr class=\"vanished\">{}<td>–</td>{}<td>–</td><td>–</td><td "
                                      "class=\"explanation\">not found in this run</td>{}</tr>\n",
                                      number_cell(v->x_before, cliff_position_text(map, v->x_before, v->x_after)),
                                      number_cell(was, was ? "was " + cliff_depth_text(*was) : std::string("–")),
                                      verdict_cell({v})));
    }
    if (rows.empty()) return {};
    std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::string body;
    for (const auto& row : rows) body += row.second;
    const std::string head =
        verdicts ? header_row({"position", "level", "depth", "significance", "cause", "explanation", "verdict"})
                 : header_row({"position", "level", "depth", "significance", "cause", "explanation"});
    return "<table class=\"sortable cliffs\">" + head + "<tbody>\n" + body + "</tbody></table>\n";
}

/// The verdicts on the whole map (one the baseline does not hold), under its caption.
std::string whole_map_verdicts(const CliffMap& map)
{
    std::string html;
    for (const auto& v : map.verdicts)
        if (judges_whole_map(v))
            html += fmt::format("<p class=\"note map-verdict\"><span class=\"pill v-{}\">{}</span> {}</p>\n",
                                verdict_name(v.judgement.verdict), verdict_label(v.judgement.verdict),
                                html_escape(v.judgement.message));
    return html;
}

/// Where the label of each cliff goes: on a free row at the top of the plot, beside its marker.
struct LabelPlacer {
    struct Placed {
        double from_px, to_px;
        int row;
    };
    std::vector<Placed> placed;

    /// The first row where [from_px, to_px] overlaps no label; -1 when the rows are full.
    int row_for(double from_px, double to_px, int rows)
    {
        for (int row = 0; row < rows; ++row) {
            const bool free = std::none_of(placed.begin(), placed.end(), [&](const Placed& p) {
                return p.row == row && from_px < p.to_px + 6 && p.from_px < to_px + 6;
            });
            if (!free) continue;
            placed.push_back({from_px, to_px, row});
            return row;
        }
        return -1;
    }
};

std::string cliff_map_chart(const CliffMap& map, std::size_t index, bool fail_on_improvement)
{
    const std::size_t n = std::min(map.x.size(), map.values.size());
    const std::vector<double> xs(map.x.begin(), map.x.begin() + static_cast<std::ptrdiff_t>(n));
    const std::vector<double> ys(map.values.begin(), map.values.begin() + static_cast<std::ptrdiff_t>(n));
    const bool noisy = has_noise(map);
    std::vector<double> upper, lower, extent = ys;
    if (noisy)
        for (std::size_t i = 0; i < n; ++i) {
            upper.push_back(ys[i] + std::fabs(map.noise[i]));
            lower.push_back(ys[i] - std::fabs(map.noise[i]));
            extent.push_back(upper.back());
            extent.push_back(lower.back());
        }
    // Linear axes: a scan's steps are evenly spaced in the axis (waves, tiles) and a level's
    // change is read against zero where the series counts something exactly.
    const Axis x = fit_axis(map.axis, xs, 0);
    Axis y = fit_axis(map.unit.empty() ? map.figure : fmt::format("{} ({})", map.figure, map.unit), extent, 0, !noisy);
    constexpr int label_rows = 3;
    y.hi += (y.hi - y.lo) * 0.22; // room above the series for the labels
    SvgChart chart(fmt::format("cliff-map-{}", index), 760, 320, x, y);

    if (noisy)
        chart.area(thin_to_pixels(chart, xs, upper, Keep::highest), thin_to_pixels(chart, xs, lower, Keep::lowest),
                   noise_color, "measured noise (± per point)");
    const auto line = thin_to_pixels(chart, xs, ys, Keep::both);
    const std::string series_title = fmt::format("{}: {} points", cliff_map_title(map), n);
    if (line.size() == 1) chart.point(line[0].first, line[0].second, series_color, series_title);
    if (line.size() >= 2) chart.line(line, series_color, series_title);

    // A marker spans the gap between the last point before the step and the first after it, at
    // least a few pixels wide so that its explanation can be hovered.
    const double units_per_px = (x.hi - x.lo) / (chart.x_px(x.hi) - chart.x_px(x.lo));
    constexpr double marker_px = 3, char_px = 6.4;
    LabelPlacer labels;
    std::vector<LegendEntry> legend{{map.figure.empty() ? std::string("series") : map.figure, series_color}};
    if (noisy) legend.push_back({"noise", noise_color});
    for (const auto& c : map.cliffs) {
        const double middle = (c.x_before + c.x_after) / 2;
        if (!std::isfinite(middle)) continue; // listed in the table, nowhere to draw
        const double half = std::max(std::fabs(c.x_after - c.x_before) / 2, marker_px / 2 * units_per_px);
        const auto verdicts = cliff_verdicts(map, c);
        const auto worst = worst_cliff_verdict(verdicts);
        std::string title = fmt::format("{} at {}: {}, {} — {}", cliff_label(c), cliff_position_text(map, c),
                                        cliff_levels_text(map, c), cliff_significance_text(c), c.explanation);
        for (const auto* v : verdicts)
            title += fmt::format(" [{}: {}]", verdict_label(v->judgement.verdict), v->judgement.message);
        chart.rect(middle - half, middle + half, y.lo, y.hi, cause_color(c.cause), "", title, true, 0.45);
        const std::string text = cliff_label(c);
        const bool failing = worst && verdict_fails(*worst, fail_on_improvement);
        const double px = chart.x_px(middle), width = static_cast<double>(text.size()) * char_px;
        // Labels open towards the middle of the plot, so those near the right edge stay inside it.
        const bool leftward = px > (chart.x_px(x.lo) + chart.x_px(x.hi)) / 2;
        const double from = leftward ? px - 4 - width : px + 4;
        const int row = labels.row_for(from, from + width, label_rows);
        if (row >= 0)
            chart.label(middle, y.hi, text, leftward ? "end" : "start",
                        failing ? "label strong cliff-failing" : "label strong", leftward ? -4 : 4, 12 + 13 * row);
        const char* name = cliff_cause_name(c.cause);
        if (std::none_of(legend.begin(), legend.end(), [&](const LegendEntry& e) { return e.text == name; }))
            legend.push_back({name, cause_color(c.cause)});
    }
    // A cliff of the baseline that this run no longer has: a dashed line where it was.
    for (const auto* v : vanished_cliffs(map)) {
        const double middle = (v->x_before + v->x_after) / 2;
        if (!std::isfinite(middle)) continue;
        chart.guide(middle, y.lo, middle, y.hi, color_good, true, 1.5);
        const std::string text =
            v->judgement.baseline ? "vanished, was " + cliff_depth_text(*v->judgement.baseline) : "vanished";
        const double px = chart.x_px(middle), width = static_cast<double>(text.size()) * char_px;
        const bool leftward = px > (chart.x_px(x.lo) + chart.x_px(x.hi)) / 2;
        const double from = leftward ? px - 4 - width : px + 4;
        const int row = labels.row_for(from, from + width, label_rows);
        if (row >= 0)
            chart.label(middle, y.hi, text, leftward ? "end" : "start", "label cliff-vanished", leftward ? -4 : 4,
                        12 + 13 * row);
    }
    chart.legend(std::move(legend));
    return chart.svg(cliff_map_title(map));
}

std::string cliff_map_card(const CliffMap& map, std::size_t index, bool fail_on_improvement)
{
    const std::size_t n = std::min(map.x.size(), map.values.size());
    const std::string note =
        fmt::format("{} points, {}; {}{}", format_number(static_cast<double>(n)), cliff_count_text(map.cliffs.size()),
                    has_noise(map) ? "shaded: the measured noise" : "an exact series",
                    map.cliffs.empty() ? "" : "; hover a marker for its explanation");
    std::string html =
        "<div class=\"card cliff-map\">" + figure_caption(cliff_map_title(map), note) + whole_map_verdicts(map);
    html += n == 0 ? std::string("<p class=\"empty\">No point of this axis was measured.</p>\n")
                   : cliff_map_chart(map, index, fail_on_improvement);
    return html + cliff_table(map) + "</div>\n";
}

} // namespace

std::string cliff_maps_section(const RunReport& report)
{
    if (report.cliff_maps.empty()) return {};
    std::string cards;
    for (std::size_t i = 0; i < report.cliff_maps.size(); ++i)
        cards += cliff_map_card(report.cliff_maps[i], i, report.fail_on_improvement);
    return "<section id=\"cliffs\">\n<h2>Cliff maps</h2>\n<p class=\"note\">Each scanned axis of a variant: the "
           "measured series, and every step along it marked where it happens with its cause (waves, tiles, "
           "alignment, occupancy or unexplained) and its depth, and what the comparison with the baseline said of "
           "it.</p>\n" +
           cards + "</section>\n";
}

} // namespace harness::report::html
