// The charts of report.html, drawn as SVG here (see html_report.cxx for why).

#include "harness/core/metrics.hxx"
#include "harness/report/html_parts.hxx"
#include "harness/report/html_text.hxx"
#include "harness/report/svg_chart.hxx"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <numbers>
#include <optional>
#include <set>

namespace harness::report::html {

// ---------------------------------------------------------------------------------------------- charts

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
    for (const auto& m : metrics) (changed[m] || m == metric::time_median ? shown : quiet).push_back(m);

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
            if (const auto tol = tolerance_percent(*c.v)) extent = std::max(extent, *tol);
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
            } else if (const auto tol = tolerance_percent(*v); tol && *tol > 0) {
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
    if (report.mode == RunMode::static_tier)
        return html + "<p class=\"empty\">Not timed: this run is the static tier (compiled for each architecture, "
                      "never launched), so there are no times or throughputs.</p>\n</section>\n";
    const auto size_param = size_parameter(report);
    if (!size_param)
        return html + "<p class=\"empty\">The suite sweeps one problem size only; the times are in the table of all "
                      "cases.</p>\n</section>\n";
    bool any_gflops = false;
    for (const auto& r : report.results) any_gflops = any_gflops || r.metric(metric::gflops);
    const std::string charts =
        scaling_chart(report, colors, *size_param, metric::time_median, "median time", true) +
        scaling_chart(report, colors, *size_param, any_gflops ? metric::gflops : metric::bandwidth,
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
        auto gflops = r.metric(metric::achieved_gflops);
        if (!gflops) gflops = r.metric(metric::gflops);
        auto intensity = r.metric(metric::arithmetic_intensity);
        std::string from = "executed FLOPs over DRAM bytes (counters)";
        if (!intensity && r.metric(metric::flops) && r.metric(metric::dram_bytes) && *r.metric(metric::dram_bytes) > 0)
            intensity = *r.metric(metric::flops) / *r.metric(metric::dram_bytes);
        if (!intensity && r.metric(metric::gflops) && r.metric(metric::bandwidth) && *r.metric(metric::bandwidth) > 0) {
            intensity = *r.metric(metric::gflops) / *r.metric(metric::bandwidth);
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
                   report.mode == RunMode::static_tier ? " (static tier: nothing ran)" : "");
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

/// The limiter as the occupancy chart labels its bars: the long names shortened to fit.
std::string limiter_short(OccupancyLimiter limiter)
{
    switch (limiter) {
    case OccupancyLimiter::registers: return "regs";
    case OccupancyLimiter::shared_memory: return "smem";
    case OccupancyLimiter::warps:
    case OccupancyLimiter::blocks:
    case OccupancyLimiter::barriers: break;
    }
    return occupancy_limiter_name(limiter);
}

std::string occupancy_section(const RunReport& report)
{
    // One column per variant and arch when every size has the same figures (typical for the static
    // tier), otherwise one per case.
    struct Column {
        std::string name;
        std::optional<double> theoretical, achieved;
        std::optional<OccupancyLimiter> limiter;
    };
    const bool archs = several_archs(report);
    std::map<std::string, std::vector<const CaseResult*>> groups;
    std::vector<std::string> order;
    for (const auto& r : report.results) {
        if (!r.metric(metric::theoretical_occupancy) && !r.metric(metric::achieved_occupancy)) continue;
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
            return c->metric(metric::theoretical_occupancy) == cases[0]->metric(metric::theoretical_occupancy) &&
                   c->metric(metric::achieved_occupancy) == cases[0]->metric(metric::achieved_occupancy) &&
                   c->occupancy_limiter == cases[0]->occupancy_limiter;
        });
        for (const auto* c : cases) {
            any_achieved = any_achieved || c->metric(metric::achieved_occupancy);
            columns.push_back({same ? key : (archs ? case_label(*c) + " " + c->arch : case_label(*c)),
                               c->metric(metric::theoretical_occupancy), c->metric(metric::achieved_occupancy),
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
                                   format_with_unit(*c.theoretical, "fraction"),
                                   c.limiter ? occupancy_limiter_name(*c.limiter) : "?"));
            if (c.limiter) chart.label(x, *c.theoretical * 100, limiter_short(*c.limiter), "middle", "label", 0, -5);
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

} // namespace harness::report::html
