#include "harness/compare/run_stability.hxx"

#include "harness/core/error.hxx"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>
#include <tuple>

namespace harness::compare {

namespace {

/// Whether the runs' comparison judged `metric` of a case: a verdict for it in some run, or no
/// verdicts at all (a run that was not compared says nothing, so the figure counts as gated).
bool is_gated(const std::vector<const CaseResult*>& row, const std::string& metric)
{
    bool any_verdicts = false;
    for (const auto* r : row) {
        any_verdicts = any_verdicts || !r->verdicts.empty();
        for (const auto& v : r->verdicts)
            if (v.metric == metric) return true;
    }
    return !any_verdicts;
}

std::string case_name(const CaseResult& r)
{
    return fmt::format("{} {} [{}]", r.variant, r.params_text, r.arch);
}

/// Metric names in table order, then any the table does not know (from newer results files).
std::vector<std::string> metric_order(const std::vector<harness::RunReport>& runs)
{
    std::set<std::string> seen;
    for (const auto& run : runs)
        for (const auto& r : run.results)
            for (const auto& [name, value] : r.metrics) seen.insert(name);
    std::vector<std::string> order;
    for (const auto& m : metric_table())
        if (seen.erase(std::string(m.name))) order.emplace_back(m.name);
    order.insert(order.end(), seen.begin(), seen.end());
    return order;
}

} // namespace

StabilityReport run_stability(const std::vector<harness::RunReport>& runs, const std::vector<std::string>& names)
{
    const auto name = [&](std::size_t i) { return i < names.size() ? names[i] : fmt::format("run {}", i + 1); };
    if (runs.size() < 2)
        throw Error(ErrorKind::bad_input,
                    fmt::format("stability needs the results of two runs or more, got {}", runs.size()));
    const auto& first = runs.front();
    for (std::size_t i = 1; i < runs.size(); ++i) {
        const auto refuse = [&](const char* what, const std::string& a, const std::string& b) {
            throw Error(ErrorKind::bad_input, fmt::format("{} and {} are not runs of the same thing ({} '{}' vs '{}')",
                                                          name(0), name(i), what, a, b));
        };
        if (runs[i].suite != first.suite) refuse("suite", first.suite, runs[i].suite);
        if (runs[i].mode != first.mode) refuse("mode", mode_name(first.mode), mode_name(runs[i].mode));
        if (runs[i].device_name != first.device_name) refuse("GPU", first.device_name, runs[i].device_name);
        if (runs[i].arch != first.arch) refuse("architecture", first.arch, runs[i].arch);
    }

    StabilityReport out;
    out.suite = first.suite;
    out.runs = runs.size();

    // The cases every run has and passed, in the first run's order.
    using Key = std::tuple<std::string, std::string, std::string>;
    std::vector<std::map<Key, const CaseResult*>> by_run(runs.size());
    for (std::size_t i = 0; i < runs.size(); ++i)
        for (const auto& r : runs[i].results) by_run[i][{r.variant, r.params_text, r.arch}] = &r;
    std::vector<std::vector<const CaseResult*>> compared; // one row per case, one column per run
    for (const auto& r : first.results) {
        const Key key{r.variant, r.params_text, r.arch};
        std::vector<const CaseResult*> row;
        std::string why;
        for (std::size_t i = 0; i < runs.size() && why.empty(); ++i) {
            const auto it = by_run[i].find(key);
            if (it == by_run[i].end())
                why = fmt::format("absent from {}", name(i));
            else if (it->second->status != CaseStatus::passed)
                why = fmt::format("{} in {}", case_status_name(it->second->status), name(i));
            else
                row.push_back(it->second);
        }
        if (why.empty())
            compared.push_back(std::move(row));
        else
            out.not_compared.push_back(fmt::format("{}: {}", case_name(r), why));
    }
    out.cases = compared.size();

    for (const auto& metric : metric_order(runs)) {
        MetricSpread spread;
        spread.metric = metric;
        const auto info = find_metric(metric);
        spread.stability = info ? info->stability : Stability::noisy;
        for (const auto& row : compared) {
            std::vector<double> values;
            for (const auto* r : row)
                if (const auto v = r->metric(metric)) values.push_back(*v);
            if (values.size() != row.size()) continue; // not measured in every run
            ++spread.cases;
            const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
            if (*lo == *hi) continue;
            ++spread.differing;
            const double relative = (*hi - *lo) / std::max(std::fabs(*hi), std::fabs(*lo));
            if (relative > spread.worst_spread) {
                spread.worst_spread = relative;
                spread.worst_case = case_name(*row.front());
                spread.worst_min = *lo;
                spread.worst_max = *hi;
            }
            if (spread.stability == Stability::exact)
                out.differences.push_back({case_name(*row.front()), metric, values, is_gated(row, metric)});
        }
        if (spread.cases > 0) out.metrics.push_back(std::move(spread));
    }
    return out;
}

std::string format_stability(const StabilityReport& report)
{
    std::string text = fmt::format("{}: {} runs, {} cases compared\n", report.suite, report.runs, report.cases);
    for (const auto& why : report.not_compared) text += fmt::format("  not compared: {}\n", why);

    std::size_t exact = 0, exact_figures = 0;
    for (const auto& m : report.metrics)
        if (m.stability == Stability::exact) {
            ++exact;
            exact_figures += m.cases;
        }
    const auto gated = static_cast<std::size_t>(std::count_if(report.differences.begin(), report.differences.end(),
                                                              [](const ExactDifference& d) { return d.gated; }));
    if (gated == 0) {
        text += fmt::format("exact: {} metrics, {} figures, identical in every run{}\n", exact, exact_figures,
                            report.differences.empty() ? "" : " but those below, which are not gated");
    } else {
        text += fmt::format("exact: {} of {} figures differ between runs:\n", gated, exact_figures);
        for (const auto& d : report.differences)
            if (d.gated) text += fmt::format("  {}  {}: {}\n", d.case_name, d.metric, fmt::join(d.values, " / "));
    }
    if (gated < report.differences.size()) {
        text += fmt::format("exact, not gated (shown only; the suite's rules ignore them): {} figures differ:\n",
                            report.differences.size() - gated);
        for (const auto& d : report.differences)
            if (!d.gated) text += fmt::format("  {}  {}: {}\n", d.case_name, d.metric, fmt::join(d.values, " / "));
    }

    const bool any_noisy = std::any_of(report.metrics.begin(), report.metrics.end(),
                                       [](const MetricSpread& m) { return m.stability == Stability::noisy; });
    if (!any_noisy) return text + "noisy: none measured\n";
    text += "noisy (largest spread over the runs, (max - min) / max):\n";
    for (const auto& m : report.metrics) {
        if (m.stability != Stability::noisy) continue;
        if (m.differing == 0) {
            text += fmt::format("  {:<28} identical in {} cases\n", m.metric, m.cases);
            continue;
        }
        const auto unit = find_metric(m.metric) ? std::string(find_metric(m.metric)->unit) : std::string();
        text += fmt::format("  {:<28} {:6.2f} %  {} ({:.6g} .. {:.6g} {}); {} of {} cases vary\n", m.metric,
                            100.0 * m.worst_spread, m.worst_case, m.worst_min, m.worst_max, unit, m.differing, m.cases);
    }
    return text;
}

} // namespace harness::compare
