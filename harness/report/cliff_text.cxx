#include "harness/report/cliff_text.hxx"

#include "harness/report/html_text.hxx"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace harness::report {

namespace {

/// Most serious first, as worst_verdict (core/case_result.cxx) orders a case's verdicts.
constexpr Verdict by_seriousness[] = {
    Verdict::expect_failed, Verdict::regressed, Verdict::not_measured, Verdict::not_gated, Verdict::waived,
    Verdict::improved,      Verdict::drifted,   Verdict::no_baseline,  Verdict::passed,    Verdict::skipped};

} // namespace

std::string cliff_map_title(const CliffMap& map)
{
    std::string where = map.others;
    if (!map.arch.empty()) where += (where.empty() ? "" : ", ") + map.arch;
    return fmt::format("{}{} vs {}{}", map.variant, map.figure.empty() ? "" : " " + map.figure, map.axis,
                       where.empty() ? "" : " (" + where + ")");
}

std::string cliff_position_text(const CliffMap& map, double x_before, double x_after, std::string_view arrow)
{
    return fmt::format("{} {} {} {}", map.axis, format_number(x_before), arrow, format_number(x_after));
}

std::string cliff_position_text(const CliffMap& map, const Cliff& cliff, std::string_view arrow)
{
    return cliff_position_text(map, cliff.x_before, cliff.x_after, arrow);
}

std::string cliff_levels_text(const CliffMap& map, const Cliff& cliff, std::string_view arrow)
{
    return fmt::format("{} {} {}{}", format_number(cliff.level_before), arrow, format_number(cliff.level_after),
                       map.unit.empty() ? "" : " " + map.unit);
}

std::string cliff_depth_text(double depth)
{
    if (std::isnan(depth)) return "n/a";
    // A step up from a level of zero has no relative size.
    if (std::isinf(depth)) return "from 0";
    const double percent = depth * 100;
    // Whole percent reads best for the deep steps a map is about; shallow ones keep a decimal.
    return std::fabs(percent) >= 10 ? fmt::format("{:+.0f} %", percent) : fmt::format("{:+.1f} %", percent);
}

std::string cliff_significance_text(const Cliff& cliff)
{
    if (!std::isfinite(cliff.significance)) return "exact";
    // The noise is an estimate: tenths matter only for steps that barely clear it.
    const double s = cliff.significance;
    return (std::fabs(s) >= 10 ? format_number(std::round(s)) : fmt::format("{:.1f}", s)) + "× noise";
}

std::string cliff_label(const Cliff& cliff)
{
    return fmt::format("{} {}", cliff_cause_name(cliff.cause), cliff_depth_text(cliff.depth));
}

const Cliff* deepest_cliff(const CliffMap& map)
{
    const Cliff* deepest = nullptr;
    for (const auto& c : map.cliffs)
        if (!deepest || std::fabs(c.depth) > std::fabs(deepest->depth)) deepest = &c;
    return deepest;
}

bool judges_whole_map(const CliffVerdict& verdict)
{
    return verdict.x_before == 0 && verdict.x_after == 0;
}

std::vector<const CliffVerdict*> cliff_verdicts(const CliffMap& map, const Cliff& cliff)
{
    // The gate names a cliff of this run by this run's place, so the places match exactly.
    std::vector<const CliffVerdict*> out;
    for (const auto& v : map.verdicts)
        if (!judges_whole_map(v) && v.x_before == cliff.x_before && v.x_after == cliff.x_after) out.push_back(&v);
    return out;
}

std::vector<const CliffVerdict*> verdicts_without_cliff(const CliffMap& map)
{
    std::vector<const CliffVerdict*> out;
    for (const auto& v : map.verdicts) {
        const bool at_a_cliff =
            !judges_whole_map(v) && std::any_of(map.cliffs.begin(), map.cliffs.end(), [&](const Cliff& c) {
                return v.x_before == c.x_before && v.x_after == c.x_after;
            });
        if (!at_a_cliff) out.push_back(&v);
    }
    return out;
}

std::optional<Verdict> worst_cliff_verdict(const std::vector<const CliffVerdict*>& verdicts)
{
    for (const Verdict kind : by_seriousness)
        for (const auto* v : verdicts)
            if (v->judgement.verdict == kind) return kind;
    return std::nullopt;
}

std::string cliff_verdict_counts(const CliffMap& map)
{
    std::string text;
    for (const Verdict kind : by_seriousness) {
        if (kind == Verdict::passed || kind == Verdict::skipped) continue;
        const auto n = std::count_if(map.verdicts.begin(), map.verdicts.end(),
                                     [&](const CliffVerdict& v) { return v.judgement.verdict == kind; });
        if (n > 0) text += fmt::format("{}{} {}", text.empty() ? "" : ", ", n, verdict_name(kind));
    }
    return text;
}

} // namespace harness::report
