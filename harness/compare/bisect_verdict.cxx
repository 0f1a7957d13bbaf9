#include "harness/compare/bisect_verdict.hxx"

#include "harness/compare/mann_whitney.hxx"
#include "harness/core/enum_names.hxx"
#include "harness/core/stats.hxx"

#include <cmath>

namespace harness::compare {

const char* step_verdict_name(StepVerdict verdict)
{
    constexpr EnumName<StepVerdict> names[] = {
        {StepVerdict::same, "same"}, {StepVerdict::different, "different"}, {StepVerdict::unsure, "unsure"}};
    return enum_name(names, verdict, "unsure");
}

StepVerdict compare_samples(std::span<const double> a, std::span<const double> b, const SampleThresholds& t)
{
    if (a.size() < t.min_samples || b.size() < t.min_samples) return StepVerdict::unsure;
    const double p = mann_whitney(a, b).p_two_sided;
    if (p < t.differ_below) return StepVerdict::different;
    if (p > t.same_above) return StepVerdict::same;
    return StepVerdict::unsure;
}

StepVerdict time_step_verdict(std::span<const double> good, std::span<const double> bad, std::span<const double> step,
                              const SampleThresholds& t)
{
    const StepVerdict to_good = compare_samples(step, good, t);
    const StepVerdict to_bad = compare_samples(step, bad, t);
    if (to_good == StepVerdict::same && to_bad == StepVerdict::different) return StepVerdict::same;
    if (to_good == StepVerdict::different && to_bad == StepVerdict::same) return StepVerdict::different;
    if (to_good == StepVerdict::different && to_bad == StepVerdict::different) {
        // Between the two ends (or beyond both): the change that moved it furthest is on its side.
        const double m = median(step);
        return std::abs(m - median(good)) <= std::abs(m - median(bad)) ? StepVerdict::same : StepVerdict::different;
    }
    return StepVerdict::unsure;
}

} // namespace harness::compare
