#pragma once
// The run-level data model: one run of one suite with every case's result, its totals, and the
// versioned results.json schema that `harness report`, `harness merge` and `baseline update --from`
// read. Every stage after the run fills or reads it; reporters only read it.

#include "harness/core/case_result.hxx"
#include "harness/core/cliff_map.hxx"
#include "harness/core/sass_code.hxx"

#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace harness {

/// The most shards a suite may be split into (`--shard i/N`).
inline constexpr std::size_t max_shards = 10000;

/// Which share of a suite's sweep points a run holds (`harness run --shard index/count`).
struct ShardInfo {
    std::size_t count = 0;            ///< N of `--shard i/N`; 0: the whole suite (no shard, or all shards merged)
    std::vector<std::size_t> indices; ///< the shards held, 1-based, ascending: one, or those a partial merge holds
    std::string split;                ///< fingerprint of the split of the points, the same in every shard of one run
    bool sharded() const { return count > 0; }
    /// "2/4", or "1,3/4" for a partial merge; "" for the whole suite.
    std::string text() const;
};

/// Where a run's figures come from: kernels run on a GPU, or the static tier (compiled for each
/// architecture, nothing run).
enum class RunMode { gpu, static_tier };

/// "gpu" or "static", as results files and reports write the mode.
const char* mode_name(RunMode mode);
/// The mode named `name` ("gpu" or "static"); nullopt for another name.
std::optional<RunMode> mode_from_name(std::string_view name);

/// One run of one suite: where it ran and what came out.
/// A case the baseline holds and the suite no longer has (its variant removed, its `params:`
/// narrowed): its rows gate nothing, so a regression of it would go unseen. Listed and counted as
/// removed; CI mode fails it until the baseline drops the rows (`harness baseline update` does).
struct RemovedCase {
    std::string variant, params_text;
    std::string baseline; ///< the baseline file holding the rows, as the report names it
    std::size_t rows = 0; ///< its rows of the case
    bool fails = false;   ///< CI mode: the run fails on it
    bool operator==(const RemovedCase&) const = default;
};

struct RunReport {
    std::string suite;
    std::string suite_file;
    RunMode mode = RunMode::gpu;
    std::string device_name; ///< empty without a GPU
    std::string arch;        ///< e.g. sm_90
    std::string driver_version;
    std::string cuda_version; ///< of NVRTC, which compiled the kernels
    std::string harness_version;
    std::string git_revision; ///< of the repository the suite lives in; empty outside git
    std::string timestamp;    ///< ISO 8601, UTC
    int sm_count = 0;
    double memory_bandwidth_gbs = 0.0;         ///< theoretical peak, for the roofline
    double fp32_peak_gflops = 0.0;             ///< theoretical peak, for the roofline
    bool profiled = false;                     ///< hardware counters were collected
    bool fail_on_improvement = false;          ///< improved metrics fail this run (`--fail-on-improvement`)
    ShardInfo shard;                           ///< the share of the suite's points this run holds
    std::vector<std::string> baseline_files;   ///< what the results were compared with
    std::vector<std::string> notes;            ///< remarks of the run itself (profiling time, counters off)
    std::vector<std::string> comparison_notes; ///< remarks of the comparison (missing baselines, expired waivers)
    std::vector<CaseResult> results;
    /// What the baselines compared with hold of cases the suite no longer has (compare::compare_run);
    /// results.json's "removed", absent when empty.
    std::vector<RemovedCase> removed;
    /// One per scanned axis of each variant (at each combination of the other parameters), with
    /// the cliffs found along it; empty when the suite scans no axis.
    std::vector<CliffMap> cliff_maps;
    /// By architecture: the normalised SASS of the cases' kernels where nvdisasm counted them
    /// (sass_code.hxx). Not part of results.json: written beside it as sass-<arch>.gz.
    std::map<std::string, SassCodeFile> sass_code;
};

/// Counts by outcome, for summaries. Every case lands in exactly one of passed / failed /
/// regressed / skipped; improved and waived count cases that also passed.
struct Totals {
    std::size_t passed = 0;    ///< ran and nothing regressed
    std::size_t failed = 0;    ///< did not run cleanly (verification, compile, launch, fault, timeout)
    std::size_t regressed = 0; ///< ran, but a metric regressed or an expect rule failed
    /// ran, nothing regressed, but a figure had no baseline (CI mode) or was not measured: fails too,
    /// under its own word, since nothing says it got worse
    std::size_t not_gated = 0;
    std::size_t skipped = 0;
    /// Of `skipped`: carried by `--changed-only`, their SASS identical to the baseline's.
    std::size_t unchanged = 0;
    std::size_t improved = 0; ///< passed with at least one improved metric
    std::size_t waived = 0;   ///< passed with at least one waived regression
    /// Cases (variant and parameters) the baselines hold and the suite no longer has; not among the
    /// counts above, since the run has no such case.
    std::size_t removed = 0;
    std::size_t removed_failing = 0; ///< of `removed`: those that fail the run (CI mode)

    /// Whether the run fails: a case failed, regressed or went ungated, or a removed case fails.
    bool failing() const { return failed > 0 || regressed > 0 || not_gated > 0 || removed_failing > 0; }
};
Totals totals(const RunReport& report, bool fail_on_improvement = false);

/// Whether a verdict stands against recording the run's figures as baselines: a figure that
/// regressed, failed its expect rule, went unmeasured, or regressed under a waiver.
bool verdict_blocks_baseline_update(Verdict verdict);
/// Whether anything of the run does (verdict_blocks_baseline_update), or a case failed: then no
/// improvement of it means a stale baseline to record again.
bool has_regressions(const RunReport& report);

/// How the run's figures were gated, so that a green run that gated little is seen at once.
/// Every verdict lands in exactly one count.
struct GateCounts {
    std::size_t compared = 0;  ///< judged against a baseline under a gating rule
    std::size_t expected = 0;  ///< checked by an `expect:` rule
    std::size_t reported = 0;  ///< drift figures (rule "report"): compared, shown, never failing
    std::size_t not_gated = 0; ///< no baseline, too few samples, or another GPU model's
    /// held by the baseline, of a kind this run measures, yet missing from it (fails)
    std::size_t not_measured = 0;
};
GateCounts gate_counts(const RunReport& report);
/// "812 figures compared with a baseline, 24 checked by expect:, 300 reported only, 0 not measured,
/// 0 not gated".
std::string gate_counts_text(const GateCounts& counts);

/// The versioned JSON results file (results.json) that `harness report` and `harness merge` read.
/// Version 2 added the shard, the comparison's own notes and each case's sweep point; version 3
/// the cliff maps (`cliff_maps`, absent when the suite scans nothing); version 4 the facts the
/// reports once read back from display text: a verdict's `tolerance` and `not_compared` reason, a
/// launch's `repeated`, a cliff map's `other_params`. Files of versions 1 to 3 still read (version
/// 1 as whole runs, 1 and 2 without maps, all three with those facts taken from their text once,
/// core/older_results.hxx; their maps without `other_params`).
inline constexpr int results_schema_version = 4;
inline constexpr int oldest_results_schema_version = 1;
inline constexpr std::size_t max_results_file_bytes = 256 * 1024 * 1024;
inline constexpr int max_source_line = 100000000; ///< the largest line number a hotspot may name
std::string results_json(const RunReport& report);
/// Reads results.json; throws Error(bad_input) naming the file for a wrong schema or version.
RunReport read_results_json(const std::filesystem::path& file);
void to_json(nlohmann::json& j, const RunReport& r);
void from_json(const nlohmann::json& j, RunReport& r);

} // namespace harness
