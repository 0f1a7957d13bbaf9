#pragma once
// The verdict of one bisect step on a noisy figure (time): are the step's samples like the good
// commit's, like the bad commit's, or can the samples not tell yet? Three answers, as Chromium's
// Pinpoint gives them: an unsure step is measured again with more samples before it is decided.

#include <span>
#include <string>

namespace harness::compare {

/// Where a bisect step stands against the commits at both ends.
enum class StepVerdict {
    same,      ///< like the good commit: the change comes later
    different, ///< like the bad commit: the change is here or earlier
    unsure,    ///< the samples cannot tell yet: take more
};

const char* step_verdict_name(StepVerdict verdict);

/// When two samples count as from different distributions, and when as from the same one (the
/// p-values of a two-sided Mann-Whitney test; between the two, the samples cannot tell).
struct SampleThresholds {
    double differ_below = 0.001; ///< p below this: the samples differ
    double same_above = 0.05;    ///< p above this: no sign that they differ
    std::size_t min_samples = 5; ///< fewer samples on a side: unsure
};

/// How two samples compare: StepVerdict::same, different, or unsure (between the thresholds).
StepVerdict compare_samples(std::span<const double> a, std::span<const double> b, const SampleThresholds& t = {});

/// The verdict on a step's samples against the good and the bad commit's: same when they match the
/// good's and differ from the bad's, different when the other way round; when they differ from both
/// (a change between the two), the nearer median decides; otherwise unsure.
StepVerdict time_step_verdict(std::span<const double> good, std::span<const double> bad, std::span<const double> step,
                              const SampleThresholds& t = {});

} // namespace harness::compare
