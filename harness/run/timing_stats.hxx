#pragma once
// Summary statistics of timing samples, and the rules that decide how many to take next and when
// to stop sampling.

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

/// How many samples the next batch takes, after `taken` in `elapsed_s` (a batch is one profiler
/// pass when kernel durations are read): as many as fit in what is left of `policy`'s budget at
/// the pace so far, at least 1 and at most `most`, and no more than its max_samples still wants.
std::size_t next_batch_size(std::size_t taken, double elapsed_s, const suite::TimingSpec& policy, std::size_t most);

/// A case's time samples (us), with each launch's own durations sample by sample where every
/// sample was read kernel by kernel (one series per launch; none otherwise).
struct TimeSamples {
    std::vector<double> total;
    std::vector<std::vector<double>> steps;

    void clear()
    {
        total.clear();
        steps.clear();
    }
    /// Keeps the samples whose entry in `keep` (one per sample of `total`) is set, in every series.
    void keep_only(const std::vector<bool>& keep);
};

} // namespace harness::run
