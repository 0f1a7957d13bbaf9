// report.html: what a reviewer opens from the CI artifacts. Most important first: the verdict of
// the run, what regressed (metric, baseline, now, change, tolerance, source line), failures,
// improvements, the source lines behind excess traffic, then charts and every case.
//
// Charts are SVG written here rather than drawn by a script from embedded JSON: the page then reads
// fully where an artifact viewer blocks scripts, the unit tests can check marks in the HTML text,
// and no data needs escaping into JavaScript. The one embedded script only sorts tables and records
// in the DOM whether the page rendered cleanly (the browser test reads that).

#include "harness/core/metrics.hxx"
#include "harness/report/html_parts.hxx"
#include "harness/report/html_text.hxx"
#include "harness/report/page_assets.hxx"
#include "harness/report/reporters.hxx"
#include "harness/report/sparkline.hxx"
#include "harness/report/svg_chart.hxx"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fmt/format.h>
#include <map>
#include <numbers>
#include <optional>
#include <set>

namespace harness::report {

using namespace html;

namespace {
std::string anchor_id(std::string_view prefix, std::size_t index)
{
    return fmt::format("{}-{}", prefix, index);
}

/// A verdict and the case it belongs to.
struct Finding {
    const CaseResult* result;
    const MetricVerdict* verdict;
};

std::vector<Finding> findings(const RunReport& report, std::initializer_list<Verdict> kinds)
{
    std::vector<Finding> out;
    for (const auto& r : report.results)
        for (const auto& v : r.verdicts)
            if (std::find(kinds.begin(), kinds.end(), v.verdict) != kinds.end()) out.push_back({&r, &v});
    // Largest relative change first; expect rules (no baseline) lead.
    std::stable_sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) {
        const double ca = std::fabs(change_percent(*a.verdict).value_or(INFINITY));
        const double cb = std::fabs(change_percent(*b.verdict).value_or(INFINITY));
        return ca > cb;
    });
    return out;
}

/// "file:line" of every hotspot, to link a regression's source line to its snippet.
std::map<std::string, std::string> hotspot_anchors(const RunReport& report)
{
    std::map<std::string, std::string> anchors;
    std::size_t n = 0;
    for (const auto& r : report.results)
        for (const auto& h : r.hotspots)
            anchors.try_emplace(fmt::format("{}:{}", h.file, h.line), anchor_id("hotspot", n++));
    return anchors;
}

// ---------------------------------------------------------------------------------------------- header

std::string header_section(const RunReport& report, const Totals& t)
{
    const bool bad = t.failing();
    std::vector<std::string> problems;
    if (t.regressed) problems.push_back(fmt::format("{} regressed", t.regressed));
    if (t.not_gated) problems.push_back(fmt::format("{} not gated", t.not_gated));
    if (t.removed_failing)
        problems.push_back(fmt::format("{} removed from the suite, still in the baseline", t.removed_failing));
    if (t.failed) problems.push_back(fmt::format("{} failed", t.failed));
    std::string headline;
    if (bad) {
        headline = "";
        for (std::size_t i = 0; i < problems.size(); ++i) headline += (i ? ", " : "") + problems[i];
        headline += fmt::format(" of {} cases", report.results.size());
    } else {
        headline = fmt::format("{} of {} cases passed", t.passed, report.results.size());
    }

    const auto fact = [](std::string_view name, std::string_view value) {
        return value.empty() ? std::string()
                             : fmt::format("<div><dt>{}</dt><dd>{}</dd></div>", name, html_escape(value));
    };
    std::string gpu = report.device_name.empty() ? "none (static tier)" : report.device_name;
    if (!report.device_name.empty() && report.sm_count > 0) gpu += fmt::format(" · {} SMs", report.sm_count);
    std::string facts =
        fact("GPU", gpu) + fact("arch", report.arch) + fact("driver", report.driver_version) +
        fact("CUDA", report.cuda_version) + fact("git", report.git_revision) + fact("date", report.timestamp) +
        fact("mode", report.mode == RunMode::static_tier ? "static (compiled, not run)" : mode_name(report.mode)) +
        fact("suite file", report.suite_file);

    const auto count = [](std::size_t n, std::string_view what, std::string_view css) {
        return fmt::format("<span class=\"count {}{}\"><b>{}</b> {}</span>", css, n ? "" : " zero", n, what);
    };
    return fmt::format(
        "<header class=\"run {status}\">\n<div class=\"banner\"><span class=\"state\">{state}</span> "
        "<span class=\"headline\">{headline}</span></div>\n"
        "<h1>{suite}</h1>\n<dl class=\"facts\">{facts}</dl>\n<div class=\"counts\">{counts}</div>\n"
        "<p class=\"gated\">{gated}</p>\n</header>\n",
        fmt::arg("status", bad ? "bad" : "good"),
        fmt::arg("state", bad ? (t.regressed   ? "REGRESSED"
                                 : t.failed    ? "FAILED"
                                 : t.not_gated ? "NOT GATED"
                                               : "REMOVED")
                              : "PASSED"),
        fmt::arg("headline", html_escape(headline)), fmt::arg("suite", html_escape(report.suite)),
        fmt::arg("facts", facts), fmt::arg("gated", html_escape("Gated: " + gate_counts_text(gate_counts(report)))),
        fmt::arg(
            "counts",
            count(t.passed, "passed", "passed") + count(t.regressed, "regressed", "regressed") +
                count(t.not_gated, "not gated", "regressed") + count(t.improved, "improved", "improved") +
                count(t.failed, "failed", "failed") + count(t.waived, "waived", "waived") +
                count(t.skipped, "skipped", "skipped") +
                (t.removed ? count(t.removed, "removed", t.removed_failing ? "regressed" : "skipped") : std::string()) +
                (t.unchanged ? count(t.unchanged, "of them unchanged (SASS identical)", "skipped") : std::string())));
}

