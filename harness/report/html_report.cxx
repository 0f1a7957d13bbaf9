// report.html: what a reviewer opens from the CI artifacts. Most important first: the verdict of
// the run, what regressed (metric, baseline, now, change, tolerance, source line), failures,
// improvements, the source lines behind excess traffic, then charts and every case.
//
// Charts are SVG written here rather than drawn by a script from embedded JSON: the page then reads
// fully where an artifact viewer blocks scripts, the unit tests can check marks in the HTML text,
// and no data needs escaping into JavaScript. The one embedded script only sorts tables and records
// in the DOM whether the page rendered cleanly (the browser test reads that).

#include "harness/report/html_text.hxx"
#include "harness/report/run_report.hxx"
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

namespace {

// Colours: red and green are reserved for regressed and improved; variants get the others.
constexpr const char* variant_palette[] = {"#3366cc", "#e8871e", "#8e5cc4", "#1b9aaa", "#b5548a",
                                           "#7a8b2e", "#8d6e63", "#c9a227", "#455a64", "#00897b"};
constexpr const char* color_bad = "#c62828";
constexpr const char* color_good = "#2e7d32";
constexpr const char* color_waived = "#ef6c00";
constexpr const char* color_neutral = "#78909c";

const char* verdict_color(Verdict v)
{
    switch (v) {
    case Verdict::regressed:
    case Verdict::not_gated:
    case Verdict::expect_failed: return color_bad;
    case Verdict::improved: return color_good;
    case Verdict::waived: return color_waived;
    case Verdict::passed: return color_neutral;
    case Verdict::drifted: return "#90a4ae";
    case Verdict::no_baseline:
    case Verdict::skipped: return "#b0bec5";
    }
    return color_neutral;
}

const char* verdict_label(Verdict v)
{
    switch (v) {
    case Verdict::passed: return "within tolerance";
    case Verdict::regressed: return "regressed";
    case Verdict::improved: return "improved";
    case Verdict::waived: return "waived";
    case Verdict::expect_failed: return "expect failed";
    case Verdict::no_baseline: return "no baseline";
    case Verdict::skipped: return "not compared";
    case Verdict::drifted: return "moved (reported, not gated)";
    case Verdict::not_gated: return "not gated (no baseline; CI mode)";
    }
    return "?";
}

std::string case_label(const CaseResult& r)
{
    return r.params_text.empty() ? r.variant : r.variant + " " + r.params_text;
}

std::string value_text(std::optional<double> value, const std::string& unit)
{
    return value ? format_with_unit(*value, unit) : std::string("–");
}

/// A table cell whose sort key is a number.
std::string number_cell(std::optional<double> value, const std::string& text, std::string_view css_class = "num")
{
    return fmt::format("<td class=\"{}\" data-value=\"{}\">{}</td>", css_class,
                       value && std::isfinite(*value) ? fmt::format("{}", *value) : "", html_escape(text));
}

std::string text_cell(std::string_view text, std::string_view css_class = "")
{
    return css_class.empty() ? fmt::format("<td>{}</td>", html_escape(text))
                             : fmt::format("<td class=\"{}\">{}</td>", css_class, html_escape(text));
}

std::string header_row(std::initializer_list<std::string_view> columns)
{
    std::string row = "<thead><tr>";
    for (const auto c : columns) row += fmt::format("<th>{}</th>", html_escape(c));
    return row + "</tr></thead>";
}

/// Change from the baseline in percent; nullopt without both figures, infinite from a zero baseline.
std::optional<double> change_percent(const MetricVerdict& v)
{
    if (!v.baseline || !v.value) return std::nullopt;
    if (*v.baseline == 0) return *v.value == 0 ? 0.0 : std::copysign(INFINITY, *v.value);
    return (*v.value - *v.baseline) / std::fabs(*v.baseline) * 100.0;
}

std::string change_text(const MetricVerdict& v, const std::string& unit)
{
    if (!v.baseline || !v.value) return "–";
    const double diff = *v.value - *v.baseline;
    const std::string absolute = (diff >= 0 ? "+" : "−") + format_with_unit(std::fabs(diff), unit);
    const auto pct = change_percent(v);
    if (!pct || !std::isfinite(*pct)) return *v.baseline == 0 && diff != 0 ? absolute + " (from 0)" : absolute;
    if (*v.baseline != 0 && std::fabs(*v.value / *v.baseline) >= 3)
        return fmt::format("{} ({}×)", absolute, format_number(*v.value / *v.baseline));
    return fmt::format("{} ({}{} %)", absolute, *pct >= 0 ? "+" : "−", format_number(std::fabs(*pct)));
}

/// The half-width of a rule's tolerance band in percent of the baseline, where the rule has one.
std::optional<double> tolerance_percent(const std::string& rule, std::optional<double> baseline)
{
    if (rule.rfind("exact", 0) == 0) return 0.0;
    double amount = 0;
    if ((rule.rfind("rel ", 0) == 0 || rule.rfind("samples ", 0) == 0) &&
        std::sscanf(rule.c_str() + rule.find(' ') + 1, "%lf", &amount) == 1)
        return amount;
    if (rule.rfind("abs ", 0) == 0 && std::sscanf(rule.c_str() + 4, "%lf", &amount) == 1 && baseline && *baseline != 0)
        return amount / std::fabs(*baseline) * 100.0;
    return std::nullopt;
}

/// Stable colours per variant, in the order variants first appear.
class VariantColors {
public:
    explicit VariantColors(const RunReport& report)
    {
        for (const auto& r : report.results)
            if (!index_.contains(r.variant)) {
                index_[r.variant] = order_.size();
                order_.push_back(r.variant);
            }
    }
    const char* operator()(const std::string& variant) const
    {
        const auto it = index_.find(variant);
        const std::size_t i = it == index_.end() ? 0 : it->second;
        return variant_palette[i % std::size(variant_palette)];
    }

private:
    std::map<std::string, std::size_t> index_;
    std::vector<std::string> order_;
};

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
    const bool bad = t.failed > 0 || t.regressed > 0;
    std::vector<std::string> problems;
    if (t.regressed) problems.push_back(fmt::format("{} regressed", t.regressed));
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
    std::string facts = fact("GPU", gpu) + fact("arch", report.arch) + fact("driver", report.driver_version) +
                        fact("CUDA", report.cuda_version) + fact("git", report.git_revision) +
                        fact("date", report.timestamp) +
                        fact("mode", report.mode == "static" ? "static (compiled, not run)" : report.mode) +
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
        fmt::arg("state", bad ? (t.regressed ? "REGRESSED" : "FAILED") : "PASSED"),
        fmt::arg("headline", html_escape(headline)), fmt::arg("suite", html_escape(report.suite)),
        fmt::arg("facts", facts), fmt::arg("gated", html_escape("Gated: " + gate_counts_text(gate_counts(report)))),
        fmt::arg("counts", count(t.passed, "passed", "passed") + count(t.regressed, "regressed", "regressed") +
                               count(t.improved, "improved", "improved") + count(t.failed, "failed", "failed") +
                               count(t.waived, "waived", "waived") + count(t.skipped, "skipped", "skipped")));
}

