#pragma once
// Summary statistics of timing samples and the rule that decides when to stop sampling.

#include "harness/core/case_result.hxx"
#include "harness/suite/suite.hxx"

#include <vector>

namespace harness::run {

/// Summary of a set of time samples (microseconds).
struct TimingSummary {
    std::size_t samples = 0;
    double median_us = 0.0;
    double min_us = 0.0;
    double mean_us = 0.0;
    double relative_noise = 0.0; ///< sample standard deviation / mean
};

TimingSummary summarize(const std::vector<double>& samples_us);

/// Sets a case's time figures (median, minimum, noise in %, sample count) from `t`.
void set_time_figures(CaseResult& r, const TimingSummary& t);

/// True once enough samples are taken and they are quiet enough, or the budget is spent.
bool enough_samples(const std::vector<double>& samples_us, double elapsed_s, const suite::TimingSpec& policy);

} // namespace harness::run
