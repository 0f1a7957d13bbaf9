#include "harness/profile/derived_metrics.hxx"

#include "harness/core/metrics.hxx"

#include <optional>

namespace harness::profile {

void add_derived_metrics(CaseResult& r)
{
    // The variant's own figures, then each launch's from its own ("excess_global_sectors@rstd_kernel").
    std::vector<std::string> scopes{""};
    for (const auto& l : r.launches)
        if (!l.label.empty()) scopes.push_back(l.label);
    for (const auto& scope : scopes) {
        const auto named = [&](std::string_view m) {
            return scope.empty() ? std::string(m) : launch_metric_name(m, scope);
        };
        // In table order: a formula may read a figure derived by an earlier row.
        for (const auto& m : metric_table()) {
            const Formula& formula = m.roles.formula;
            if (m.collector != Collector::derived || !formula.compute) continue;
            std::vector<double> inputs;
            for (std::size_t i = 0; i < formula.input_count(); ++i) {
                const auto v = r.metric(named(formula.inputs[i]));
                if (!v) break;
                inputs.push_back(*v);
            }
            if (inputs.size() != formula.input_count()) continue;
            if (const auto value = formula.compute(inputs)) r.set_metric(named(m.name), *value);
        }
    }
}

std::vector<std::string> inputs_of(const std::string& derived_metric)
{
    // A launch's figure ("flops@rstd_kernel") names no formula of its own.
    if (!split_launch_metric(derived_metric).second.empty()) return {};
    const auto info = find_metric(derived_metric);
    if (!info || info->collector != Collector::derived || !info->roles.formula.compute) return {};
    const Formula& formula = info->roles.formula;
    std::vector<std::string> out;
    for (std::size_t i = 0; i < formula.input_count(); ++i) {
        const std::string input(formula.inputs[i]);
        const auto deeper = inputs_of(input);
        if (deeper.empty())
            out.push_back(input);
        else
            out.insert(out.end(), deeper.begin(), deeper.end());
    }
    return out;
}

} // namespace harness::profile