// ---------------------------------------------------------------------------------------------- tables

/// The figure's recent history on the default branch, as a sparkline after its message.
std::string recent_history(const MetricVerdict& v, const std::string& unit)
{
    if (v.recent.empty()) return {};
    return fmt::format(" <span class=\"recent\">last {} commits {}</span>", v.recent.size(),
                       svg_sparkline(v.recent, v.value, unit, verdict_color(v.verdict)));
}

/// The case's SASS diff against its baseline's, collapsed, under the verdict it is shown with:
/// the first failing verdict of the SASS gate, else the case's first failing verdict.
std::string sass_diff_details(const CaseResult& r, const MetricVerdict& v)
{
    if (r.sass_diff.empty() || !verdict_fails(v.verdict)) return {};
    const MetricVerdict* shown = nullptr;
    for (const bool sass_rule : {true, false})
        for (const auto& c : r.verdicts)
            if (!shown && verdict_fails(c.verdict) && (c.rule == "sass") == sass_rule) shown = &c;
    if (shown != &v) return {};
    constexpr std::size_t max_lines = 400;
    std::string body;
    std::size_t lines = 0, hunks = 0, total = 0;
    for (std::size_t at = 0; at < r.sass_diff.size();) {
        const auto end = std::min(r.sass_diff.find('\n', at), r.sass_diff.size());
        const std::string_view line = std::string_view(r.sass_diff).substr(at, end - at);
        at = end + 1;
        ++total;
        if (line.starts_with("@@")) ++hunks;
        if (lines >= max_lines) continue;
        ++lines;
        // Styled in place: a page without a diff stays as it was.
        const char* css = line.starts_with("@@")  ? "hunk"
                          : line.starts_with('-') ? "del"
                          : line.starts_with('+') ? "ins"
                                                  : "";
        const char* color = line.starts_with("@@") ? "muted" : line.starts_with('-') ? "bad" : "good";
        body += *css ? fmt::format("<span class=\"{}\" style=\"color: var(--{})\">{}</span>\n", css, color,
                                   html_escape(line))
                     : html_escape(line) + "\n";
    }
    if (total > lines) body += html_escape(fmt::format("... {} more lines in sass_diff.txt\n", total - lines));
    return fmt::format(
        "<details class=\"sass-diff\" style=\"margin-top: 4px\"><summary style=\"cursor: pointer; "
        "color: var(--muted)\">SASS against the baseline's: {} changed source lines</summary><pre "
        "style=\"margin: 4px 0 0; font-size: 12px; max-height: 480px; overflow: auto\">{}</pre></details>",
        hunks, body);
}

