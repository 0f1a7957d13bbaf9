#include "harness/history/history_page.hxx"

#include "harness/core/stats.hxx"
#include "harness/report/html_parts.hxx"
#include "harness/report/html_text.hxx"
#include "harness/report/page_assets.hxx"
#include "harness/report/svg_chart.hxx"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <set>
#include <tuple>

namespace harness::history {

namespace fs = std::filesystem;
using report::format_number;
using report::html_escape;

namespace {

std::string short_commit(const std::string& commit)
{
    return commit.substr(0, 12);
}

/// Whether a move from `before` to `after` is worse, by the metric's direction.
bool is_worse(const std::string& metric, double before, double after)
{
    const auto info = find_metric(metric);
    if (!info || info->direction == Direction::neither) return false;
    return info->direction == Direction::lower_is_better ? after > before : after < before;
}

std::string value_text(const std::string& metric, double value)
{
    std::string unit = report::metric_unit(metric);
    // "1 block", not "1 blocks": a count's unit is a plural word.
    if (value == 1.0 && unit.size() > 2 && unit.back() == 's' &&
        std::all_of(unit.begin(), unit.end(), [](char c) { return c >= 'a' && c <= 'z'; }))
        unit.pop_back();
    return report::format_with_unit(value, unit);
}

/// A change as the page shows it: relative with `decimals` ("+12.50 %"), or, from 0, where a
/// relative change means nothing (0 -> 288 B is no "+0.00 %"), new and absolute: "new: +288 B".
std::string change_text(const std::string& metric, double before, double after, int decimals)
{
    if (before == 0.0)
        return after == 0.0 ? std::string("none")
                            : fmt::format("new: {}{}", after < 0 ? "-" : "+", value_text(metric, std::fabs(after)));
    return fmt::format("{:+.{}f} %", (after - before) / before * 100.0, decimals);
}

/// "tiled32 N=1024 [sm_90]": a series' case with the architecture it ran for.
std::string series_label(const Series& s)
{
    return fmt::format("{} [{}]", s.case_label(), s.arch);
}

/// `path` with every byte but letters, digits, "-._~" and '/' as %XX.
std::string percent_encoded(std::string_view path)
{
    std::string out;
    for (const char c : path) {
        const auto u = static_cast<unsigned char>(c);
        if (std::isalnum(u) != 0 || c == '-' || c == '.' || c == '_' || c == '~' || c == '/')
            out += c;
        else
            out += fmt::format("%{:02X}", static_cast<unsigned>(u));
    }
    return out;
}

/// A link to the run report of `results_path` (report.html beside it when there is one), relative
/// to the page.
std::string report_link(const std::string& results_path, const PageContext& context)
{
    if (results_path.empty()) return "";
    fs::path target = results_path;
    std::error_code ec;
    if (fs::is_regular_file(target.parent_path() / "report.html", ec)) target = target.parent_path() / "report.html";
    const fs::path from = fs::absolute(context.output, ec).parent_path();
    fs::path href = fs::absolute(target, ec).lexically_relative(from);
    // A path, never a URL: a relative one starts with "./" or "../" so that a first segment such as
    // "javascript:alert(1)" (a folder a run was recorded from) is no scheme, and an absolute one is
    // a file: URL. Every byte but the unreserved ones and '/' is percent-encoded.
    std::string link;
    if (href.empty()) {
        link = "file://" + percent_encoded(fs::absolute(target, ec).generic_string());
    } else {
        link = percent_encoded(href.generic_string());
        if (!link.starts_with("../")) link = "./" + link;
    }
    return fmt::format("<a href=\"{}\">{}</a>", html_escape(link), html_escape(target.filename().string()));
}

struct Move {
    const Series* series;
    const ChangePoint* change;
};

/// The most commits whose hashes name the x axis of a chart: more would overlap.
constexpr std::size_t max_named_commits = 16;

std::string series_anchor(std::size_t index)
{
    return fmt::format("series-{}", index);
}

std::string commit_range(const SuiteHistory& h, const Series& s, std::size_t index)
{
    const auto& before = h.commits[s.points[index - 1].commit];
    const auto& after = h.commits[s.points[index].commit];
    return fmt::format("<code>{}</code>..<code>{}</code><br><span class=\"unit\">{} .. {}</span>",
                       html_escape(short_commit(before.commit)), html_escape(short_commit(after.commit)),
                       html_escape(before.date.substr(0, 10)), html_escape(after.date.substr(0, 10)));
}

/// The params text without the parameter `name` ("N=1024 W=512" less W: "N=1024").
std::string params_without(const std::string& params, const std::string& name)
{
    std::string out;
    std::size_t at = 0;
    while (at < params.size()) {
        std::size_t end = params.find(' ', at);
        if (end == std::string::npos) end = params.size();
        const std::string part = params.substr(at, end - at);
        if (!part.starts_with(name + "=")) out += (out.empty() ? "" : " ") + part;
        at = end + 1;
    }
    return out;
}

/// The parameter whose value differs between the params texts of `moves` while every other one is
/// the same (a scanned axis, or any swept parameter); "" where there is none.
std::string varying_parameter(const std::vector<Move>& moves)
{
    if (moves.size() < 2) return "";
    const std::string& first = moves.front().series->params;
    std::size_t at = 0;
    while (at < first.size()) {
        std::size_t end = first.find(' ', at);
        if (end == std::string::npos) end = first.size();
        const std::string part = first.substr(at, end - at);
        const std::string name = part.substr(0, part.find('='));
        const std::string rest = params_without(first, name);
        if (!name.empty() && std::all_of(moves.begin(), moves.end(),
                                         [&](const Move& m) { return params_without(m.series->params, name) == rest; }))
            return name;
        at = end + 1;
    }
    return "";
}

/// The change points by commit, newest first; at each commit what got worse first, biggest moves
/// first. Moves of one variant, figure and machine at one commit that differ only in one
/// parameter (the points of a scanned axis) are one row: a map that moved, not one row per point.
std::string change_rows(const SuiteHistory& h, std::vector<Move> moves,
                        const std::map<const Series*, std::size_t>& index, const PageContext& context)
{
    const auto commit_of = [](const Move& m) { return m.series->points[m.change->index].commit; };
    std::stable_sort(moves.begin(), moves.end(), [&](const Move& a, const Move& b) {
        const bool worse_a = is_worse(a.series->metric, a.change->before, a.change->after);
        const bool worse_b = is_worse(b.series->metric, b.change->before, b.change->after);
        return std::tuple(commit_of(a), worse_a, std::fabs(a.change->relative())) >
               std::tuple(commit_of(b), worse_b, std::fabs(b.change->relative()));
    });
    std::string rows;
    std::size_t k = 0;
    while (k < moves.size()) {
        const std::size_t commit = commit_of(moves[k]);
        std::size_t end = k;
        while (end < moves.size() && commit_of(moves[end]) == commit) ++end;
        const std::size_t worse = static_cast<std::size_t>(std::count_if(
            moves.begin() + static_cast<std::ptrdiff_t>(k), moves.begin() + static_cast<std::ptrdiff_t>(end),
            [](const Move& m) { return is_worse(m.series->metric, m.change->before, m.change->after); }));
        const auto& entry = h.commits[commit];
        rows += fmt::format("<tr class=\"commit\"><th colspan=\"8\"><code>{}</code> <span class=\"unit\">{}</span>: "
                            "{} {} moved, {} worse</th></tr>\n",
                            html_escape(short_commit(entry.commit)), html_escape(entry.date.substr(0, 10)), end - k,
                            end - k == 1 ? "figure" : "figures", worse);
        // Group this commit's moves by variant, arch, machine, metric and direction.
        std::map<std::tuple<std::string, std::string, std::string, std::string, bool>, std::vector<Move>> groups;
        std::vector<std::tuple<std::string, std::string, std::string, std::string, bool>> order;
        for (std::size_t i = k; i < end; ++i) {
            const Series* s = moves[i].series;
            const auto key = std::tuple(s->variant, s->arch, s->machine, s->metric,
                                        is_worse(s->metric, moves[i].change->before, moves[i].change->after));
            if (!groups.contains(key)) order.push_back(key);
            groups[key].push_back(moves[i]);
        }
        for (const auto& key : order) {
            const auto& group = groups[key];
            const std::string axis = group.size() >= 3 ? varying_parameter(group) : "";
            const std::vector<Move> shown = axis.empty() ? group : std::vector<Move>{group.front()};
            for (const auto& [s, c] : shown) {
                const bool is_bad = is_worse(s->metric, c->before, c->after);
                const double pct = c->relative() * 100.0;
                std::string label = html_escape(series_label(*s));
                std::string change = change_text(s->metric, c->before, c->after, 2);
                std::string before = value_text(s->metric, c->before), after = value_text(s->metric, c->after);
                if (!axis.empty()) {
                    // A map: the points of the axis that moved, and the median move among them: relative,
                    // or absolute where a point moved from 0 (no relative change to take the median of).
                    std::vector<double> changes, absolute;
                    std::size_t from_zero = 0;
                    for (const auto& m : group) {
                        changes.push_back(m.change->relative() * 100.0);
                        absolute.push_back(m.change->after - m.change->before);
                        if (m.change->before == 0.0) ++from_zero;
                    }
                    label = html_escape(fmt::format(
                        "{} {}=* [{}]", s->variant,
                        params_without(s->params, axis).empty() ? axis : params_without(s->params, axis) + " " + axis,
                        s->arch));
                    label += fmt::format(" <span class=\"unit\">{} points of {} moved</span>", group.size(),
                                         html_escape(axis));
                    const double moved = median(absolute);
                    change = from_zero > 0 ? fmt::format("{}{} (median, from 0 at {} points)", moved < 0 ? "-" : "+",
                                                         value_text(s->metric, std::fabs(moved)), from_zero)
                                           : fmt::format("{:+.2f} % (median)", median(changes));
                    before = "";
                    after = "";
                }
                const std::string size = s->stability == Stability::exact
                                             ? std::string("exact")
                                             : fmt::format("{:.1f} × noise ({} per commit)", c->noise_units,
                                                           value_text(s->metric, s->analysis.noise));
                rows += fmt::format(
                    "<tr class=\"{}\"><td><a href=\"#{}\">{}</a>{}</td><td class=\"metric\">{}</td><td>{}</td>"
                    "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num change\" "
                    "data-value=\"{}\">{}</td><td>{}</td><td>{}</td></tr>\n",
                    is_bad ? "worse" : "better", series_anchor(index.at(s)), label,
                    s->machine.empty() ? "" : fmt::format(" <span class=\"tag\">{}</span>", html_escape(s->machine)),
                    html_escape(s->metric), commit_range(h, *s, c->index), html_escape(before), html_escape(after),
                    c->before == 0.0 ? 1e300 : std::fabs(pct), html_escape(change), html_escape(size),
                    report_link(s->points[c->index].results_path, context));
            }
        }
        k = end;
    }
    return rows;
}

std::string chart(const SuiteHistory& h, const Series& s, std::size_t index)
{
    std::vector<double> values;
    for (const auto& p : s.points) values.push_back(p.value);
    const double n = static_cast<double>(s.points.size());
    // The commits themselves on the x axis where they fit; their order where there are too many
    // to name. The y axis says the unit only: the figure is in the title, and a long name was clipped.
    report::Axis x{"commit (oldest first)", report::Scale::linear, -0.5, std::max(n - 0.5, 0.5), {}, ""};
    if (s.points.size() <= max_named_commits) {
        std::vector<std::string> names;
        for (const auto& p : s.points) names.push_back(h.commits[p.commit].commit.substr(0, 7));
        x = report::category_axis("commit (oldest first)", std::move(names));
    }
    report::Axis y = report::fit_axis(report::metric_unit(s.metric), values, 0.0);
    report::SvgChart c(series_anchor(index), 560, 220, x, y);
    std::vector<std::pair<double, double>> line;
    for (std::size_t i = 0; i < s.points.size(); ++i) line.emplace_back(static_cast<double>(i), s.points[i].value);
    c.line(line, report::html::variant_palette[0], s.case_label());
    // Levels of the segments between change points, and the change points themselves.
    std::size_t begin = 0;
    for (std::size_t k = 0; k <= s.analysis.change_points.size(); ++k) {
        const std::size_t end = k < s.analysis.change_points.size() ? s.analysis.change_points[k].index : values.size();
        double level = 0.0;
        for (std::size_t i = begin; i < end; ++i) level += values[i];
        level /= static_cast<double>(std::max<std::size_t>(end - begin, 1));
        c.guide(static_cast<double>(begin) - 0.4, level, static_cast<double>(end) - 0.6, level,
                report::html::color_neutral, true);
        begin = end;
    }
    for (const auto& cp : s.analysis.change_points) {
        const bool worse = is_worse(s.metric, cp.before, cp.after);
        const char* color = worse ? report::html::color_bad : report::html::color_good;
        c.guide(static_cast<double>(cp.index) - 0.5, y.lo, static_cast<double>(cp.index) - 0.5, y.hi, color, false, 2);
        c.label(static_cast<double>(cp.index) - 0.5, y.hi, change_text(s.metric, cp.before, cp.after, 1), "middle",
                "label strong", 0, 10);
    }
    if (const auto& cr = s.analysis.creep) {
        const double first = static_cast<double>(cr->first);
        const double last = static_cast<double>(cr->first + cr->window - 1);
        c.guide(first, cr->start_level, last, cr->start_level + cr->total, report::html::color_waived, true, 2);
    }
    for (std::size_t i = 0; i < s.points.size(); ++i) {
        const auto& p = s.points[i];
        const auto& commit = h.commits[p.commit];
        c.point(static_cast<double>(i), p.value, report::html::variant_palette[0],
                fmt::format("{} {}: {}{}", short_commit(commit.commit), commit.date.substr(0, 10),
                            value_text(s.metric, p.value),
                            p.runs > 1 ? fmt::format(" (median of {} runs)", p.runs) : ""),
                !commit.on_branch, 3.0);
    }
    const std::string title =
        fmt::format("{} — {}{}", series_label(s), s.metric, s.machine.empty() ? "" : " on " + s.machine);
    return fmt::format("<div class=\"card\" id=\"{}\">{}{}</div>\n", series_anchor(index),
                       report::html::figure_caption(title, s.stability == Stability::exact
                                                               ? "exact: every step is a change"
                                                               : fmt::format("noisy: noise {} per commit",
                                                                             value_text(s.metric, s.analysis.noise))),
                       c.svg(title));
}

} // namespace

std::string history_page(const SuiteHistory& h, const PageContext& context)
{
    std::map<const Series*, std::size_t> index;
    std::vector<Move> moves;
    std::vector<const Series*> creeps;
    std::set<std::string> machines;
    for (std::size_t i = 0; i < h.series.size(); ++i) {
        const Series& s = h.series[i];
        index[&s] = i;
        if (!s.machine.empty()) machines.insert(s.machine);
        for (const auto& c : s.analysis.change_points) moves.push_back({&s, &c});
        if (s.analysis.creep) creeps.push_back(&s);
    }
    const std::size_t off_branch = static_cast<std::size_t>(
        std::count_if(h.commits.begin(), h.commits.end(), [](const auto& c) { return !c.on_branch; }));

    std::string body = fmt::format(
        "<header class=\"run{}\">\n<h1>{} — history</h1>\n<dl class=\"facts\"><div><dt>runs</dt><dd>{}</dd></div>"
        "<div><dt>commits</dt><dd>{}</dd></div><div><dt>series</dt><dd>{}</dd></div><div><dt>GPU models</dt>"
        "<dd>{}</dd></div><div><dt>change points</dt><dd>{}</dd></div><div><dt>creeps</dt><dd>{}</dd></div></dl>\n"
        "<p class=\"note\">Commits in {}{}.</p>\n</header>\n",
        moves.empty() && creeps.empty() ? "" : " bad", html_escape(h.suite), h.runs, h.commits.size(), h.series.size(),
        machines.empty() ? std::string("none (static tier)")
                         : html_escape(fmt::format("{}", fmt::join(machines, ", "))),
        moves.size(), creeps.size(), html_escape(context.order_note),
        off_branch ? fmt::format("; {} not on it follow, by date (hollow points)", off_branch) : "");

    body += "<h2>Change points, by commit</h2>\n";
    if (moves.empty())
        body += "<p class=\"empty\">No series moved.</p>\n";
    else
        body += "<div class=\"scroll\"><table class=\"findings history\">\n<thead>" +
                report::html::header_row(
                    {"case", "metric", "commits", "before", "after", "change", "size against noise", "run report"}) +
                "</thead>\n<tbody>\n" + change_rows(h, moves, index, context) + "</tbody></table></div>\n";

    body += "<h2>Creep</h2>\n";
    if (creeps.empty())
        body += "<p class=\"empty\">No drift over the last commits that no single step explains.</p>\n";
    else {
        body += "<div class=\"scroll\"><table class=\"findings history\">\n<thead>" +
                report::html::header_row({"case", "metric", "commits", "drift", "Mann–Kendall z", "against noise"}) +
                "</thead>\n<tbody>\n";
        for (const Series* s : creeps) {
            const Creep& c = *s->analysis.creep;
            const auto& first = h.commits[s->points[c.first].commit];
            const auto& last = h.commits[s->points[c.first + c.window - 1].commit];
            body += fmt::format("<tr><td><a href=\"#{}\">{}</a></td><td class=\"metric\">{}</td><td><code>{}</code>.."
                                "<code>{}</code> ({} commits)</td><td class=\"num change\">{:+.2f} %</td>"
                                "<td class=\"num\">{:.2f}</td><td class=\"num\">{:.1f} × noise</td></tr>\n",
                                series_anchor(index[s]), html_escape(series_label(*s)), html_escape(s->metric),
                                html_escape(short_commit(first.commit)), html_escape(short_commit(last.commit)),
                                c.window, c.relative() * 100.0, c.mann_kendall_z, c.noise_units);
        }
        body += "</tbody></table></div>\n";
    }

    // Charts: every series that moved, then every case's time, up to max_page_charts.
    std::vector<std::size_t> charted;
    std::set<std::size_t> chosen;
    for (const auto& m : moves)
        if (chosen.insert(index[m.series]).second) charted.push_back(index[m.series]);
    for (const Series* s : creeps)
        if (chosen.insert(index[s]).second) charted.push_back(index[s]);
    for (std::size_t i = 0; i < h.series.size(); ++i)
        if (h.series[i].metric == metric::time_median && chosen.insert(i).second) charted.push_back(i);
    body += "<h2>Series</h2>\n";
    if (charted.size() > max_page_charts)
        body += fmt::format("<p class=\"note\">The first {} of {} charts: series that moved, then time.</p>\n",
                            max_page_charts, charted.size());
    body += "<div class=\"grid\">\n";
    for (std::size_t k = 0; k < charted.size() && k < max_page_charts; ++k)
        body += chart(h, h.series[charted[k]], charted[k]);
    body += "</div>\n";
    body += "<footer><ul><li>Exact figures (counters, resources) repeat for a fixed kernel: every step is a "
            "change point.</li><li>Noisy figures (time, DRAM bytes, achieved occupancy): PELT segmentation under "
            "a Gaussian change-in-mean cost, the noise being the larger of the runs' measured spread and the "
            "series' own spread between neighbouring commits; a change needs two commits on each side.</li>"
            "<li>Creep: over the last 10 commits, a Mann–Kendall trend with a Theil–Sen drift of at least 4 × "
            "noise that a straight line fits better than any single step.</li></ul></footer>\n";
    return fmt::format("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                       "<title>{} — history</title>\n<style>{}</style>\n<script>{}</script>\n</head>\n"
                       "<body data-report-status=\"loading\">\n<main>\n{}</main>\n</body>\n</html>\n",
                       html_escape(h.suite), report::page_style, report::page_script, body);
}

} // namespace harness::history
