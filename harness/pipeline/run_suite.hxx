#pragma once
// The flow of one suite, from a loaded suite to a gated report: compile, run on the GPU (verify,
// time, measure) or read the static tier, compare with baselines and expectations, write the
// reports. `harness run`, `harness baseline update` and the GPU tests call it.

#include "harness/compare/compare_run.hxx"
#include "harness/compile/nvrtc_compiler.hxx"
#include "harness/report/reporters.hxx"
#include "harness/run/case_runner.hxx"
#include "harness/run/gpu_session.hxx"
#include "harness/suite/suite.hxx"

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace harness::pipeline {

/// `--shard index/count`: one share of a suite's sweep points (pipeline/shard.hxx).
struct ShardRequest {
    std::size_t index = 1; ///< 1-based
    std::size_t count = 1;
    std::filesystem::path baseline_dir; ///< whose recorded times balance the shards: the run's baselines
};

/// How to run a suite (the command-line options of `harness run`).
struct SuiteRunOptions {
    int device = 0;
    std::string devices;                    ///< `--devices`: "all" or "0,1"; empty: `device` alone
    bool hot = false;                       ///< no L2 flush between timed samples
    bool event_timing = false;              ///< time with CUDA events instead of kernel durations
    bool verify_only = false;               ///< no timing
    double timeout_s = 0.0;                 ///< 0: the suite's timing.timeout_s
    double budget_s = 0.0;                  ///< 0: the suite's timing.budget_s
    std::vector<std::string> only_variants; ///< empty: all (the reference always runs)
    bool static_only = false;               ///< the static tier even with a GPU
    std::vector<std::string> archs;         ///< static tier; empty: the suite's archs
    bool profile = true;                    ///< collect hardware counters (CUPTI)
    bool external_profiler = false;         ///< run each case once in its NVTX range, nothing else
    bool counter_cache = false;             ///< reuse exact counters from <cache>/counters
    bool fresh_counters = false;            ///< with counter_cache: measure afresh, refresh the entries
    bool require_gpu = false;               ///< no usable GPU is an error, not the static tier
    std::string require_gpu_because;        ///< "--require-gpu", "CI mode (CI=true)": for the message
    std::optional<ShardRequest> shard;      ///< only this share of the cases; absent: all of them
    std::filesystem::path baseline_dir;     ///< whose recorded times balance `devices`; empty: case counts do
    /// Rounds of more time samples for cases whose time verdict is unsure (0: none).
    int resample_rounds = 2;
    /// Only these cases, (variant, params text), and the reference at their points; empty: all.
    std::vector<std::pair<std::string, std::string>> only_cases;
    /// Keep what each case cost for the next run's schedule (case_costs.hxx); off for a second
    /// look, whose fixed samples and lone counters are not what the case costs in a run.
    bool record_costs = true;
};

/// A run's report before its results: the suite, the tool's and the compiler's versions, the
/// suite's git revision and the time.
harness::RunReport report_for(const suite::Suite& s);

/// The cases a run of `s` covers: all of them, or its shard's (recorded in `shard`).
std::vector<suite::Case> cases_to_run(const suite::Suite& s, const SuiteRunOptions& options, ShardInfo& shard);

/// The GPU to run on, or nullopt after saying on stderr why the static tier runs instead.
std::optional<run::DeviceInfo> choose_device(const SuiteRunOptions& options);

/// The static tier of one suite: every variant compiled for each architecture, resources read.
harness::RunReport run_suite_static(const suite::Suite& suite, const SuiteRunOptions& options,
                                    const compile::CompileCache* cache);

/// One suite on the GPU: compile, verify, time, measure.
/// The GPUs a run spreads over: `first` (from choose_device) alone, or every GPU `options.devices`
/// names, probed. Throws Error(bad_input) for a bad list, Error(environment) when one of them is
/// unusable or of another model than `first` (baselines of noisy figures are per GPU model).
std::vector<run::DeviceInfo> choose_devices(const SuiteRunOptions& options, const run::DeviceInfo& first);

harness::RunReport run_suite_gpu(suite::Suite suite, const run::DeviceInfo& device, const SuiteRunOptions& options,
                                 const compile::CompileCache* cache);

/// One suite of a GPU run over several, and how to run it.
struct SuiteRunRequest {
    suite::Suite suite;
    SuiteRunOptions options;
};

/// Several suites on the GPUs at once (`options.devices` of the first request names them, or
/// `device` alone): every suite compiled first, then all their cases spread over the GPUs case by
/// case, by expected cost (case_costs.hxx), one worker per GPU serving every suite; a case's
/// verification is as strict as on one GPU. One report per request, in order.
std::vector<harness::RunReport> run_suites_gpu(const std::vector<SuiteRunRequest>& requests,
                                               const run::DeviceInfo& device, const compile::CompileCache* cache);

/// One suite on `device` when there is one, else in the static tier.
harness::RunReport run_suite(const suite::Suite& suite, const std::optional<run::DeviceInfo>& device,
                             const SuiteRunOptions& options, const compile::CompileCache* cache);

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
    const SuiteRunOptions* options = nullptr;
    const compare::CompareOptions* gate = nullptr;
};