// ---------------------------------------------------------------------------------------------- tables

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
            html_escape(v->message));
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
    std::string html = "<section id=\"improvements\">\n<h2>Improvements</h2>\n<p class=\"note\">Better than the "
                       "baseline beyond tolerance: the baseline is stale; refresh it to lock the gain in.</p>\n";
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

// ---------------------------------------------------------------------------------------------- charts

std::string figure_caption(std::string_view title, std::string_view note)
{
    return fmt::format("<h3>{}</h3>{}", html_escape(title),
                       note.empty() ? std::string() : fmt::format("<p class=\"note\">{}</p>", html_escape(note)));
}

/// Value vs baseline, one chart per metric that changed (and the median time), in % of the baseline.
std::string baseline_section(const RunReport& report)
{
    std::vector<std::string> metrics; // in metric-table order, then unknown names
    std::map<std::string, bool> changed;
    for (const auto& r : report.results)
        for (const auto& v : r.verdicts) {
            if (!v.baseline || !v.value) continue;
            const bool moved =
                v.verdict != Verdict::passed && v.verdict != Verdict::no_baseline && v.verdict != Verdict::skipped;
            auto [it, fresh] = changed.try_emplace(v.metric, moved);
            it->second = it->second || moved;
            if (fresh) metrics.push_back(v.metric);
        }
    if (metrics.empty()) {
        return "<section id=\"vs-baseline\">\n<h2>Against the baseline</h2>\n<p class=\"empty\">No metric has both a "
               "baseline and a value in this run, so there is nothing to chart.</p>\n</section>\n";
    }
    std::vector<std::string> shown, quiet;
    for (const auto& m : metrics) (changed[m] || m == "time_median" ? shown : quiet).push_back(m);

    std::string charts;
    for (const auto& metric : shown) {
        const std::string unit = metric_unit(metric);
        struct Column {
            const CaseResult* r;
            const MetricVerdict* v;
        };
        std::vector<Column> columns;
        for (const auto& r : report.results)
            for (const auto& v : r.verdicts)
                if (v.metric == metric && v.baseline && v.value) columns.push_back({&r, &v});
        std::string rule;
        // A change from zero (0 -> 128 B) is no percentage: such a chart shows values, with the
        // baseline marked, on an axis that fits them. Otherwise changes in percent.
        bool absolute = false;
        for (const auto& c : columns) {
            const auto pct = change_percent(*c.v);
            absolute = absolute || (pct && !std::isfinite(*pct));
            if (rule.empty()) rule = c.v->rule.substr(0, c.v->rule.find(" ("));
        }
        double lo = 0, hi = 0;
        for (const auto& c : columns) {
            if (absolute) {
                lo = std::min({lo, *c.v->value, *c.v->baseline});
                hi = std::max({hi, *c.v->value, *c.v->baseline});
                continue;
            }
            double extent = std::max(hi, 1.0);
            if (const auto pct = change_percent(*c.v); pct && std::isfinite(*pct))
                extent = std::max(extent, std::fabs(*pct));
            if (const auto tol = tolerance_percent(c.v->rule, c.v->baseline)) extent = std::max(extent, *tol);
            hi = extent;
            lo = -extent;
        }
        if (hi == lo) hi = lo + 1;
        const double pad = 0.15 * (hi - lo);
        std::vector<std::string> names;
        for (const auto& c : columns) names.push_back(case_label(*c.r) + " " + c.r->arch);
        Axis y;
        y.label = absolute ? "value (baseline: grey mark)" : "change vs baseline";
        y.unit_suffix = absolute ? "" : "%";
        y.lo = absolute && lo >= 0 ? 0 : lo - pad;
        y.hi = hi + pad;
        const double span = y.hi - y.lo;
        const int width = std::clamp(140 + 46 * static_cast<int>(columns.size()), 420, 1200);
        SvgChart chart("vs-baseline-" + metric, width, 300, category_axis("case", names), y);
        if (!absolute) chart.guide(-0.5, 0, static_cast<double>(columns.size()) - 0.5, 0, "#455a64", false, 1.2);
        // Labels already placed, as (column, height), so that a new one never overlaps them.
        std::vector<std::pair<double, double>> placed;
        const auto free_at = [&](double x, double height) {
            return std::none_of(placed.begin(), placed.end(), [&](const auto& p) {
                return std::fabs(p.first - x) < 2.5 && std::fabs(p.second - height) < 0.09 * span;
            });
        };
        for (std::size_t i = 0; i < columns.size(); ++i) {
            const auto& [r, v] = columns[i];
            const double x = static_cast<double>(i);
            const auto pct = change_percent(*v);
            double y_value = absolute ? *v->value : pct.value_or(0);
            if (absolute) {
                chart.guide(x - 0.3, *v->baseline, x + 0.3, *v->baseline, "#90a4ae", false, 3);
            } else if (const auto tol = tolerance_percent(v->rule, v->baseline); tol && *tol > 0) {
                chart.rect(x - 0.38, x + 0.38, -*tol, *tol, "#90a4ae", "", "tolerance " + v->rule, false, 0.28);
            }
            if (!std::isfinite(y_value)) y_value = 0;
            const std::string title = fmt::format("{} {}: {} now, baseline {} — {} [{}, {}]", case_label(*r), r->arch,
                                                  value_text(v->value, unit), value_text(v->baseline, unit),
                                                  change_text(*v, unit), verdict_label(v->verdict), v->rule);
            chart.guide(x, absolute ? *v->baseline : 0, x, y_value, verdict_color(v->verdict), false, 2);
            chart.point(x, y_value, verdict_color(v->verdict), title, v->verdict == Verdict::passed, 5);
            if (v->verdict == Verdict::passed) continue;
            // Beside the point, towards the middle of the chart; moved up or down to a free place, or
            // left to the point's tooltip when none is free.
            const bool right_half = x > (static_cast<double>(columns.size()) - 1) / 2;
            for (const double shift : {0.0, 0.1, -0.1, 0.2, -0.2}) {
                const double at = y_value + shift * span;
                if (at < y.lo || at > y.hi || !free_at(x, at)) continue;
                chart.label(x, at, change_text(*v, unit), right_half ? "end" : "start", "label strong",
                            right_half ? -9 : 9, at >= (y.lo + y.hi) / 2 ? 10 : -4);
                placed.emplace_back(x, at);
                break;
            }
        }
        chart.legend({{"regressed", color_bad},
                      {"improved", color_good},
                      {"within tolerance", color_neutral},
                      {"tolerance band", "#cfd8dc"}});
        const std::string title = unit.empty() ? metric : fmt::format("{} ({})", metric, unit);
        charts += "<div class=\"card\">" +
                  figure_caption(title, rule.empty() ? std::string() : "rule: " + rule + "; 0 % is the baseline") +
                  chart.svg(title + " against the baseline") + "</div>\n";
    }
    std::string html =
        "<section id=\"vs-baseline\">\n<h2>Against the baseline</h2>\n<div class=\"grid\">" + charts + "</div>\n";
    if (!quiet.empty()) {
        std::string names;
        for (std::size_t i = 0; i < quiet.size(); ++i) names += (i ? ", " : "") + quiet[i];
        html +=
            fmt::format("<p class=\"note\">Within tolerance in every case, not charted: {}.</p>\n", html_escape(names));
    }
    return html + "</section>\n";
}

