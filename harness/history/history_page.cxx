#include "harness/history/history_page.hxx"

#include "harness/report/html_parts.hxx"
#include "harness/report/html_text.hxx"
#include "harness/report/page_assets.hxx"
#include "harness/report/svg_chart.hxx"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <set>

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
    return report::format_with_unit(value, report::metric_unit(metric));
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
    if (href.empty()) href = target;
    return fmt::format("<a href=\"{}\">{}</a>", html_escape(href.generic_string()),
                       html_escape(target.filename().string()));
}

struct Move {
    const Series* series;
    const ChangePoint* change;
};

std::string series_anchor(std::size_t index)
{
    return fmt::format("series-{}", index);
}

std::string commit_range(const SuiteHistory& h, const Series& s, std::size_t index)
{
    const auto& before = h.commits[s.points[index - 1].commit];
    const auto& after = h.commits[s.points[index].commit];
    return fmt::format("<code>{}</code>..<code>{}</code><span class=\"unit\">{} .. {}</span>",
                       html_escape(short_commit(before.commit)), html_escape(short_commit(after.commit)),
                       html_escape(before.date.substr(0, 10)), html_escape(after.date.substr(0, 10)));
}

std::string change_rows(const SuiteHistory& h, const std::vector<Move>& moves,
                        const std::map<const Series*, std::size_t>& index, const PageContext& context)
{
    std::string rows;
    for (const auto& [s, c] : moves) {
        const bool worse = is_worse(s->metric, c->before, c->after);
        const double pct = c->relative() * 100.0;
        const std::string size = s->stability == Stability::exact
                                     ? std::string("exact")
                                     : fmt::format("{:.1f} × noise ({} per commit)", c->noise_units,
                                                   value_text(s->metric, s->analysis.noise));
        rows += fmt::format(
            "<tr class=\"{}\"><td><a href=\"#{}\">{}</a>{}</td><td class=\"metric\">{}</td><td>{}</td>"
            "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num change\" data-value=\"{}\">{}</td>"
            "<td>{}</td><td>{}</td></tr>\n",
            worse ? "worse" : "better", series_anchor(index.at(s)), html_escape(s->case_label()),
            s->machine.empty() ? "" : fmt::format(" <span class=\"tag\">{}</span>", html_escape(s->machine)),
            html_escape(s->metric), commit_range(h, *s, c->index), html_escape(value_text(s->metric, c->before)),
            html_escape(value_text(s->metric, c->after)), c->before == 0.0 ? 1e300 : std::fabs(pct),
            // A figure that was 0 (excess wavefronts of a conflict-free kernel) has no percentage.
            c->before == 0.0 ? std::string("from 0") : fmt::format("{:+.2f} %", pct), html_escape(size),
            report_link(s->points[c->index].results_path, context));
    }
    return rows;
}

std::string chart(const SuiteHistory& h, const Series& s, std::size_t index)
{
    std::vector<double> values;
    for (const auto& p : s.points) values.push_back(p.value);
    const double n = static_cast<double>(s.points.size());
    report::Axis x{"commit (oldest first)", report::Scale::linear, -0.5, std::max(n - 0.5, 0.5), {}, ""};
    report::Axis y = report::fit_axis(fmt::format("{} ({})", s.metric, report::metric_unit(s.metric)), values, 0.0);
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
        c.label(static_cast<double>(cp.index) - 0.5, y.hi, fmt::format("{:+.1f}%", cp.relative() * 100.0), "middle",
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
        fmt::format("{} — {}{}", s.case_label(), s.metric, s.machine.empty() ? "" : " on " + s.machine);
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
    // Biggest moves first.
    std::stable_sort(moves.begin(), moves.end(), [](const Move& a, const Move& b) {
        return std::fabs(a.change->relative()) > std::fabs(b.change->relative());
    });
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

    body += "<h2>Change points</h2>\n";
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
                                series_anchor(index[s]), html_escape(s->case_label()), html_escape(s->metric),
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
