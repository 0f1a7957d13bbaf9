#pragma once
// Several runs of one suite pooled into one, for baselines (`harness baseline update --runs N` or
// several `--from`): a kernel's times move with where its buffers land in GPU memory, which is
// fixed for a whole process, so a baseline from one process holds only one placement's times.

#include "harness/core/run_report.hxx"
#include "harness/suite/suite.hxx"

#include <string>
#include <vector>

namespace harness::pipeline {

struct PooledRuns {
    harness::RunReport report;      ///< the first run, with each case's time samples pooled
    std::vector<std::string> notes; ///< cases left out, and why
};

/// Pools runs of one suite on one GPU model (`names` label them in messages). A case that passed
/// in every run gets as many time samples from each run as the run with the fewest has (each run's
/// own quantiles), and its time figures from them (add_time_samples); its other figures are
/// the first run's. A case that did not pass in one run takes that run's result, so that it is not recorded. A case
/// absent from one run, or whose exact figures differ between runs, is left out, with a note. With
/// `suite`, an exact figure its rules do not gate (`ignore`) that differs between runs is dropped
/// from the case instead, with a note: a figure that is only shown must not keep the case's gated
/// figures out of the baseline (instrumented SASS sector counts of cp.async loads vary by a few
/// sectors between processes).
/// Throws Error(bad_input) for runs of different suites, modes or GPU models.
PooledRuns pool_runs(const std::vector<harness::RunReport>& runs, const std::vector<std::string>& names,
                     const suite::Suite* suite = nullptr);

} // namespace harness::pipeline