/// The sweep parameter with the most distinct values (at least two), for "vs problem size" charts.
std::optional<std::string> size_parameter(const RunReport& report)
{
    std::map<std::string, std::set<std::int64_t>> values;
    for (const auto& r : report.results)
        for (const auto& [name, value] : r.params) values[name].insert(value);
    std::optional<std::string> best;
    std::size_t most = 1;
    for (const auto& [name, set] : values)
        if (set.size() > most) {
            most = set.size();
            best = name;
        }
    return best;
}

/// Series name of a case in "vs size" charts: the variant, plus parameters other than the size.
std::string series_name(const CaseResult& r, const std::string& size_param, bool several_archs)
{
    std::string name = r.variant;
    for (const auto& [k, v] : r.params)
        if (k != size_param) name += fmt::format(" {}={}", k, v);
    if (several_archs && !r.arch.empty()) name += " " + r.arch;
    return name;
}

bool several_archs(const RunReport& report)
{
    std::set<std::string> archs;
    for (const auto& r : report.results) archs.insert(r.arch);
    return archs.size() > 1;
}

std::string scaling_chart(const RunReport& report, const VariantColors& colors, const std::string& size_param,
                          const std::string& metric, const std::string& title, bool with_samples)
{
    const std::string unit = metric_unit(metric);
    const bool archs = several_archs(report);
    std::map<std::string, std::vector<std::pair<double, double>>> series;
    std::map<std::string, std::string> series_variant;
    std::vector<std::string> order;
    std::vector<double> xs, ys;
    for (const auto& r : report.results) {
        const auto value = r.metric(metric);
        const auto size = r.params.find(size_param);
        if (!value || size == r.params.end()) continue;
        const std::string name = series_name(r, size_param, archs);
        if (!series.contains(name)) order.push_back(name);
        series[name].push_back({static_cast<double>(size->second), *value});
        series_variant[name] = r.variant;
        xs.push_back(static_cast<double>(size->second));
        ys.push_back(*value);
        if (with_samples)
            for (const double s : r.time_samples_us) ys.push_back(s);
    }
    if (order.empty()) return {};
    SvgChart chart("scaling-" + metric, 560, 340, fit_axis(size_param, xs, 7.5),
                   fit_axis(title + " (" + unit + ")", ys, 20.0, true));
    std::vector<LegendEntry> legend;
    for (const auto& name : order) {
        auto& points = series[name];
        std::sort(points.begin(), points.end());
        const char* color = colors(series_variant[name]);
        chart.line(points, color, name);
        legend.push_back({name, color});
    }
    for (const auto& r : report.results) {
        const auto value = r.metric(metric);
        const auto size = r.params.find(size_param);
        if (!value || size == r.params.end()) continue;
        const double x = static_cast<double>(size->second);
        const char* color = colors(r.variant);
        std::string note;
        if (with_samples && !r.time_samples_us.empty()) {
            const auto [lo, hi] = std::minmax_element(r.time_samples_us.begin(), r.time_samples_us.end());
            chart.guide(x, *lo, x, *hi, color, false, 6);
            note = fmt::format(", {} samples {} – {} us", r.time_samples_us.size(), format_number(*lo),
                               format_number(*hi));
        }
        const auto worst = worst_verdict(r);
        const bool flagged = worst && (*worst == Verdict::regressed || *worst == Verdict::expect_failed);
        chart.point(x, *value, color, fmt::format("{}: {}{}", case_label(r), format_with_unit(*value, unit), note));
        if (flagged) chart.point(x, *value, color_bad, case_label(r) + " regressed", true, 8.5);
    }
    chart.legend(std::move(legend));
    return "<div class=\"card\">" +
           figure_caption(title + " vs " + size_param,
                          with_samples ? "dots: median; bars: spread of the timed samples; circled: a metric regressed"
                                       : "") +
           chart.svg(title + " vs " + size_param) + "</div>\n";
}