/// Gives every case whose time verdict is unsure more samples (resample_count), in a run of those
/// cases alone (and their points' references), unprofiled; up to each suite's
/// `options.resample_rounds` rounds, each after comparing afresh. Every suite's cases of a round
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

/// Where a suite's reports go and what they show beside the run.
struct ReportOptions {
    std::filesystem::path out_dir;    ///< every reporter's file goes here
    bool fail_on_improvement = false; ///< improved figures fail the run
    /// A history store (`--history`): each failing figure shows its recent values on the default
    /// branch (the first-parent history of the suite's repository); empty: none.
    std::filesystem::path history_store;
};

/// Gives every failing verdict of `report` its recent history from the store at `store`
/// (history::attach_recent_history), commits ordered by `repo`. A store that cannot be read
/// leaves the report as it was, with a note saying why; run files left out are named on `console`.
void add_recent_history(harness::RunReport& report, const std::filesystem::path& store,
                        const std::filesystem::path& repo, std::ostream& console);

/// Compares a run of `suite` with its baselines and `expect:` rules (replacing an earlier
/// comparison, as when merged shards are gated together) and writes every reporter's output into
/// `reports.out_dir` (and the console's to `console`).
void gate_and_report(harness::RunReport& report, const suite::Suite& suite, const compare::CompareOptions& gate,
                     const ReportOptions& reports, std::ostream& console);

/// Runs one suite, compares it with its baselines and `expect:` rules, and writes every reporter's
/// output into `reports.out_dir` (and the console's to `console`); returns the gated report.
harness::RunReport run_and_report(const suite::Suite& suite, const std::optional<run::DeviceInfo>& device,
                                  const SuiteRunOptions& options, const compile::CompileCache* cache,
                                  const compare::CompareOptions& gate, const ReportOptions& reports,
                                  std::ostream& console);

/// One suite of a run, and where its verdicts and reports go.
struct SuiteJob {
    const suite::Suite* suite = nullptr;
    SuiteRunOptions options;
    compare::CompareOptions gate;
    ReportOptions reports;
};

/// run_and_report for several suites. On a GPU they run at once (run_suites_gpu), then each is
/// resampled, confirmed, gated and reported in order; in the static tier one after another.
/// `after_each` gets each suite's gated report as soon as it is written.
void run_and_report_all(const std::vector<SuiteJob>& jobs, const std::optional<run::DeviceInfo>& device,
                        const compile::CompileCache* cache, std::ostream& console,
                        const std::function<void(const harness::RunReport&)>& after_each);

/// The short git revision of the repository holding `file`, "" outside git; "+dirty" when it has changes.
std::string git_revision(const std::filesystem::path& file);

/// The current time, ISO 8601 UTC.
std::string utc_timestamp();

} // namespace harness::pipeline
