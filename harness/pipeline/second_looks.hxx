#pragma once
// Second looks at a GPU run's figures before they are gated: a time verdict that is unsure gets
// more samples, and a time regression or a noisy counter beyond its rule is measured again in
// fresh worker processes, standing only when every process shows it.

#include "harness/compare/compare_run.hxx"
#include "harness/compile/kernel_cache.hxx"
#include "harness/core/case_result.hxx"
#include "harness/core/run_report.hxx"
#include "harness/run/gpu_session.hxx"
#include "harness/run/run_settings.hxx"
#include "harness/suite/suite.hxx"

#include <string>
#include <vector>

namespace harness::pipeline {

/// Appends `more` time samples (us) to a case's and recomputes its time figures (median, minimum,
/// noise, count, and the GFLOP/s and GB/s derived from the median).
void add_time_samples(CaseResult& r, const std::vector<double>& more);

/// Samples a resampling round takes for cases whose largest sample count is `most_samples` and
/// whose slowest median is `slowest_median_us`: as many again, but at most what fits ten of
/// `timing`'s budgets, and at least its min_samples.
int resample_count(std::size_t most_samples, double slowest_median_us, const suite::TimingSpec& timing);

/// The cases of `rep` (compared already) whose time verdict passed unsure: the median moved beyond
/// the rule, but the samples do not show it.
std::vector<std::size_t> unsure_time_cases(const harness::RunReport& rep);

/// A suite's report whose time verdicts are measured again, with what judges them.
struct TimeRecheck {
    harness::RunReport* rep = nullptr;
    const suite::Suite* suite = nullptr;
    const run::RunSettings* settings = nullptr; ///< resolved for the suite (run::resolve_settings)
    const compare::CompareOptions* gate = nullptr;
};

/// Gives every case whose time verdict is unsure more samples (resample_count), in a run of those
/// cases alone (and their points' references), unprofiled; up to each suite's
/// `settings.resample_rounds` rounds, each after comparing afresh. Every suite's cases of a round
/// run together, spread over the run's GPUs. A verdict that is neither clearly the same nor
/// clearly different is decided by more evidence. A round that fails leaves the verdicts as they
/// were, with a note.
void resample_unsure(const std::vector<TimeRecheck>& jobs, const run::DeviceInfo& device,
                     const compile::CompileCache* cache);

/// The result in `run` of the case `r` names (variant, parameters, architecture), or null.
const CaseResult* find_case(const harness::RunReport& run, const CaseResult& r);

/// The cases of `rep` (compared already) whose time verdict regressed.
std::vector<std::size_t> regressed_time_cases(const harness::RunReport& rep);

/// Judges the time regression of case `i` of `rep` with `second`, its samples from a fresh worker
/// process, after `earlier_processes` (1 or 2) whose samples the case holds. When they alone
/// regress too (or are unsure), they join the earlier samples and the case is judged on all;
/// when they pass, the case is judged on them alone: the earlier samples had shifted as a whole,
/// as a kernel's times do with where its buffers land in GPU memory, and its message keeps both
/// medians. Returns whether the regression reproduced.
bool confirm_time_regression(harness::RunReport& rep, std::size_t i, const std::vector<double>& second,
                             const suite::Suite& suite, const compare::CompareOptions& gate, int earlier_processes = 1);

/// Measures every time regression of each suite again in a run of those cases alone, in fresh
/// worker processes, unprofiled (confirm_time_regression), and those slower again once more in
/// another: a regression stands only when every process is slower. Every suite's cases of a round
/// run together, spread over the run's GPUs. Skipped for a suite with `resample_rounds` 0; a
/// failed run leaves the regressions as measured, with a note.
void confirm_time_regressions(const std::vector<TimeRecheck>& jobs, const run::DeviceInfo& device,
                              const compile::CompileCache* cache);

/// The noisy counters (DRAM bytes, achieved occupancy, ...; not the time) whose verdict regressed
/// in a passed case of a compared report.
std::vector<std::string> regressed_counters(const CaseResult& r);

/// Judges the noisy counters that regressed in case `i` of `rep` with `again`, the case measured in
/// a fresh worker process after `earlier_processes` (1 or 2). When they are beyond their rules
/// there too, the case keeps its figures and the regression stands; when not, the fresh
/// process's figures replace them: a kernel's DRAM traffic moves with where the process put its
/// buffers and modules, which no rule within one process sees. The message keeps both. Returns
/// whether the regression reproduced.
bool confirm_counter_regression(harness::RunReport& rep, std::size_t i, const CaseResult& again,
                                const suite::Suite& suite, const compare::CompareOptions& gate,
                                int earlier_processes = 1);

/// Measures every case whose noisy counters regressed again in fresh worker processes, those
/// counters alone (confirm_counter_regression), up to two: a regression stands only when every
/// process shows it. Every suite's cases of a round run together, spread over the run's GPUs.
/// Skipped for a suite with `resample_rounds` 0 or unprofiled; a failed run leaves the figures as
/// measured, with a note.
void confirm_counter_regressions(const std::vector<TimeRecheck>& jobs, const run::DeviceInfo& device,
                                 const compile::CompileCache* cache);

} // namespace harness::pipeline