std::string scaling_section(const RunReport& report, const VariantColors& colors)
{
    std::string html = "<section id=\"scaling\">\n<h2>Time and throughput vs problem size</h2>\n";
    if (report.mode == "static")
        return html + "<p class=\"empty\">Not timed: this run is the static tier (compiled for each architecture, "
                      "never launched), so there are no times or throughputs.</p>\n</section>\n";
    const auto size_param = size_parameter(report);
    if (!size_param)
        return html + "<p class=\"empty\">The suite sweeps one problem size only; the times are in the table of all "
                      "cases.</p>\n</section>\n";
    bool any_gflops = false;
    for (const auto& r : report.results) any_gflops = any_gflops || r.metric("gflops");
    const std::string charts = scaling_chart(report, colors, *size_param, "time_median", "median time", true) +
                               scaling_chart(report, colors, *size_param, any_gflops ? "gflops" : "bandwidth",
                                             any_gflops ? "throughput" : "bandwidth", false);
    if (charts.empty()) return html + "<p class=\"empty\">No case produced a time.</p>\n</section>\n";
    return html + "<div class=\"grid two\">" + charts + "</div>\n</section>\n";
}

std::string roofline_section(const RunReport& report, const VariantColors& colors)
{
    std::string html = "<section id=\"roofline\">\n<h2>Roofline</h2>\n";
    struct Point {
        const CaseResult* r;
        double intensity, gflops;
    };
    std::vector<Point> points;
    std::string source;
    for (const auto& r : report.results) {
        auto gflops = r.metric("achieved_gflops");
        if (!gflops) gflops = r.metric("gflops");
        auto intensity = r.metric("arithmetic_intensity");
        std::string from = "executed FLOPs over DRAM bytes (counters)";
        if (!intensity && r.metric("flops") && r.metric("dram_bytes") && *r.metric("dram_bytes") > 0)
            intensity = *r.metric("flops") / *r.metric("dram_bytes");
        if (!intensity && r.metric("gflops") && r.metric("bandwidth") && *r.metric("bandwidth") > 0) {
            intensity = *r.metric("gflops") / *r.metric("bandwidth");
            from = "the suite's flops / bytes expressions (compulsory traffic, no counters)";
        }
        if (!gflops || !intensity || *gflops <= 0 || *intensity <= 0) continue;
        points.push_back({&r, *intensity, *gflops});
        if (source.empty()) source = from;
    }
    if (points.empty())
        return html +
               fmt::format(
                   "<p class=\"empty\">No case has both a FLOP rate and an arithmetic intensity{}.</p>\n</section>\n",
                   report.mode == "static" ? " (static tier: nothing ran)" : "");
    const double bandwidth = report.memory_bandwidth_gbs, peak = report.fp32_peak_gflops;
    const bool ceilings = bandwidth > 0 && peak > 0;
    std::vector<double> xs, ys;
    for (const auto& p : points) {
        xs.push_back(p.intensity);
        ys.push_back(p.gflops);
    }
    if (ceilings) {
        const double ridge = peak / bandwidth;
        xs.push_back(ridge * 4);
        xs.push_back(std::min(ridge / 8, *std::min_element(xs.begin(), xs.end())));
        ys.push_back(peak);
    }
    Axis x = fit_axis("arithmetic intensity (FLOP/B)", xs, 1.0);
    Axis y = fit_axis("FP32 throughput (GFLOP/s)", ys, 1.0);
    if (x.scale != Scale::log) x.scale = Scale::log, x.lo = std::max(x.lo, 1e-3), x.hi = std::max(x.hi, x.lo * 10);
    if (y.scale != Scale::log) y.scale = Scale::log, y.lo = std::max(y.lo, 1e-3), y.hi = std::max(y.hi, y.lo * 10);
    SvgChart chart("roofline", 760, 420, x, y);
    if (ceilings) {
        const double ridge = peak / bandwidth;
        chart.guide(x.lo, bandwidth * x.lo, ridge, peak, "#37474f", false, 2);
        chart.guide(ridge, peak, x.hi, peak, "#37474f", false, 2);
        chart.label(x.hi, peak, fmt::format("FP32 peak {}", format_with_unit(peak, "GFLOP/s")), "end", "ceiling", -4,
                    -6);
        const double slope =
            std::atan2(chart.y_px(peak) - chart.y_px(peak / 10), chart.x_px(ridge) - chart.x_px(ridge / 10));
        const double at = std::max(x.lo * 1.6, ridge / 30);
        chart.label(at, bandwidth * at, fmt::format("memory {}", format_with_unit(bandwidth, "GB/s")), "start",
                    "ceiling", 4, -6, slope * 180 / std::numbers::pi);
    }
    std::vector<LegendEntry> legend;
    std::set<std::string> seen;
    for (const auto& p : points) {
        const char* color = colors(p.r->variant);
        std::string roof;
        if (ceilings) {
            const double attainable = std::min(peak, bandwidth * p.intensity);
            roof = fmt::format(", {} % of the roof ({})", format_number(p.gflops / attainable * 100),
                               bandwidth * p.intensity < peak ? "memory-bound" : "compute-bound");
        }
        chart.point(p.intensity, p.gflops, color,
                    fmt::format("{}: {} FLOP/B, {}{}", case_label(*p.r), format_number(p.intensity),
                                format_with_unit(p.gflops, "GFLOP/s"), roof));
        if (points.size() <= 16 && !p.r->params_text.empty())
            chart.label(p.intensity, p.gflops, p.r->params_text, "start", "label", 7, 4);
        if (seen.insert(p.r->variant).second) legend.push_back({p.r->variant, color});
    }
    chart.legend(std::move(legend));
    std::string note = "intensity from " + source;
    if (!ceilings) note += "; no ceilings: the run did not record the GPU's peak bandwidth and FP32 rate";
    return html + "<div class=\"card\">" + figure_caption("achieved FP32 throughput vs arithmetic intensity", note) +
           chart.svg("roofline") + "</div>\n</section>\n";
}

