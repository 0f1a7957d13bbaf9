#include "harness/profile/derived_metrics.hxx"

#include "harness/core/metrics.hxx"

#include <functional>
#include <optional>

namespace harness::profile {

namespace {

struct DerivedRule {
    const char* name;
    std::vector<std::string> inputs;
    std::function<std::optional<double>(const std::vector<double>&)> compute;
};

std::optional<double> ratio(double num, double den)
{
    if (den == 0) return std::nullopt;
    return num / den;
}

const std::vector<DerivedRule>& rules()
{
    // Order matters: later rules may read what earlier ones added (dram_bytes before intensity).
    static const std::vector<DerivedRule> table = {
        {metric::global_ld_sectors_per_request,
         {metric::global_ld_sectors, metric::global_ld_requests},
         [](const auto& v) { return ratio(v[0], v[1]); }},
        {metric::global_st_sectors_per_request,
         {metric::global_st_sectors, metric::global_st_requests},
         [](const auto& v) { return ratio(v[0], v[1]); }},
        {metric::excess_global_sectors,
         {metric::global_sectors, metric::global_sectors_ideal},
         [](const auto& v) { return std::optional<double>(v[0] - v[1]); }},
        {metric::excess_global_sectors_pct,
         {metric::global_sectors, metric::global_sectors_ideal},
         [](const auto& v) {
             const auto r = ratio(v[0] - v[1], v[1]);
             return r ? std::optional<double>(100.0 * *r) : std::nullopt;
         }},
        {metric::excess_shared_wavefronts,
         {metric::shared_wavefronts, metric::shared_wavefronts_ideal},
         [](const auto& v) { return std::optional<double>(v[0] - v[1]); }},
        {metric::shared_conflict_ways,
         {metric::shared_wavefronts, metric::shared_wavefronts_ideal},
         [](const auto& v) { return ratio(v[0], v[1]); }},
        {metric::flops,
         {metric::fp32_add_thread_instructions, metric::fp32_mul_thread_instructions,
          metric::fp32_fma_thread_instructions},
         [](const auto& v) { return std::optional<double>(v[0] + v[1] + 2.0 * v[2]); }},
        {metric::dram_bytes,
         {metric::dram_read_bytes, metric::dram_write_bytes},
         [](const auto& v) { return std::optional<double>(v[0] + v[1]); }},
        {metric::arithmetic_intensity,
         {metric::flops, metric::dram_bytes},
         [](const auto& v) { return ratio(v[0], v[1]); }},
        // FLOP / us = MFLOP/s; / 1e3 -> GFLOP/s
        {metric::achieved_gflops,
         {metric::flops, metric::time_median},
         [](const auto& v) {
             const auto r = ratio(v[0], v[1]);
             return r ? std::optional<double>(*r / 1e3) : std::nullopt;
         }},
    };
    return table;
}

} // namespace

void add_derived_metrics(CaseResult& r)
{
    // The variant's own figures, then each launch's from its own ("excess_global_sectors@rstd_kernel").
    std::vector<std::string> scopes{""};
    for (const auto& l : r.launches)
        if (!l.label.empty()) scopes.push_back(l.label);
    for (const auto& scope : scopes) {
        const auto named = [&](const std::string& m) { return scope.empty() ? m : launch_metric_name(m, scope); };
        for (const auto& rule : rules()) {
            std::vector<double> inputs;
            for (const auto& name : rule.inputs) {
                const auto v = r.metric(named(name));
                if (!v) break;
                inputs.push_back(*v);
            }
            if (inputs.size() != rule.inputs.size()) continue;
            if (const auto value = rule.compute(inputs)) r.set_metric(named(rule.name), *value);
        }
    }
}

std::vector<std::string> inputs_of(const std::string& derived_metric)
{
    for (const auto& rule : rules()) {
        if (rule.name != derived_metric) continue;
        std::vector<std::string> out;
        for (const auto& input : rule.inputs) {
            const auto deeper = inputs_of(input);
            if (deeper.empty())
                out.push_back(input);
            else
                out.insert(out.end(), deeper.begin(), deeper.end());
        }
        return out;
    }
    return {};
}

} // namespace harness::profile