std::string verdict_table(const std::vector<Finding>& rows, const std::map<std::string, std::string>& anchors,
                          std::string_view table_class)
{
    // One <tbody> per finding: the figures, then what changed on a line of its own (the sorting
    // script moves the pair together).
    std::string html = fmt::format("<table class=\"sortable {}\">", table_class) +
                       header_row({"case", "arch", "metric", "baseline", "now", "change", "tolerance", "source"}) +
                       "\n";
    for (const auto& [r, v] : rows) {
        const std::string unit = metric_unit(v->metric);
        const auto pct = change_percent(*v);
        std::string source = "–";
        if (!v->location.empty()) {
            const auto anchor = anchors.find(v->location);
            source = anchor == anchors.end()
                         ? fmt::format("<code>{}</code>", html_escape(v->location))
                         : fmt::format("<a href=\"#{}\"><code>{}</code></a>", anchor->second, html_escape(v->location));
        }
        html += fmt::format(
            "<tbody class=\"v-{}\"><tr>{}{}<td><span class=\"metric\">{}</span>{}</td>{}{}{}{}<td>{}</td></tr>\n"
            "<tr class=\"detail\"><td></td><td colspan=\"7\">{}</td></tr></tbody>\n",
            verdict_name(v->verdict), text_cell(case_label(*r)), text_cell(r->arch), html_escape(v->metric),
            v->verdict == Verdict::regressed ? ""
                                             : fmt::format(" <span class=\"tag\">{}</span>", verdict_label(v->verdict)),
            number_cell(v->baseline, value_text(v->baseline, unit)),
            number_cell(v->value, value_text(v->value, unit), "num now"),
            number_cell(pct, change_text(*v, unit), "num change"), text_cell(v->rule.empty() ? "–" : v->rule), source,
            html_escape(v->message) + recent_history(*v, unit) + sass_diff_details(*r, *v));
    }
    return html + "</table>\n";
}

std::string regressions_section(const RunReport& report, const std::map<std::string, std::string>& anchors)
{
    const auto failing = report.fail_on_improvement
                             ? findings(report, {Verdict::expect_failed, Verdict::regressed, Verdict::improved})
                             : findings(report, {Verdict::expect_failed, Verdict::regressed});
    const auto waived = findings(report, {Verdict::waived});
    std::size_t compared = 0;
    for (const auto& r : report.results) compared += r.verdicts.size();

    std::string html = "<section id=\"regressions\">\n<h2>Regressions</h2>\n";
    if (compared == 0) {
        html += "<p class=\"empty\">Nothing was compared: this run has no verdicts (no baseline file and no "
                "<code>expect:</code> rules applied).</p>\n";
    } else if (failing.empty()) {
        html += fmt::format("<p class=\"ok-note\">No metric regressed ({} comparisons).</p>\n", compared);
    } else {
        html += verdict_table(failing, anchors, "findings regressions");
    }
    if (!waived.empty()) {
        html += "<h3>Waived</h3>\n<p class=\"note\">Regressed, but a current waiver names them; they do not fail "
                "the run.</p>\n";
        html += verdict_table(waived, anchors, "findings waived");
    }
    return html + "</section>\n";
}

std::string failures_section(const RunReport& report)
{
    std::string rows;
    for (const auto& r : report.results) {
        if (!case_status_fails(r.status)) continue;
        rows += fmt::format("<tr>{}{}{}{}<td><pre class=\"message\">{}</pre></td></tr>\n", text_cell(r.variant),
                            text_cell(r.params_text), text_cell(r.arch),
                            text_cell(case_status_name(r.status), "status-failed"), html_escape(r.message));
    }
    if (rows.empty()) return {};
    return "<section id=\"failures\">\n<h2>Failed cases</h2>\n<table class=\"sortable failures\">" +
           header_row({"variant", "params", "arch", "status", "message"}) + "<tbody>\n" + rows +
           "</tbody></table>\n</section>\n";
}

/// Up to this many improvements are listed open; more are folded under a summary by metric.
constexpr std::size_t improvements_shown_open = 5;

