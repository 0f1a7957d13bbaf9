#pragma once
// A suite's recorded runs as series over commits: one series per case, metric and, for noisy
// figures, GPU model, in commit order, each with its change points.

#include "harness/core/metrics.hxx"
#include "harness/history/change_points.hxx"
#include "harness/history/git_commits.hxx"
#include "harness/history/run_record.hxx"

#include <string>
#include <vector>

namespace harness::history {

/// One commit's value of a series: the median of its runs.
struct SeriesPoint {
    std::size_t commit = 0; ///< index into SuiteHistory::commits
    double value = 0.0;
    double noise = 0.0; ///< the value's standard deviation as the runs' samples measured it (time only)
    std::size_t runs = 0;
    std::string results_path; ///< results.json of the latest run, for links
};

struct Series {
    std::string variant, params, arch;
    std::string machine; ///< GPU model for noisy figures, "" for exact ones
    std::string metric;
    Stability stability = Stability::exact;
    std::vector<SeriesPoint> points;
    SeriesAnalysis analysis;
    std::string case_label() const { return variant + " " + params; }
};

/// A commit of the history.
struct CommitEntry {
    std::string commit, date;
    bool on_branch = false; ///< in the first-parent list; the others follow it, by date
};

struct SuiteHistory {
    std::string suite;
    std::size_t runs = 0;
    std::vector<CommitEntry> commits; ///< in order
    std::vector<Series> series;
};

/// Orders the runs' commits by `order` (those it lacks after, by date), builds every series and
/// finds its change points: exact figures every step, noisy ones (the metric table's noisy figures
/// that a rule gates by default) by PELT and the creep check.
SuiteHistory build_suite_history(const std::string& suite, const std::vector<RunRecord>& runs, const CommitOrder& order,
                                 const ChangePointOptions& options = {});

} // namespace harness::history
