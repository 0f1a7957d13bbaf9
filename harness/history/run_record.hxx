#pragma once
// One recorded run in the history: where and at which commit it ran, and per case every figure
// plus a compact summary of its time samples. The run file (one per run, immutable) holds it as
// compact JSON; the index (history_store) is rebuilt from these files.

#include "harness/core/run_report.hxx"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace harness::history {

/// Version of the run file; a reader refuses a newer one.
inline constexpr int run_file_schema_version = 1;
/// The most time quantiles a case keeps: the shape of its samples in a bounded size.
inline constexpr std::size_t max_time_quantiles = 16;
/// The largest run file the store reads.
inline constexpr std::size_t max_run_file_bytes = 64 * 1024 * 1024;

/// A case's time samples in a bounded size, enough to compare statistically later.
struct TimeSummary {
    double median_us = 0.0;
    double iqr_us = 0.0;              ///< interquartile range of the samples
    std::size_t samples = 0;          ///< samples taken
    std::vector<double> quantiles_us; ///< evenly spaced quantiles, ascending, at most max_time_quantiles
    /// The spread of one sample as a standard deviation: IQR / 1.349 (exact for a normal sample).
    double sample_sigma_us() const { return iqr_us / 1.349; }
};

/// The summary of `samples_us`; nullopt when there are none.
std::optional<TimeSummary> summarize_time(std::vector<double> samples_us);

/// One case of a recorded run.
struct CaseFigures {
    std::string variant;
    std::string params; ///< params_text, "N=1024"
    std::string arch;
    CaseStatus status = CaseStatus::skipped;             ///< written as case_status_name()
    std::vector<std::pair<std::string, double>> figures; ///< every figure the case has, exact and noisy
    std::optional<TimeSummary> time;

    std::optional<double> figure(std::string_view metric) const;
};

/// One recorded run of one suite.
struct RunRecord {
    std::string suite;
    std::string commit;          ///< full hash where git knew it, else as given
    std::string commit_date;     ///< ISO 8601 committer date, else the run's own timestamp
    std::string timestamp;       ///< when the run ran (results.json)
    RunMode mode = RunMode::gpu; ///< written as mode_name(): "gpu" or "static"
    std::string arch;
    std::string gpu; ///< device name; empty for the static tier
    std::string driver;
    std::string cuda;
    std::string harness_version;
    std::string results_path; ///< absolute path of the results.json it came from, for links
    std::vector<CaseFigures> cases;

    /// The key that noisy figures are compared under: the GPU model ("static" without one).
    std::string machine() const { return gpu.empty() ? std::string("static") : gpu; }
};

/// The record of `report` at `commit`; failed and skipped cases keep their status, no figures.
RunRecord record_from_report(const RunReport& report, std::string commit, std::string commit_date,
                             std::string results_path);

/// The run file's text: one line of compact JSON, figures in shortest exact form.
std::string run_file_text(const RunRecord& record);

/// Reads a run file; throws Error(bad_input) naming `what` when it is not one.
RunRecord parse_run_file(std::string_view text, const std::string& what);

/// Why `record` cannot be stored (a suite or commit that cannot name a file), or "".
std::string record_problem(const RunRecord& record);

} // namespace harness::history
