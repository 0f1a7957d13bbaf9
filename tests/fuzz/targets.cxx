#include "targets.hxx"

namespace harness::fuzz {

std::span<const Target> target_table()
{
    static const Target table[] = {
        {"suite", "parse_suite, expand_cases, and every launch, buffer and rate expression of every case", ".yaml",
         false, suite_tokens, run_suite},
        {"expression", "Expression::parse and evaluate with ordinary and extreme bindings", ".expr", false,
         expression_tokens, run_expression},
        {"baseline", "parse_baseline, read as baselines/<suite>/<key>.csv", ".csv", true, baseline_tokens,
         run_baseline},
        {"waivers", "parse_waivers", ".yaml", false, waiver_tokens, run_waivers},
        {"results", "read_results_json, then every report rendered from what it read", ".json", false, results_tokens,
         run_results},
        {"module", "a cubin or fatbin's kinds, architectures and kernels as scaffold lists them, and its skeleton",
         ".cubin", false, module_tokens, run_module},
        {"cliffs", "parse_cliff_baseline, read as baselines/<suite>/<key>.cliffs.csv, and its maps looked up",
         ".cliffs.csv", true, cliff_tokens, run_cliffs},
        {"cliff_levels", "parse_cliff_levels, read as baselines/<suite>/<key>.levels.csv, and its maps looked up",
         ".levels.csv", true, cliff_tokens, run_cliff_levels},
        {"ptx", "parse_ptx of a module's PTX, then every kernel's accesses predicted at a small launch", ".ptx", false,
         ptx_tokens, run_ptx},
    };
    return table;
}

const Target* find_target(std::string_view name)
{
    for (const auto& target : target_table())
        if (name == target.name) return &target;
    return nullptr;
}

} // namespace harness::fuzz