std::string limiter_short(const std::string& limiter)
{
    if (limiter == "registers") return "regs";
    if (limiter == "shared_memory") return "smem";
    return limiter;
}

std::string occupancy_section(const RunReport& report)
{
    // One column per variant and arch when every size has the same figures (typical for the static
    // tier), otherwise one per case.
    struct Column {
        std::string name;
        std::optional<double> theoretical, achieved;
        std::string limiter;
    };
    const bool archs = several_archs(report);
    std::map<std::string, std::vector<const CaseResult*>> groups;
    std::vector<std::string> order;
    for (const auto& r : report.results) {
        if (!r.metric("theoretical_occupancy") && !r.metric("achieved_occupancy")) continue;
        const std::string key = archs ? r.variant + " " + r.arch : r.variant;
        if (!groups.contains(key)) order.push_back(key);
        groups[key].push_back(&r);
    }
    std::string html = "<section id=\"occupancy\">\n<h2>Occupancy</h2>\n";
    if (order.empty())
        return html + "<p class=\"empty\">No case reports occupancy (resources were not read).</p>\n</section>\n";
    std::vector<Column> columns;
    bool any_achieved = false;
    for (const auto& key : order) {
        const auto& cases = groups[key];
        const auto same = std::all_of(cases.begin(), cases.end(), [&](const CaseResult* c) {
            return c->metric("theoretical_occupancy") == cases[0]->metric("theoretical_occupancy") &&
                   c->metric("achieved_occupancy") == cases[0]->metric("achieved_occupancy") &&
                   c->occupancy_limiter == cases[0]->occupancy_limiter;
        });
        for (const auto* c : cases) {
            any_achieved = any_achieved || c->metric("achieved_occupancy");
            columns.push_back({same ? key : (archs ? case_label(*c) + " " + c->arch : case_label(*c)),
                               c->metric("theoretical_occupancy"), c->metric("achieved_occupancy"),
                               c->occupancy_limiter});
            if (same) break;
        }
    }
    std::vector<std::string> names;
    for (const auto& c : columns) names.push_back(c.name);
    Axis y;
    y.label = "occupancy";
    y.unit_suffix = "%";
    y.lo = 0;
    y.hi = 112;
    const int width = std::clamp(140 + 52 * static_cast<int>(columns.size()), 420, 1200);
    SvgChart chart("occupancy", width, 320, category_axis(archs ? "variant, arch" : "case", names), y);
    for (std::size_t i = 0; i < columns.size(); ++i) {
        const auto& c = columns[i];
        const double x = static_cast<double>(i);
        if (c.theoretical) {
            chart.rect(x - 0.36, x + 0.36, 0, *c.theoretical * 100, "#cfd8dc", "#90a4ae",
                       fmt::format("{}: theoretical {} (limited by {})", c.name,
                                   format_with_unit(*c.theoretical, "fraction"), c.limiter.empty() ? "?" : c.limiter));
            if (!c.limiter.empty())
                chart.label(x, *c.theoretical * 100, limiter_short(c.limiter), "middle", "label", 0, -5);
        }
        if (c.achieved)
            chart.rect(x - 0.2, x + 0.2, 0, *c.achieved * 100, "#3366cc", "",
                       fmt::format("{}: achieved {}", c.name, format_with_unit(*c.achieved, "fraction")));
    }
    std::vector<LegendEntry> legend{{"theoretical (label: limiter)", "#b0bec5"}};
    if (any_achieved) legend.push_back({"achieved", "#3366cc"});
    chart.legend(std::move(legend));
    const std::string note = any_achieved
                                 ? "achieved is measured (noisy); theoretical follows from the resources"
                                 : "theoretical, from registers, shared memory and block size per architecture";
    return html + "<div class=\"card\">" +
           figure_caption(any_achieved ? "achieved vs theoretical occupancy" : "theoretical occupancy", note) +
           chart.svg("occupancy") + "</div>\n</section>\n";
}

