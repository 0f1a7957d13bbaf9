#pragma once
// One suite's settings for a run: what the command line asked for (`harness run`, `baseline
// update`), or a caller such as bisect or a run's second looks, with the suite's own values where
// the command line leaves them to the suite. Resolved once per suite, where the command reads its
// flags (resolve_settings), then passed down read-only, under the same names at every layer: the
// workers take their case timeout and timing budget from them. setting_table() names each setting
// once: where its value comes from, its default and what it means.

#include "harness/suite/suite.hxx"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace harness::run {

/// Where a timed sample's duration comes from.
enum class TimeSource {
    kernels, ///< the GPU's own duration of each kernel, summed (Nsight Compute's gpu__time_duration)
    events,  ///< CUDA events around the sample's launches (adds the launch latency between them)
};

/// `--shard index/count`: one share of a suite's sweep points (pipeline/shard.hxx), balanced by the
/// times recorded in the run's baselines (RunSettings::baseline_dir).
struct ShardRequest {
    std::size_t index = 1; ///< 1-based
    std::size_t count = 1;
};

/// One suite's settings for a run; setting_table() says where each comes from.
struct RunSettings {
    // Where it runs.
    int device = 0;
    std::string devices;            ///< "all" or "0,1"; empty: `device` alone
    bool static_only = false;       ///< the static tier even with a GPU
    std::vector<std::string> archs; ///< of the static tier
    bool require_gpu = false;       ///< no usable GPU is an error, not the static tier
    std::string require_gpu_because;

    // How a case is measured.
    TimeSource time_source = TimeSource::kernels;
    bool hot = false;               ///< no L2 flush between timed samples
    bool verify_only = false;       ///< no timing
    bool profile = true;            ///< collect hardware counters (CUPTI)
    bool external_profiler = false; ///< each case once in its NVTX range, nothing else
    bool counter_cache = false;     ///< reuse exact counters from <cache>/counters
    bool fresh_counters = false;    ///< with counter_cache: measure afresh, refresh the entries
    double timeout_s = 0.0;         ///< a case that takes longer has hung; 0 before resolve_settings: the suite's
    double budget_s = 0.0;          ///< seconds of timing per case; 0 before resolve_settings: the suite's

    // Which cases.
    std::vector<std::string> variants; ///< empty: all (the reference always runs)
    /// Only these cases, (variant, params text), and the reference at their points; empty: all.
    std::vector<std::pair<std::string, std::string>> only_cases;
    std::optional<ShardRequest> shard;  ///< only this share of the cases; absent: all of them
    std::filesystem::path baseline_dir; ///< whose recorded times balance shards and GPUs; empty: case counts do
    /// Only the cases whose SASS and inputs moved from their baseline's (`--changed-only`): the
    /// others are carried as unchanged (pipeline/changed_only.hxx).
    bool changed_only = false;

    // After the run.
    int resample_rounds = 2; ///< rounds of second looks at unsure or regressed figures (0: none)
    /// Keep what each case cost for the next run's schedule (off for a second look, whose fixed
    /// samples and lone counters are not what the case costs in a run).
    bool record_costs = true;
};

/// One row of setting_table(): a field of RunSettings, where its value comes from and what it means.
struct SettingInfo {
    std::string_view name;        ///< the RunSettings field
    std::string_view flag;        ///< the command-line option that sets it; "" where none does
    std::string_view suite_field; ///< the suite key that gives it when the flag is not given; "" where none does
    std::string fallback;         ///< its value when neither gives one
    std::string_view meaning;
};

/// Every setting of RunSettings, once, in its order.
const std::vector<SettingInfo>& setting_table();

/// `given` (the command line's settings for every suite of a run, or a caller's) resolved for
/// `suite`: a setting the command line left to the suite (the case timeout, the timing budget, the
/// static tier's architectures) takes the suite's value. The one place where a command-line value
/// overrides a suite's; settings resolved already come back unchanged. Called once per suite by
/// whoever starts its run (a command, bisect, a test); the pipeline takes resolved settings.
RunSettings resolve_settings(const RunSettings& given, const suite::Suite& suite);

/// Throws Error (internal) when `settings` were not resolved for a suite (no case timeout or no
/// timing budget yet): what the pipeline checks before it runs `suite` with them.
void check_resolved(const RunSettings& settings, const suite::Suite& suite);

} // namespace harness::run