std::string improvements_section(const RunReport& report, const std::map<std::string, std::string>& anchors)
{
    const auto improved = findings(report, {Verdict::improved});
    if (improved.empty() || report.fail_on_improvement) return {}; // then they are listed as regressions
    const bool regressions = has_regressions(report);
    std::string html = "<section id=\"improvements\">\n<h2>Improvements</h2>\n<p class=\"note\">Better than the "
                       "baseline beyond tolerance: " +
                       std::string(regressions ? "not to be recorded while the run has regressions (a gain that came "
                                                 "with a regression is its side; each row says why).</p>\n"
                                               : "the baseline is stale; refresh it to lock the gain in.</p>\n");
    const std::string table = verdict_table(improved, anchors, "findings improvements");
    if (improved.size() <= improvements_shown_open) return html + table + "</section>\n";
    // A stale baseline can improve dozens of figures at once: say which metrics, and keep the
    // table folded so the hotspots and charts stay near the top.
    std::map<std::string, std::size_t> by_metric;
    for (const auto& f : improved) ++by_metric[f.verdict->metric];
    std::vector<std::pair<std::string, std::size_t>> counts(by_metric.begin(), by_metric.end());
    std::stable_sort(counts.begin(), counts.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    std::string metrics;
    for (const auto& [metric, n] : counts) metrics += fmt::format("{}{} ({})", metrics.empty() ? "" : ", ", metric, n);
    return html +
           fmt::format("<details class=\"improvements\"><summary>{} improved figures: {}</summary>\n", improved.size(),
                       html_escape(metrics)) +
           table + "</details>\n</section>\n";
}

// ---------------------------------------------------------------------------------------------- hotspots

std::string hotspots_section(const RunReport& report)
{
    std::string html;
    std::size_t n = 0;
    for (const auto& r : report.results)
        for (const auto& h : r.hotspots) {
            const std::string unit = metric_unit(h.metric);
            const std::string id = anchor_id("hotspot", n++);
            std::string figures = fmt::format("<span>{}: <b>{}</b></span>", html_escape(h.metric),
                                              html_escape(format_with_unit(h.excess, unit)));
            if (h.ideal > 0)
                figures += fmt::format(
                    "<span>actual {} vs ideal {} ({}× ideal)</span>", html_escape(format_with_unit(h.actual, unit)),
                    html_escape(format_with_unit(h.ideal, unit)), html_escape(format_number(h.actual / h.ideal)));
            std::string code;
            for (std::size_t i = 0; i < h.snippet.size(); ++i) {
                const long long line = static_cast<long long>(h.snippet_first_line) + static_cast<long long>(i);
                code += fmt::format("<span class=\"line{}\"><span class=\"ln\">{}</span>{}</span>\n",
                                    line == h.line ? " hot" : "", line, html_escape(h.snippet[i]));
            }
            html += fmt::format(
                "<article class=\"hotspot\" id=\"{}\">\n<div class=\"where\"><code>{}:{}</code> <span "
                "class=\"tag\">{}</span> <span class=\"kernel\">{}</span> <span class=\"case\">{}</span></div>\n"
                "<div class=\"figures\">{}</div>\n{}</article>\n",
                id, html_escape(h.file), h.line, html_escape(h.access), html_escape(h.kernel),
                html_escape(case_label(r)), figures,
                code.empty() ? std::string("<p class=\"note\">No source text was recorded for this line.</p>")
                             : "<pre class=\"code\">" + code + "</pre>");
        }
    if (html.empty()) return {};
    return "<section id=\"hotspots\">\n<h2>Source hotspots</h2>\n<p class=\"note\">Lines whose accesses need more "
           "sectors or wavefronts than an ideal pattern (SASS metrics, exact per instruction), largest first.</p>\n" +
           html + "</section>\n";
}

// ---------------------------------------------------------------------------------------------- all cases

std::string cases_section(const RunReport& report)
{
    // The table's columns are the metric table's (MetricRoles::html): only those some case has a
    // figure for; spills and local memory only where they occur.
    std::vector<MetricInfo> columns;
    for (const auto& c : report_metrics(&MetricRoles::html)) {
        if (std::any_of(report.results.begin(), report.results.end(), [&](const CaseResult& r) {
                const auto v = shown_figure(r, c, c.roles.html);
                return v && (!c.roles.html.only_when_nonzero || *v != 0);
            }))
            columns.push_back(c);
    }
    std::string head = "<thead><tr><th>variant</th><th>params</th><th>arch</th><th>status</th><th>verdict</th>";
    for (const auto& c : columns)
        head += fmt::format("<th>{}<span class=\"unit\">{}</span></th>", c.roles.html.label,
                            html_escape(display_unit(metric_unit(c.name))));
    head += "<th>limiter</th><th>note</th></tr></thead>";
    std::string rows;
    for (const auto& r : report.results) {
        const auto worst = worst_verdict(r);
        rows += fmt::format(
            "<tr>{}{}{}{}{}", text_cell(r.variant), text_cell(r.params_text), text_cell(r.arch),
            text_cell(case_status_name(r.status), case_status_fails(r.status) ? "status-failed" : "status-ok"),
            worst ? fmt::format("<td><span class=\"pill v-{}\">{}</span></td>", verdict_name(*worst),
                                verdict_label(*worst))
                  : std::string("<td>–</td>"));
        for (const auto& c : columns) {
            const auto value = shown_figure(r, c, c.roles.html);
            rows += number_cell(value, value ? format_in_unit(*value, metric_unit(c.name)) : "–");
        }
        // Figures taken from the counter cache are marked, so a reader knows they were not measured now.
        std::string note = r.message;
        if (!r.reused_metrics.empty())
            note += fmt::format("{}{} exact figures and hotspots reused from the counter cache",
                                note.empty() ? "" : "; ", r.reused_metrics.size());
        rows += text_cell(occupancy_limiter_text(r.occupancy_limiter)) +
                fmt::format("<td class=\"message-cell\" title=\"{0}\">{0}</td></tr>\n", html_escape(note));
    }
    return "<section id=\"cases\">\n<h2>All cases</h2>\n<p class=\"note\">Click a column heading to sort.</p>\n"
           "<div class=\"scroll\"><table class=\"sortable cases\">" +
           head + "<tbody>\n" + rows + "</tbody></table></div>\n</section>\n";
}

std::string notes_section(const RunReport& report)
{
    std::string items;
    for (const auto& n : report.notes) items += fmt::format("<li>{}</li>", html_escape(n));
    for (const auto& n : report.comparison_notes) items += fmt::format("<li>{}</li>", html_escape(n));
    for (const auto& r : report.removed)
        items +=
            fmt::format("<li>removed: <code>{} {}</code>, a case the suite no longer has: {} rows in "
                        "<code>{}</code>{}</li>",
                        html_escape(r.variant), html_escape(r.params_text), r.rows, html_escape(r.baseline),
                        r.fails ? " (CI mode: failing until <code>harness baseline update</code> drops them)" : "");
    if (report.shard.sharded())
        items += fmt::format("<li>shard {} of the suite's sweep points (<code>harness merge</code> puts the shards "
                             "together)</li>",
                             html_escape(report.shard.text()));
    for (const auto& b : report.baseline_files)
        items += fmt::format("<li>compared with <code>{}</code></li>", html_escape(b));
    if (!report.profiled && report.mode == RunMode::gpu)
        items += "<li>hardware counters were not collected in this run</li>";
    if (!report.harness_version.empty())
        items += fmt::format("<li>harness {}</li>", html_escape(report.harness_version));
    return "<footer>\n<ul>" + items + "</ul>\n</footer>\n";
}

// ---------------------------------------------------------------------------------------------- page

// Records script errors and whether every chart has marks with a size on screen (for the browser
// test and for anyone who opens the developer tools), and sorts tables by a clicked column.

} // namespace