// ---------------------------------------------------------------------------------------------- all cases

std::string cases_section(const RunReport& report)
{
    struct Column {
        const char* heading;
        const char* metric;
    };
    const Column candidates[] = {{"median", "time_median"},
                                 {"noise", "time_noise"},
                                 {"throughput", "gflops"},
                                 {"bandwidth", "bandwidth"},
                                 {"registers", "registers"},
                                 {"shared", "static_shared_bytes"},
                                 {"local", "local_bytes"},
                                 {"spill", "spill_store_bytes"},
                                 {"resident", "blocks_per_sm"},
                                 {"theoretical occ.", "theoretical_occupancy"},
                                 {"achieved occ.", "achieved_occupancy"}};
    std::vector<Column> columns;
    // Only the columns some case has a figure for; spills and local memory only where they occur.
    for (const auto& c : candidates) {
        const bool only_when_nonzero =
            std::string_view(c.metric) == "local_bytes" || std::string_view(c.metric) == "spill_store_bytes";
        if (std::any_of(report.results.begin(), report.results.end(), [&](const CaseResult& r) {
                const auto v = r.metric(c.metric);
                return v && (!only_when_nonzero || *v != 0);
            }))
            columns.push_back(c);
    }
    std::string head = "<thead><tr><th>variant</th><th>params</th><th>arch</th><th>status</th><th>verdict</th>";
    for (const auto& c : columns)
        head += fmt::format("<th>{}<span class=\"unit\">{}</span></th>", c.heading,
                            html_escape(display_unit(metric_unit(c.metric))));
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
            auto value = r.metric(c.metric);
            if (value && std::string_view(c.metric) == "static_shared_bytes")
                *value += r.metric("dynamic_shared_bytes").value_or(0);
            rows += number_cell(value, value ? format_in_unit(*value, metric_unit(c.metric)) : "–");
        }
        rows += text_cell(r.occupancy_limiter) +
                fmt::format("<td class=\"message-cell\" title=\"{0}\">{0}</td></tr>\n", html_escape(r.message));
    }
    return "<section id=\"cases\">\n<h2>All cases</h2>\n<p class=\"note\">Click a column heading to sort.</p>\n"
           "<div class=\"scroll\"><table class=\"sortable cases\">" +
           head + "<tbody>\n" + rows + "</tbody></table></div>\n</section>\n";
}

std::string notes_section(const RunReport& report)
{
    std::string items;
    for (const auto& n : report.notes) items += fmt::format("<li>{}</li>", html_escape(n));
    for (const auto& b : report.baseline_files)
        items += fmt::format("<li>compared with <code>{}</code></li>", html_escape(b));
    if (!report.profiled && report.mode == "gpu") items += "<li>hardware counters were not collected in this run</li>";
    if (!report.harness_version.empty())
        items += fmt::format("<li>harness {}</li>", html_escape(report.harness_version));
    return "<footer>\n<ul>" + items + "</ul>\n</footer>\n";
}

// ---------------------------------------------------------------------------------------------- page

