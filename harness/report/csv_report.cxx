#include "harness/core/atomic_file.hxx"
#include "harness/core/case_figures.hxx"
#include "harness/core/metrics.hxx"
#include "harness/report/cliff_text.hxx"
#include "harness/report/reporters.hxx"

#include <algorithm>
#include <csv.h>
#include <fmt/format.h>

namespace harness::report {

std::string csv_field(std::string_view text)
{
    std::string out(csv_write(nullptr, 0, text.data(), text.size()), '\0');
    csv_write(out.data(), out.size(), text.data(), text.size());
    return out;
}

namespace {

std::string csv_row(std::initializer_list<std::string_view> fields)
{
    std::string row;
    for (const auto& f : fields) {
        if (!row.empty()) row += ',';
        row += csv_field(f);
    }
    return row + "\r\n";
}

/// The rows of one map's cliffs, after the cases': metric "cliff", the depth as a fraction in
/// the value, the cause in the status column, and in params where the step is ("N=4096..4097
/// K=64": the scanned axis between the last point before the step and the first after it, then
/// the map's other parameters). A cliff of the baseline that vanished has no value or cause; a
/// verdict on the whole map spans the scanned range. Readers that pick rows by metric name read on
/// as before.
std::string cliff_rows(const RunReport& report, const CliffMap& map)
{
    const auto params = [&](double from, double to) {
        return fmt::format("{}={:.9g}..{:.9g}{}", map.axis, from, to, map.others.empty() ? "" : " " + map.others);
    };
    // The baseline's depth comes from the comparison with the baseline; the verdict is the worst
    // of that and any expect rule, as for the cases' figures.
    const auto row = [&](const std::string& where, std::optional<double> depth, std::string_view cause,
                         const std::vector<const CliffVerdict*>& verdicts) {
        std::optional<double> baseline;
        for (const auto* v : verdicts)
            if (v->judgement.baseline && v->judgement.source != VerdictSource::expectation)
                baseline = v->judgement.baseline;
        const auto worst = worst_cliff_verdict(verdicts);
        return csv_row({report.suite, map.variant, where, map.arch, "cliff", depth ? fmt::format("{:.9g}", *depth) : "",
                        "fraction", cause, baseline ? fmt::format("{:.9g}", *baseline) : "",
                        baseline && depth ? fmt::format("{:.9g}", *depth - *baseline) : "",
                        worst ? verdict_name(*worst) : ""});
    };
    std::string out;
    for (const auto& c : map.cliffs)
        out += row(params(c.x_before, c.x_after), c.depth, cliff_cause_name(c.cause), cliff_verdicts(map, c));
    for (const auto* v : verdicts_without_cliff(map)) {
        if (!judges_whole_map(*v)) {
            out += row(params(v->x_before, v->x_after), std::nullopt, "", {v});
        } else if (!map.x.empty()) {
            const auto [lo, hi] = std::minmax_element(map.x.begin(), map.x.end());
            out += row(params(*lo, *hi), std::nullopt, "", {v});
        }
    }
    return out;
}

} // namespace

std::string results_csv(const RunReport& report)
{
    std::string out = csv_row(
        {"suite", "variant", "params", "arch", "metric", "value", "unit", "status", "baseline", "delta", "verdict"});
    for (const auto& r : report.results) {
        const std::string status = case_status_name(r.status);
        // The variant's figures in table order, then each launch's ("registers@rstd_kernel").
        for (const auto& [info, name] : case_figure_names(r)) {
            const auto value = r.metric(name);
            if (!value) continue;
            // The baseline comes from the baseline comparison; the verdict is the worst of that and any expect rule.
            std::optional<double> baseline;
            std::vector<Verdict> verdicts;
            for (const auto& v : r.verdicts) {
                if (v.metric != name) continue;
                if (v.baseline && v.source != VerdictSource::expectation) baseline = v.baseline;
                verdicts.push_back(v.verdict);
            }
            CaseResult only;
            for (const Verdict v : verdicts) {
                MetricVerdict mv;
                mv.verdict = v;
                only.verdicts.push_back(mv);
            }
            const auto worst = worst_verdict(only);
            out +=
                csv_row({r.suite, r.variant, r.params_text, r.arch, name, fmt::format("{:.9g}", *value), info.unit,
                         status, baseline ? fmt::format("{:.9g}", *baseline) : "",
                         baseline ? fmt::format("{:.9g}", *value - *baseline) : "", worst ? verdict_name(*worst) : ""});
        }
        if (r.metrics.empty())
            out += csv_row({r.suite, r.variant, r.params_text, r.arch, "", "", "", status, "", "", ""});
    }
    for (const auto& map : report.cliff_maps) out += cliff_rows(report, map);
    return out;
}

} // namespace harness::report
