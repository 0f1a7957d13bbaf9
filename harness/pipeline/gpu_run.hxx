#pragma once
// A run on the GPU: every suite compiled, then all their cases spread over the run's GPUs by
// expected cost (case_costs.hxx), run in isolated workers (run/isolated_runner.hxx), and each
// suite's report put together with the notes that say where the time went.

#include "harness/compile/kernel_cache.hxx"
#include "harness/core/run_report.hxx"
#include "harness/run/case_runner.hxx"
#include "harness/run/gpu_session.hxx"
#include "harness/run/run_settings.hxx"
#include "harness/suite/suite.hxx"

#include <cstddef>
#include <vector>

namespace harness::pipeline {

/// One suite of a GPU run over several, with its own settings.
struct SuiteRunRequest {
    suite::Suite suite;
    run::RunSettings settings; ///< resolved for the suite (run::resolve_settings)
};

/// What a worker needs of a suite's settings: how it measures every case it runs (the time source,
/// the L2 between samples, timing or verification alone, counters and their cache, which is kept
/// in the folder of the kernel cache `cache`: none, no counter cache).
run::RunOptions worker_options(const run::RunSettings& settings, const compile::CompileCache* cache);

/// The suites of a run that share workers: indices into `settings`, grouped by the worker options
/// each calls for (worker_options), groups in the order of their first suite. A worker measures
/// every case alike, so suites that ask for different measurements (one hot, one not; one
/// profiled, one not) run in workers of their own, one group after another; the case timeout and
/// the timing budget are each suite's own within a group.
std::vector<std::vector<std::size_t>> worker_groups(const std::vector<run::RunSettings>& settings,
                                                    const compile::CompileCache* cache);

/// Several suites on the GPUs at once (`settings.devices` of the first request names them, or
/// `device` alone): every suite compiled first, then all their cases spread over the GPUs case by
/// case, by expected cost (case_costs.hxx), one worker per GPU serving every suite of a worker
/// group (worker_groups); a case's verification is as strict as on one GPU. Each case is timed for
/// its suite's budget and killed after its suite's timeout, as the request's settings (resolved)
/// say. One report per request, in order.
std::vector<harness::RunReport> run_suites_gpu(const std::vector<SuiteRunRequest>& requests,
                                               const run::DeviceInfo& device, const compile::CompileCache* cache);

/// One suite on the GPU: compile, verify, time, measure (run_suites_gpu of one request, `settings`
/// resolved for the suite).
harness::RunReport run_suite_gpu(suite::Suite suite, const run::DeviceInfo& device, const run::RunSettings& settings,
                                 const compile::CompileCache* cache);

} // namespace harness::pipeline