constexpr const char* page_style = R"css(
:root { --bad: #c62828; --good: #2e7d32; --waived: #ef6c00; --ink: #1f2933; --muted: #607080; --line: #dde3ea; --bg: #f5f7fa; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
main { max-width: 1320px; margin: 0 auto; padding: 0 24px 40px; }
h1 { font-size: 26px; margin: 4px 0 10px; }
h2 { font-size: 19px; margin: 30px 0 10px; padding-bottom: 4px; border-bottom: 2px solid var(--line); }
h3 { font-size: 15px; margin: 0 0 4px; }
code, pre { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12.5px; }
header.run { background: #fff; border: 1px solid var(--line); border-top: 6px solid var(--good); border-radius: 6px; padding: 14px 20px; margin-top: 20px; }
header.run.bad { border-top-color: var(--bad); }
.banner { font-size: 15px; }
.banner .state { font-weight: 700; letter-spacing: .06em; color: #fff; background: var(--good); padding: 2px 10px; border-radius: 4px; }
header.bad .banner .state { background: var(--bad); }
.banner .headline { margin-left: 8px; font-weight: 600; }
dl.facts { display: flex; flex-wrap: wrap; gap: 4px 26px; margin: 0 0 10px; }
dl.facts div { display: flex; gap: 6px; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; font-weight: 500; }
.counts { display: flex; gap: 8px; flex-wrap: wrap; }
.count { border-radius: 14px; padding: 2px 12px; background: #eceff1; }
.count b { font-size: 15px; }
.count.regressed:not(.zero), .count.failed:not(.zero) { background: #fde7e7; color: var(--bad); }
.count.improved:not(.zero), .count.passed:not(.zero) { background: #e6f4e7; color: var(--good); }
.count.waived:not(.zero) { background: #fff1e0; color: var(--waived); }
.count.zero { color: var(--muted); }
table { border-collapse: collapse; background: #fff; width: 100%; border: 1px solid var(--line); }
th, td { padding: 5px 9px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
th { background: #eef2f6; font-weight: 600; cursor: pointer; user-select: none; white-space: nowrap; position: relative; }
th:hover { background: #e1e7ee; }
th[data-dir=asc]::after { content: " \25B2"; font-size: 10px; }
th[data-dir=desc]::after { content: " \25BC"; font-size: 10px; }
th .unit { display: block; font-weight: 400; font-size: 11px; color: var(--muted); }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tbody tr:hover { background: #f7fafc; }
table.findings tbody.v-regressed td:first-child, table.findings tbody.v-expect_failed td:first-child { border-left: 4px solid var(--bad); }
table.findings tr:first-child td { border-bottom: none; }
table.findings tr.detail td { color: #455a64; padding-top: 0; font-size: 13px; }
table.findings tbody:hover { background: #f7fafc; }
table.regressions td.change, table.regressions td.now { color: var(--bad); font-weight: 600; }
table.findings code { overflow-wrap: anywhere; }
table.improvements td.change, table.improvements td.now { color: var(--good); font-weight: 600; }
table.improvements td:first-child { border-left: 4px solid var(--good); }
details.improvements > summary { cursor: pointer; color: var(--good); font-weight: 600; margin-bottom: 6px; }
table.findings td.change { white-space: nowrap; }
table.waived td:first-child { border-left: 4px solid var(--waived); }
.metric { font-weight: 600; }
.tag { font-size: 11px; background: #eceff1; border-radius: 3px; padding: 1px 5px; color: #37474f; }
.pill { font-size: 12px; border-radius: 10px; padding: 1px 8px; background: #eceff1; white-space: nowrap; }
.pill.v-regressed, .pill.v-expect_failed { background: #fde7e7; color: var(--bad); font-weight: 600; }
.pill.v-improved { background: #e6f4e7; color: var(--good); font-weight: 600; }
.pill.v-waived { background: #fff1e0; color: var(--waived); }
td.status-failed { color: var(--bad); font-weight: 600; }
pre.message { margin: 0; white-space: pre-wrap; }
td.message-cell { color: var(--muted); max-width: 22em; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.note, .empty { color: var(--muted); margin: 4px 0 10px; }
.ok-note { color: var(--good); font-weight: 600; }
.grid { display: flex; flex-wrap: wrap; gap: 14px; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 12px 14px; max-width: 100%; }
figure.chart { margin: 6px 0 0; }
svg.plot { max-width: 100%; height: auto; display: block; }
svg text { font-family: system-ui, "DejaVu Sans", sans-serif; fill: #37474f; }
svg .tick { font-size: 11px; fill: #607080; }
svg .axis-label { font-size: 12px; font-weight: 600; }
svg .grid { stroke: #edf1f5; }
svg .frame, svg .tickmark { stroke: #90a4ae; }
svg .label { font-size: 10.5px; fill: #455a64; }
svg .label.strong { font-weight: 700; fill: #263238; }
svg .ceiling { font-size: 11.5px; font-weight: 600; fill: #37474f; }
svg .mark:hover { stroke-width: 3; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 16px; font-size: 12.5px; margin-bottom: 2px; }
.legend .swatch { display: inline-block; width: 14px; height: 4px; border-radius: 2px; background: var(--c); margin-right: 6px; vertical-align: middle; }
.hotspot { background: #fff; border: 1px solid var(--line); border-left: 4px solid var(--bad); border-radius: 6px; padding: 10px 14px; margin-bottom: 12px; }
.hotspot .where { font-size: 14px; margin-bottom: 4px; }
.hotspot .where code { font-weight: 700; font-size: 14px; }
.hotspot .kernel, .hotspot .case { color: var(--muted); margin-left: 8px; }
.hotspot .figures { display: flex; gap: 18px; margin-bottom: 6px; }
pre.code { background: #263238; color: #eceff1; border-radius: 4px; padding: 8px 0; overflow-x: auto; margin: 0; }
pre.code .line { display: inline-block; width: 100%; padding: 0 12px 0 0; }
pre.code .line.hot { background: #6d2a2a; box-shadow: inset 4px 0 0 #ff8a80; }
pre.code .ln { display: inline-block; width: 4.5em; padding-right: 1em; text-align: right; color: #78909c; user-select: none; }
.scroll { overflow-x: auto; }
footer { margin-top: 30px; color: var(--muted); font-size: 12.5px; }
footer ul { padding-left: 18px; }
)css";

// Records script errors and whether every chart has marks with a size on screen (for the browser
// test and for anyone who opens the developer tools), and sorts tables by a clicked column.
constexpr const char* page_script = R"js(
(function () {
  'use strict';
  var errors = [];
  window.addEventListener('error', function (e) { errors.push(String(e.message || e)); });
  var consoleError = console.error;
  console.error = function () {
    errors.push(Array.prototype.join.call(arguments, ' '));
    return consoleError.apply(console, arguments);
  };
  function sortKey(cell) {
    var v = cell.getAttribute('data-value');
    if (v !== null && v !== '') return { n: parseFloat(v) };
    return { s: cell.textContent.trim().toLowerCase() };
  }
  function compare(a, b) {
    if ('n' in a && 'n' in b) return a.n - b.n;
    if ('n' in a) return -1;
    if ('n' in b) return 1;
    return a.s < b.s ? -1 : a.s > b.s ? 1 : 0;
  }
  function sortBy(th) {
    var table = th.closest('table'), column = th.cellIndex, body = table.tBodies[0];
    var dir = th.getAttribute('data-dir') === 'asc' ? 'desc' : 'asc';
    table.querySelectorAll('th').forEach(function (h) { h.removeAttribute('data-dir'); });
    th.setAttribute('data-dir', dir);
    // Tables of findings keep each finding in a <tbody> of its own: sort those, else the rows.
    var grouped = table.tBodies.length > 1;
    var items = Array.prototype.slice.call(grouped ? table.tBodies : body.rows);
    items.sort(function (x, y) {
      var a = grouped ? x.rows[0] : x, b = grouped ? y.rows[0] : y;
      var c = compare(sortKey(a.cells[column]), sortKey(b.cells[column]));
      return dir === 'asc' ? c : -c;
    });
    items.forEach(function (r) { (grouped ? table : body).appendChild(r); });
  }
  document.addEventListener('DOMContentLoaded', function () {
    document.querySelectorAll('table.sortable th').forEach(function (th) {
      th.title = 'sort by this column';
      th.addEventListener('click', function () { sortBy(th); });
    });
  });
  window.addEventListener('load', function () {
    var charts = document.querySelectorAll('svg[data-chart]'), empty = [];
    charts.forEach(function (svg) {
      var marks = svg.querySelectorAll('.mark').length, box = svg.getBoundingClientRect();
      svg.setAttribute('data-rendered-marks', String(marks));
      if (marks === 0 || box.width === 0 || box.height === 0) empty.push(svg.getAttribute('data-chart'));
    });
    document.body.setAttribute('data-charts', String(charts.length));
    document.body.setAttribute('data-report-status',
      errors.length ? 'error: ' + errors.join(' | ') : empty.length ? 'empty chart: ' + empty.join(' ') : 'ok');
  });
})();
)js";

} // namespace

std::string html_report(const RunReport& report)
{
    const Totals t = totals(report, report.fail_on_improvement);
    const VariantColors colors(report);
    const auto anchors = hotspot_anchors(report);
    const bool static_tier = report.mode == "static";
    const bool failing = t.failed > 0 || t.regressed > 0;
    std::string charts = baseline_section(report);
    // The static tier launches nothing: no times, throughputs or counters, so no such sections.
    if (!static_tier) charts += scaling_section(report, colors) + roofline_section(report, colors);
    charts += occupancy_section(report);
    std::string body = header_section(report, t);
    if (static_tier)
        body += "<p class=\"note\">Static tier: every variant was compiled for each architecture and read, never "
                "launched, so this report has no times, throughputs, counters or source hotspots.</p>\n";
    if (failing) {
        // What failed and where first, then the charts that show it.
        body += regressions_section(report, anchors) + failures_section(report) + hotspots_section(report) + charts +
                improvements_section(report, anchors);
    } else {
        // A passing run leads with its verdict (the header and the comparisons made), then the charts.
        body += regressions_section(report, anchors) + charts + improvements_section(report, anchors) +
                hotspots_section(report);
    }
    body += cases_section(report);
    body += notes_section(report);
    const std::string title =
        fmt::format("{} — {}", report.suite, t.failed || t.regressed ? "regressed or failed" : "passed");
    return fmt::format("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                       "<title>{}</title>\n<style>{}</style>\n<script>{}</script>\n</head>\n"
                       "<body data-report-status=\"loading\">\n<main>\n{}</main>\n</body>\n</html>\n",
                       html_escape(title), page_style, page_script, body);
}

} // namespace harness::report