std::string html_report(const RunReport& report)
{
    const Totals t = totals(report, report.fail_on_improvement);
    const VariantColors colors(report);
    const auto anchors = hotspot_anchors(report);
    const bool static_tier = report.mode == RunMode::static_tier;
    const bool failing = t.failing();
    std::string charts = baseline_section(report) + cliff_maps_section(report);
    // The static tier launches nothing: no times, throughputs or counters, so no such sections.
    if (!static_tier) charts += scaling_section(report, colors) + roofline_section(report, colors);
    charts += occupancy_section(report);
    std::string body = header_section(report, t);
    if (static_tier)
        body += "<p class=\"note\">Static tier: every variant was compiled for each architecture and read, never "
                "launched, so this report has no times, throughputs, counters or source hotspots; its access figures "
                "are predicted from the kernels' PTX, not measured.</p>\n";
    if (failing) {
        // What failed and where first, then the charts that show it.
        body += regressions_section(report, anchors) + failures_section(report) + hotspots_section(report) + charts +
                improvements_section(report, anchors);
    } else {
        // A passing run leads with its verdict (the header and the comparisons made), then the charts.
        body += regressions_section(report, anchors) + charts + improvements_section(report, anchors) +
                hotspots_section(report);
    }
    body += predicted_accesses_section(report);
    body += cases_section(report);
    body += notes_section(report);
    const std::string title = fmt::format("{} — {}", report.suite,
                                          t.failed || t.regressed ? "regressed or failed"
                                          : t.not_gated           ? "not gated"
                                                                  : "passed");
    return fmt::format("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                       "<title>{}</title>\n<style>{}</style>\n<script>{}</script>\n</head>\n"
                       "<body data-report-status=\"loading\">\n<main>\n{}</main>\n</body>\n</html>\n",
                       html_escape(title), page_style, page_script, body);
}

} // namespace harness::report
