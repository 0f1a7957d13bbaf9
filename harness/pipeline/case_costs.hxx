#pragma once
// What each case is expected to cost on the GPU, for spreading a run's cases over several GPUs:
// the seconds it took in earlier runs on this GPU model where a run recorded them (with counters
// measured, or reused from the counter cache: they differ by up to a hundredfold), else a model
// from the baselines' time medians.

#include "harness/core/run_report.hxx"
#include "harness/suite/sweep.hxx"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace harness::pipeline {

/// How a case will be measured, which decides what it costs.
struct CostConditions {
    bool profiled = true;           ///< hardware counters collected
    bool counters_reusable = false; ///< a counter cache is used and not refreshed
};

/// Seconds a case took in earlier runs on one GPU model, per suite, kept in the kernel cache
/// folder (`<cache>/case-costs/<gpu model>/<suite>.json`); a missing or unreadable file is an
/// empty book.
class CaseCostBook {
public:
    CaseCostBook(std::filesystem::path cache_dir, const std::string& gpu_name, const std::string& suite);

    /// The expected seconds of the case `variant` at `params_text` under `conditions`, or nullopt
    /// when no run recorded what it needs.
    std::optional<double> expected(const std::string& variant, const std::string& params_text,
                                   const CostConditions& conditions) const;
    /// The seconds the case's buffers took to allocate and fill when it last ran, or nullopt.
    std::optional<double> buffers(const std::string& variant, const std::string& params_text) const;
    /// Takes in every case of `results` that ran (its measured seconds); `save` writes the book.
    void record(const std::vector<CaseResult>& results);
    /// Writes the book atomically; a failure to write is not an error of the run (returns false).
    bool save() const;

private:
    struct Entry {
        std::optional<double> measured_s; ///< the whole case, counters measured
        std::optional<double> measured_profile_s;
        std::optional<double> reused_s;     ///< the whole case, counters reused from the cache
        std::optional<double> unprofiled_s; ///< the whole case, no counters collected
        std::optional<double> buffers_s;    ///< its buffers allocated and filled
    };
    std::filesystem::path file_;
    std::map<std::string, Entry> entries_; ///< by "variant params_text"
};

/// What measuring a case's counters adds, in plain launches of its kernel: the instrumented runs
/// of the SASS metrics and the profiler's passes.
inline constexpr double instrumented_launches = 400.0;

/// What a GPU pays to compute a point's reference outputs for another case of the point when
/// nothing recorded the reference case's buffers: about what it took on an H100 and an H200 (0.03
/// to 0.1 s a point).
inline constexpr double typical_recompute_s = 0.05;

/// Seconds between one GPU's worker being ready and the next one's, the workers started one after
/// another (driver, context, profilers; the one before already running cases) while the probe's
/// child holds the driver: 0.6 to 0.7 s on four H100s (0.8 to 1.1 s on four H200s without it).
inline constexpr double worker_start_s = 0.65;

/// Where the expected costs of a list of cases came from.
struct CostSources {
    std::size_t recorded = 0; ///< an earlier run's measurement
    std::size_t modelled = 0; ///< the model, from the baselines' time median (or the suite's typical one)
};

/// Expected seconds of `cases`: from `book` where it knows them, else modelled from the baselines
/// under `baseline_dir` (a fixed overhead and the kernel time times the launches a case takes,
/// more when counters are measured, as their instrumented runs cost).
std::vector<double> expected_case_costs(const suite::Suite& suite, const std::vector<suite::Case>& cases,
                                        const std::filesystem::path& baseline_dir, const CaseCostBook* book,
                                        const CostConditions& conditions, CostSources* sources = nullptr);

} // namespace harness::pipeline
