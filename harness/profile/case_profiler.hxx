#pragma once
// The profiling pass of a case: CUPTI Range Profiler counters, then SASS metrics with source
// lines. Runs after timing, so the counters' replays never touch the timed samples.

#include "harness/core/case_result.hxx"
#include "harness/profile/range_profiler.hxx"
#include "harness/profile/sass_profiler.hxx"

#include <cuda.h>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace harness::profile {

/// Which metric-table rows a run collects through CUPTI.
struct ProfilePlan {
    std::vector<std::string> range_metrics; ///< table names of range_profiler rows
    bool sass = false;                      ///< collect SASS metrics (totals and hotspots)
};

/// The plan for `requested` table names (empty: the table's default set). Derived metrics pull in
/// their inputs; names that need no CUPTI are ignored here. Throws Error(bad_input) for an unknown name.
ProfilePlan plan_profile(const std::vector<std::string>& requested);

/// The CUPTI counters the range profiler is configured with for the table names `names`: each
/// row's source, in order, then the duration that weights per-launch ratios.
std::vector<std::string> range_counters(const std::vector<std::string>& names);

/// Sets the figures of `names` (table names) from one case's readings, one row per launch with
/// the counters of range_counters(names) (the duration last): each combined over the launches
/// as its row says (MetricRoles::counter: summed, or weighted by each launch's duration), a
/// percentage read as a fraction where its row says so, and each launch's own figure
/// ("dram_bytes@rstd_kernel") where the variant has several labelled launches.
void set_range_metrics(const std::vector<std::string>& names, const std::vector<std::vector<double>>& rows,
                       CaseResult& r);

/// What the profiler needs to attribute instructions to source lines: the variant's cubin and a
/// way to turn a file name from its line table into a path to read (empty for a built-in).
struct CaseSource {
    const std::string* cubin = nullptr;
    std::function<std::filesystem::path(const std::string& file)> resolve;
    std::function<std::string(const std::filesystem::path& path)> display; ///< path as reports show it
    /// Whether reports may quote lines of `path` (unset: none). A line table names whatever a
    /// kernel's `#line` or a module's builder wrote, and reports are published.
    std::function<bool(const std::filesystem::path& path)> may_quote;
    /// The line table's folders are the build's (a module built by nvcc): a file is passed to
    /// `resolve` with its folder even where that folder is not on this machine (a build made
    /// elsewhere), so that resolve can find it in the project. Unset (NVRTC): the folder is the
    /// compiler's working folder, used only where the file is found in it.
    bool recorded_folders = false;
};

/// Each hotspot's file as `source` resolves and displays it, with the lines around its line where
/// `source.may_quote` allows: a file it refuses is named, never quoted.
void quote_hotspot_lines(std::vector<Hotspot>& hotspots, const CaseSource& source);

/// Profiles cases in one context; create once per worker process.
class CaseProfiler {
public:
    CaseProfiler(CUcontext context, int device_ordinal, ProfilePlan plan);
    ~CaseProfiler();

    /// Replay passes of the range profiler per profiled case.
    std::size_t range_passes() const;

    /// Runs `prepare` (restore inputs, clean caches) and `launches` (each one step of a case, then a
    /// synchronise) under the range profiler, once per pass, and once under the SASS profiler, and
    /// adds the counters (summed over the launches, ratios weighted by duration), SASS totals and
    /// hotspots to `r`. A built-in (no cubin) gets counters only: library kernels have no source
    /// lines of ours, and their instrumented figures need not repeat.
    /// `between(i)`, where given, runs outside any range before launch i > 0 (the L2 emptied).
    void profile(const std::function<void()>& prepare, const std::vector<std::function<void()>>& launches,
                 const CaseSource& source, CaseResult& r, const std::function<void(std::size_t)>& between = {});

    /// Like profile(), for a case whose exact figures and hotspots come from the counter cache
    /// (already in `r`): only the noisy counters are measured, in as few passes as they need.
    void profile_noisy(const std::function<void()>& prepare, const std::vector<std::function<void()>>& launches,
                       CaseResult& r, const std::function<void(std::size_t)>& between = {});

    /// Whether profile_noisy_batch() can measure several cases at once: the noisy counters take one
    /// pass (or there are none).
    bool batches_noisy() const;

    /// A case of profile_noisy_batch(): its steps and its result, which holds its cached figures.
    struct NoisyCase {
        BatchCase steps;
        CaseResult* result = nullptr;
    };

    /// profile_noisy() for several cases in one range-profiler measurement (see
    /// RangeProfiler::measure_batch); each case is charged an equal share of its set-up and
    /// read-back. False, with no figure set, where CUPTI recorded the batch only in part: the
    /// caller measures each case alone. Needs batches_noisy().
    bool profile_noisy_batch(const std::vector<NoisyCase>& cases);

private:
    /// Measures `prepare` and `launches` with `profiler` and sets the metrics of `names` (table names).
    void record_range(RangeProfiler& profiler, const std::vector<std::string>& names,
                      const std::function<void()>& prepare, const std::vector<std::function<void()>>& launches,
                      CaseResult& r, const std::function<void(std::size_t)>& between);

    ProfilePlan plan_;
    std::unique_ptr<RangeProfiler> range_;
    std::vector<std::string> noisy_metrics_;     ///< table names of the plan's noisy range metrics
    std::unique_ptr<RangeProfiler> noisy_range_; ///< those alone, created on first use
    std::unique_ptr<SassProfiler> sass_;
};

/// Why hardware counters cannot be collected in this process, or nullopt when they can. Checks for
/// an attached external profiler, MIG and counter permission. Call in a worker with a current context.
std::optional<std::string> profiling_problem(CUcontext context, int device_ordinal);

} // namespace harness::profile
