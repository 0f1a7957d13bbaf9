#include "harness/pipeline/changed_only.hxx"

#include "harness/compare/sass_baseline.hxx"
#include "harness/compile/sass_case_code.hxx"
#include "harness/compile/sass_disassembly.hxx"
#include "harness/suite/compile_params.hxx"

#include <fmt/format.h>
#include <set>

namespace harness::pipeline {

namespace fs = std::filesystem;

SassCodeFile gpu_sass_code(const suite::Suite& suite, const std::vector<suite::Case>& cases,
                           const compile::SuiteModules& compiled, const std::string& arch,
                           const compile::CompileCache* cache, std::string* not_measured)
{
    SassCodeFile code{suite.name, arch, {}, {}};
    if (const auto& nvdisasm = compile::find_nvdisasm(); nvdisasm.program.empty()) {
        if (not_measured) *not_measured = nvdisasm.not_found_reason;
        return code;
    }
    std::map<std::string, compile::ModuleSass> sass; // by compile key
    for (const auto& c : cases) {
        const auto& variant = suite.variants[c.variant];
        if (!suite::runs_module_kernels(variant.kind)) continue;
        const std::string key = suite::compile_key(variant, c.params);
        const auto module = compiled.modules.find(key);
        if (module == compiled.modules.end()) continue;
        auto it = sass.find(key);
        if (it == sass.end())
            it = sass.emplace(key,
                              compile::module_sass(module->second, fmt::format("the {} cubin of {}", arch, key), cache))
                     .first;
        if (auto k = compile::add_case_code(code, suite, variant, c.params, arch, module->second, it->second);
            !k.hash.empty())
            code.cases[{variant.name, c.params_text}].second = std::move(k);
    }
    return code;
}

ChangedOnlyPlan plan_changed_only(const suite::Suite& suite, const std::vector<suite::Case>& cases,
                                  const SassCodeFile& code, const fs::path& baseline_dir)
{
    ChangedOnlyPlan plan;
    plan.carried.assign(cases.size(), false);
    const fs::path path = compare::sass_code_path(baseline_dir, suite.name, code.arch);
    const auto baseline = compare::read_sass_code(path, suite.name, code.arch);
    if (!baseline) {
        plan.changed = cases.size();
        plan.notes.push_back(fmt::format("--changed-only: no {} (record it with `harness baseline update` on the "
                                         "GPU): every case runs",
                                         path.filename().string()));
        return plan;
    }
    std::set<std::size_t> points_that_run;
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const auto& c = cases[i];
        const auto& name = suite.variants[c.variant].name;
        const auto now = code.cases.find({name, c.params_text});
        const auto was = baseline->cases.find({name, c.params_text});
        plan.carried[i] = now != code.cases.end() && was != baseline->cases.end() && !now->second.second.hash.empty() &&
                          now->second.second.hash == was->second.second.hash;
        if (!plan.carried[i] && name != suite.reference) points_that_run.insert(c.point);
    }
    for (std::size_t i = 0; i < cases.size(); ++i)
        if (plan.carried[i] && suite.variants[cases[i].variant].name == suite.reference &&
            points_that_run.contains(cases[i].point))
            plan.carried[i] = false;
    for (const bool carried : plan.carried) ++(carried ? plan.carried_count : plan.changed);
    plan.notes.push_back(fmt::format("--changed-only: {} cases run (their SASS, launch or inputs moved, or their "
                                     "baseline has no GPU hash), {} carried as unchanged (SASS identical to the "
                                     "baseline's: not measured, not gated)",
                                     plan.changed, plan.carried_count));
    return plan;
}

CaseResult carried_case(const suite::Suite& suite, const suite::Case& c, const std::string& arch)
{
    const auto& variant = suite.variants[c.variant];
    CaseResult r;
    r.suite = suite.name;
    r.variant = variant.name;
    r.arch = arch;
    r.params = {c.params.begin(), c.params.end()};
    r.params_text = c.params_text;
    r.point = c.point;
    r.launches = suite::case_launches(suite, variant, c.params);
    r.status = CaseStatus::skipped;
    r.unchanged = true;
    r.message = "unchanged: SASS identical to the baseline's (its kernels' normalised SASS, launch, inputs and "
                "arguments hash as when its baseline was recorded): carried, not measured";
    return r;
}

} // namespace harness::pipeline
