#include "harness/compare/sass_diff.hxx"

#include "harness/compare/sass_baseline.hxx"
#include "harness/compile/sass_classes.hxx"

#include <fmt/format.h>

namespace harness::compare {

namespace {

/// The recording asked for, else the other one; nullptr when neither is there.
const SassCaseCode* recorded(const SassCodeFile& file, bool gpu, const std::string& variant, const std::string& params)
{
    const auto it = file.cases.find({variant, params});
    if (it == file.cases.end()) return nullptr;
    const SassCaseCode& wanted = gpu ? it->second.second : it->second.first;
    const SassCaseCode& other = gpu ? it->second.first : it->second.second;
    if (!wanted.hash.empty()) return &wanted;
    return other.hash.empty() ? nullptr : &other;
}

std::vector<const SassKernelCode*> kernels_of(const SassCodeFile& file, const SassCaseCode& code)
{
    std::vector<const SassKernelCode*> out;
    for (const auto& id : code.kernels)
        if (const SassKernelCode* k = file.kernel(id); k && std::find(out.begin(), out.end(), k) == out.end())
            out.push_back(k);
    return out;
}

/// What a reviewer looks for first among the opcodes a hunk moved: memory accesses, asynchronous
/// copies and tensor-core instructions (what the SASS gate judges), then floating-point
/// arithmetic and conversions, then integer arithmetic, moves and control flow.
int opcode_rank(std::string_view opcode)
{
    const auto c = compile::classify_instruction(opcode);
    if (!c) return 2;
    switch (compile::sass_class_info(*c).family) {
    case compile::SassFamily::global_ld:
    case compile::SassFamily::global_st:
    case compile::SassFamily::shared_ld:
    case compile::SassFamily::shared_st:
    case compile::SassFamily::ldsm:
    case compile::SassFamily::local:
    case compile::SassFamily::async:
    case compile::SassFamily::tensor: return 0;
    case compile::SassFamily::arithmetic: return 1;
    case compile::SassFamily::control: return 2;
    }
    return 2;
}

} // namespace

std::vector<std::string> diff_anchors(const CaseResult& r)
{
    std::vector<std::string> anchors;
    for (const bool sass_rule : {true, false})
        for (const auto& v : r.verdicts)
            if (verdict_fails(v.verdict) && (v.rule == "sass") == sass_rule && !v.location.empty() &&
                std::find(anchors.begin(), anchors.end(), v.location) == anchors.end())
                anchors.push_back(v.location);
    return anchors;
}

std::optional<CaseSassDiff> case_sass_diff(const SassCodeFile& baseline, bool baseline_gpu, const SassCodeFile& current,
                                           bool current_gpu, const std::string& variant, const std::string& params,
                                           const std::vector<std::string>& anchors)
{
    const SassCaseCode* was = recorded(baseline, baseline_gpu, variant, params);
    const SassCaseCode* now = recorded(current, current_gpu, variant, params);
    if (!was || !now) return std::nullopt;
    if (was->kernels == now->kernels) return CaseSassDiff{};
    const auto before = kernels_of(baseline, *was), after = kernels_of(current, *now);
    return CaseSassDiff{sass_diff_text(before, after, anchors, opcode_rank),
                        sass_diff_excerpt(before, after, anchors, sass_diff_excerpt_lines, opcode_rank)};
}

void attach_sass_diffs(harness::RunReport& report, const std::filesystem::path& baseline_dir)
{
    // Results read back (a merge) carry no code: the diffs they hold stand.
    if (report.sass_code.empty()) return;
    const bool gpu = report.mode != RunMode::static_tier;
    std::map<std::string, std::optional<SassCodeFile>> baselines; // by arch
    for (auto& r : report.results) {
        r.sass_diff.clear();
        r.sass_diff_excerpt.clear();
        if (r.status != CaseStatus::passed) continue;
        if (std::none_of(r.verdicts.begin(), r.verdicts.end(),
                         [](const MetricVerdict& v) { return verdict_fails(v.verdict); }))
            continue;
        const auto current = report.sass_code.find(r.arch);
        if (current == report.sass_code.end()) continue;
        auto it = baselines.find(r.arch);
        if (it == baselines.end())
            it = baselines
                     .emplace(r.arch,
                              read_sass_code(sass_code_path(baseline_dir, report.suite, r.arch), report.suite, r.arch))
                     .first;
        if (!it->second) continue;
        if (auto diff =
                case_sass_diff(*it->second, gpu, current->second, gpu, r.variant, r.params_text, diff_anchors(r))) {
            r.sass_diff = std::move(diff->text);
            r.sass_diff_excerpt = std::move(diff->excerpt);
        }
    }
}

} // namespace harness::compare
