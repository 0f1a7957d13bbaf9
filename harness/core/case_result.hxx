#pragma once
// The one contract between the runner and everything after it (comparison, reports).

#include "harness/core/rule_syntax.hxx"

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace harness {

/// How a case ended.
enum class CaseStatus {
    passed,              ///< ran, output matches the reference
    failed_verification, ///< ran, output differs from the reference
    compile_error,       ///< NVRTC rejected the variant
    launch_error,        ///< bad geometry, out of memory, or a driver error before the kernel ran
    fault,               ///< the kernel faulted (illegal address, trap, assert) or the worker died
    timeout,             ///< the case ran past its time limit
    skipped,             ///< not run (e.g. no GPU), with the reason in the message
};

const char* case_status_name(CaseStatus status);
CaseStatus case_status_from_name(const std::string& name);
/// True for the statuses that fail a run.
bool case_status_fails(CaseStatus status);

/// The outcome of comparing one metric of a case with its baseline or an `expect:` rule.
enum class Verdict {
    passed,        ///< within the rule's tolerance
    regressed,     ///< worse than the baseline beyond tolerance: fails the run
    improved,      ///< better beyond tolerance: passes (the baseline is stale) unless asked to fail
    waived,        ///< regressed, but a current waiver names it: passes, printed with the reason
    expect_failed, ///< an `expect:` rule of the suite does not hold: fails the run
    no_baseline,   ///< nothing to compare with (new case or metric): passes with a note
    skipped,       ///< not compared (rule "ignore", or a noisy figure from another GPU model)
    drifted,       ///< a drift figure (rule "report") moved: reported, never fails
    not_gated,     ///< nothing to compare with in CI mode: fails, so a green run always gated
    not_measured,  ///< the baseline holds it and this kind of run measures it, yet this run lacks it: fails
};

const char* verdict_name(Verdict verdict);
Verdict verdict_from_name(const std::string& name);
/// True for the verdicts that fail a run (`fail_on_improvement` adds `improved`).
bool verdict_fails(Verdict verdict, bool fail_on_improvement = false);

/// What a verdict judged its figure against; the reports count and show each kind apart.
enum class VerdictSource {
    baseline,    ///< the baseline, under a gating rule (exact, rel, abs, samples)
    drift,       ///< the baseline, under the rule "report": a move is reported, never gated
    expectation, ///< an `expect:` condition of the suite
};

/// The source of a verdict read from a results file, from its rule as written there ("expect <= 64",
/// "report", "rel 5%"): results files keep the rule's text, not the source.
VerdictSource verdict_source_of_rule(std::string_view rule);

/// One metric of one case judged against its baseline or an `expect:` rule.
struct MetricVerdict {
    std::string metric;
    Verdict verdict = Verdict::passed;
    std::optional<double> baseline; ///< absent for expect rules and new metrics
    std::optional<double> value;    ///< absent when the run did not produce the metric
    std::string rule;               ///< as reports show it: "exact", "rel 5%", "samples 5% (p=0.0002)", "expect <= 64"
    /// The rule's band around the baseline, for the reports' charts: none for a rule without one
    /// (report, expectations, cliffs, the SASS gate).
    std::optional<ToleranceBand> tolerance;
    std::string message;  ///< what changed, by how much, and why it matters (cliffs are named)
    std::string location; ///< kernels/transpose/transpose.cu:31 where SASS metrics attribute it
    /// Why the figure was not compared, for a `skipped` verdict ("not predicted: ...", "not measured in
    /// this run"): what the console's count of uncompared figures groups them by. Empty otherwise.
    std::string not_compared;
    /// A "samples" verdict that passed only for want of evidence: the median moved beyond the rule
    /// but the samples do not show it (see compare::judge_samples); more samples would decide.
    bool unsure = false;
    /// The figure's recent values on the default branch, oldest first, one per commit (the median of
    /// its runs), for a sparkline beside the verdict; filled from a history store before the reports
    /// are written (`--history`), empty otherwise. Not part of results.json.
    std::vector<double> recent;
    /// What it judged against, set where it is made; results.json keeps only the rule's text, which
    /// says it (verdict_source_of_rule).
    VerdictSource source = VerdictSource::baseline;
};

/// Which resource caps the number of resident blocks of a launch.
enum class OccupancyLimiter { warps, registers, shared_memory, blocks, barriers };

/// "warps", "registers", "shared memory", "blocks", "barriers", as results files and reports write it.
const char* occupancy_limiter_name(OccupancyLimiter limiter);
/// The limiter named `name`; throws Error(bad_input) for a name no limiter has.
OccupancyLimiter occupancy_limiter_from_name(const std::string& name);
/// The limiter's name, or "" where it is not known.
std::string occupancy_limiter_text(const std::optional<OccupancyLimiter>& limiter);

/// A source line that causes excess traffic, from the SASS metrics (exact, per instruction).
struct Hotspot {
    std::string metric; ///< excess_global_sectors / excess_shared_wavefronts / local_sectors / divergent_branch_targets
    std::string access; ///< "global load", "global store", "shared load", "shared store", "local", "branch"
    std::string kernel; ///< the kernel (entry) the instruction belongs to
    std::string file;   ///< as recorded in the cubin's line table, made relative to the repository if possible
    int line = 0;
    double actual = 0.0;              ///< sectors / wavefronts at this line
    double ideal = 0.0;               ///< what an ideal access pattern would need
    double excess = 0.0;              ///< actual - ideal (for local and branch metrics: the count itself)
    std::vector<std::string> snippet; ///< a few source lines around `line`, for reports
    int snippet_first_line = 0;       ///< line number of snippet[0]
};

/// One memory instruction's figures predicted from the kernel's PTX at the case's launch, without a
/// GPU (analysis/access_model.hxx): predicted, never measured. A case keeps its accesses worst first.
struct PredictedAccess {
    std::string kernel; ///< the launch's entry
    std::string launch; ///< the launch's label (CaseLaunch::label), empty for a single launch
    std::string file;   ///< the source file of the instruction's line, as the PTX's line table names it
    int line = 0;
    std::string access; ///< "global load", "global store", "global atomic", "shared load", ...
    std::string buffer; ///< the kernel parameter (the suite's buffer) or shared variable addressed
    int order = 0;      ///< its rank among the kernel's accesses of the same buffer and kind
    std::string opcode; ///< the PTX instruction, "st.global.f32"
    double requests = 0.0;
    double sectors = 0.0, ideal_sectors = 0.0;       ///< global
    double wavefronts = 0.0, ideal_wavefronts = 0.0; ///< shared

    bool is_shared() const { return access.starts_with("shared"); }
    double excess() const { return is_shared() ? wavefronts - ideal_wavefronts : sectors - ideal_sectors; }
    /// "kernels/transpose/transpose_naive.cu:14 global store out[]: 32 sectors per request, ideal 4 (predicted)"
    std::string text() const;
};

/// The SASS instructions of one source line of one kernel, by class: the static tier counts them
/// in the cubin's disassembly (compile/sass_classes.hxx), and the SASS gate compares them with the
/// baseline's (compare/sass_gate.hxx).
struct SassLine {
    std::string kernel; ///< the kernel (entry) as reports name it
    std::string file;   ///< relative to the project where it lies in it
    int line = 0;
    std::map<std::string, int> counts; ///< by class metric ("sass_global_ld_128"), nonzero ones only
    bool operator==(const SassLine&) const = default;
};

/// A named figure of a case; unit and meaning come from the metric table.
struct MetricValue {
    std::string name;
    double value = 0.0;
};

/// Where the profiling of one case went, in seconds of wall time on the host (all zero when the
/// case was not profiled). Each range-profiler pass restores the inputs, empties the L2 and runs
/// the case's launches; the SASS metrics add one instrumented run.
struct ProfileCost {
    double setup = 0.0;           ///< profilers enabled and configured, counter images prepared
    double restore = 0.0;         ///< inout buffers restored before each profiled run
    double l2_flush = 0.0;        ///< the L2 emptied before each profiled run
    double kernels = 0.0;         ///< the case's launches under the range profiler, every pass
    double sass = 0.0;            ///< the instrumented run of the SASS metrics (patching included)
    double teardown = 0.0;        ///< counters decoded and evaluated, SASS records read, profilers disabled
    std::size_t range_passes = 0; ///< runs of the case the range profiler needed
    std::size_t sass_runs = 0;    ///< instrumented runs (0 or 1)
    std::size_t enables = 0;      ///< times the context's range profiler was enabled afresh for counters
    /// Measurements that took the noisy counters of several cases at once (charged to the first),
    /// and the cases they took.
    std::size_t batches = 0;
    std::size_t batched = 0;
    std::size_t unbatched = 0;  ///< measured alone after CUPTI recorded its batch only in part
    std::size_t remeasured = 0; ///< measured again one launch at a time after a pass came back short

    double total() const { return setup + restore + l2_flush + kernels + sass + teardown; }
    ProfileCost& operator+=(const ProfileCost& o);
};

/// Where the timed samples of one case went, in seconds of wall time on the host, when they are
/// read from the profiler's per-kernel ranges (all zero under CUDA events). The rest of the case's
/// timing is its warm-up, clock readings and statistics.
struct TimingCost {
    double setup = 0.0;      ///< profiler enabled (when the counter profiler held it), configured, started
    double samples = 0.0;    ///< inputs restored, L2 emptied and kernels run, every sample
    double teardown = 0.0;   ///< ranges decoded and evaluated
    std::size_t passes = 0;  ///< profiler passes (batches of samples)
    std::size_t enables = 0; ///< times the timer had to enable the context's range profiler
    std::size_t retaken = 0; ///< passes thrown away: a kernel of their samples went unrecorded

    double total() const { return setup + samples + teardown; }
    TimingCost& operator+=(const TimingCost& o);
};

/// Where the wall time of one case went on the host, in seconds.
struct CaseCost {
    double prepare = 0.0; ///< buffers allocated and filled, the reference's outputs computed
    /// Part of `prepare`: the reference's outputs computed for this case, because the point's
    /// reference case ran on another GPU (or in an earlier worker)
    double reference = 0.0;
    double verify = 0.0;     ///< the verification run and the comparison of its outputs
    double timing = 0.0;     ///< the timed samples, warm-up included
    TimingCost timing_parts; ///< part of `timing`: the profiler's batches of samples
    ProfileCost profile;     ///< the profiling pass

    double total() const { return prepare + verify + timing + profile.total(); }
    CaseCost& operator+=(const CaseCost& o);
};

/// One launch of a case's variant: what ran, and from which file. Its own figures are the metrics
/// named "<metric>@<label>" (metrics.hxx, launch_metric_name) when the variant has several launches.
struct CaseLaunch {
    std::string label; ///< "rstd_kernel", "copy#2" (suite::launch_labels), a name only; empty for a single launch
    std::string entry; ///< the kernel as compiled, template arguments resolved
    std::string file;  ///< its source or module file as the suite names it (relative to the project)
    std::optional<OccupancyLimiter> occupancy_limiter; ///< what limits this launch's occupancy, where known
    /// Another launch of the variant runs the same kernel ("copy#1", "copy#2"): figures counted per
    /// kernel, as the SASS metrics are, cannot tell the two apart.
    bool repeated = false;
};

/// Everything known about one variant at one parameter point.
struct CaseResult {
    std::string suite;
    std::string variant;
    std::string arch; ///< sm_90: the GPU's, or the target of a static-tier result
    std::map<std::string, std::int64_t> params;
    std::string params_text;
    std::size_t point = 0; ///< index of the sweep point (suite::Case::point): merged shards keep one run's order
    CaseStatus status = CaseStatus::skipped;
    std::string message;                               ///< why it failed, or a note
    std::optional<OccupancyLimiter> occupancy_limiter; ///< of the launch with the least occupancy, where known
    std::vector<MetricValue> metrics;
    std::vector<CaseLaunch> launches; ///< the variant's launches in order (empty for a built-in library call)
    std::vector<double> time_samples_us;
    std::vector<Hotspot> hotspots; ///< source lines by excess, largest first
    /// The accesses the static tier predicted from PTX, worst first (excess, then sectors per request).
    std::vector<PredictedAccess> predicted_accesses;
    /// Why the case's access figures are not predicted (none of its predicted_* totals is set), one
    /// reason per launch or access that was not; empty when predicted or when no prediction was tried.
    std::vector<std::string> not_predicted;
    std::vector<MetricVerdict> verdicts; ///< filled by the comparison stage
    CaseCost cost;                       ///< where its wall time went
    /// Exact figures taken from the counter cache instead of measured in this run (with the hotspots).
    std::vector<std::string> reused_metrics;
    /// The SASS of every line of the case's kernels that holds counted instructions (static tier).
    std::vector<SassLine> sass_lines;
    /// Why the case has no SASS figures although it has a cubin (no nvdisasm); empty otherwise.
    std::string sass_not_measured;
    /// The normalised diff of the case's SASS against the SASS its baseline was recorded from
    /// (core/sass_code.hxx), hunks at failing verdicts' lines first; set for a case that failed
    /// and whose SASS moved, empty otherwise.
    std::string sass_diff;
    /// Its leading hunk in a few lines, as the step summary shows it (sass_diff_excerpt): the
    /// header, then the instructions of the opcodes that moved most.
    std::string sass_diff_excerpt;
    /// Not run by `harness run --changed-only`: its SASS and inputs hash to its baseline's, so its
    /// baseline's exact figures stand (status skipped; counted apart, never as passed).
    bool unchanged = false;

    std::optional<double> metric(const std::string& name) const;
    void set_metric(const std::string& name, double value);
};

/// The worst verdict of a case's metrics, for one-word summaries; nullopt when nothing was compared.
std::optional<Verdict> worst_verdict(const CaseResult& r);

void to_json(nlohmann::json& j, const MetricVerdict& v);
void from_json(const nlohmann::json& j, MetricVerdict& v);
void to_json(nlohmann::json& j, const CaseLaunch& l);
void from_json(const nlohmann::json& j, CaseLaunch& l);
void to_json(nlohmann::json& j, const Hotspot& h);
void to_json(nlohmann::json& j, const SassLine& l);
void from_json(const nlohmann::json& j, SassLine& l);
void from_json(const nlohmann::json& j, Hotspot& h);
void to_json(nlohmann::json& j, const PredictedAccess& a);
void from_json(const nlohmann::json& j, PredictedAccess& a);
void to_json(nlohmann::json& j, const ProfileCost& c);
void to_json(nlohmann::json& j, const TimingCost& c);
void from_json(const nlohmann::json& j, TimingCost& c);
void from_json(const nlohmann::json& j, ProfileCost& c);
void to_json(nlohmann::json& j, const CaseCost& c);
void from_json(const nlohmann::json& j, CaseCost& c);
void to_json(nlohmann::json& j, const CaseResult& r);
void from_json(const nlohmann::json& j, CaseResult& r);

} // namespace harness
