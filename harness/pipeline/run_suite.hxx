#pragma once
// The flow of one suite, from a loaded suite to a gated report: run on the GPU (gpu_run.hxx) or in
// the static tier (static_run.hxx), measure again what is unsure or regressed (second_looks.hxx),
// compare with baselines and expectations and write the reports (gating.hxx). `harness run`,
// `harness baseline update` and the GPU tests call it.

#include "harness/compare/compare_run.hxx"
#include "harness/compile/kernel_cache.hxx"
#include "harness/core/run_report.hxx"
#include "harness/pipeline/device_choice.hxx"
#include "harness/pipeline/gating.hxx"
#include "harness/pipeline/gpu_run.hxx"
#include "harness/pipeline/static_run.hxx"
#include "harness/run/gpu_session.hxx"
#include "harness/run/run_settings.hxx"
#include "harness/suite/suite.hxx"

#include <functional>
#include <optional>
#include <ostream>
#include <vector>

namespace harness::pipeline {

/// One suite on `device` when there is one, else in the static tier, with `settings` resolved for it
/// (run::resolve_settings).
harness::RunReport run_suite(const suite::Suite& suite, const std::optional<run::DeviceInfo>& device,
                             const run::RunSettings& settings, const compile::CompileCache* cache);

/// One suite of a run, and where its verdicts and reports go.
struct SuiteJob {
    const suite::Suite* suite = nullptr;
    run::RunSettings settings; ///< the command line's, resolved for the suite (run::resolve_settings)
    compare::CompareOptions gate;
    ReportOptions reports;
};

/// Runs several suites, compares each with its baselines and `expect:` rules, and writes every
/// reporter's output into its `reports.out_dir` (and the console's to `console`). On a GPU they run
/// at once (run_suites_gpu), then each is resampled, confirmed, gated and reported in order; in the
/// static tier one after another. `after_each` gets each suite's gated report as soon as it is
/// written.
void run_and_report_all(const std::vector<SuiteJob>& jobs, const std::optional<run::DeviceInfo>& device,
                        const compile::CompileCache* cache, std::ostream& console,
                        const std::function<void(const harness::RunReport&)>& after_each);

} // namespace harness::pipeline
