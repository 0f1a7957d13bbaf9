#pragma once
// A figure's recent history for the run report: the last values of one series on the default
// branch, read from a history store and handed to the reporters through the verdicts
// (MetricVerdict::recent), so that the reporters never read the store themselves.

#include "harness/core/run_report.hxx"
#include "harness/history/git_commits.hxx"
#include "harness/history/run_record.hxx"

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace harness::history {

/// How many commits a verdict's sparkline shows.
inline constexpr std::size_t recent_commits = 20;

/// One series of a suite: a case, a metric, and the machine its noisy figures were measured on.
struct SeriesSelector {
    std::string variant, params, arch, metric;
    std::string
        machine; ///< GPU model ("static" without one); ignored for exact figures, shared by every GPU of the arch
};

/// The last `count` values of the series `selector` names, oldest first, one per commit (the median
/// of its runs there). Commits are those on `order` (the default branch's first-parent list), in
/// its order; with an empty `order` (no git) every commit, by commit date. Runs of a commit that
/// starts with `exclude_commit` (the run being reported, when given) are left out.
std::vector<double> recent_values(const std::vector<RunRecord>& runs, const CommitOrder& order,
                                  const SeriesSelector& selector, std::size_t count,
                                  std::string_view exclude_commit = {});

/// What attach_recent_history did.
struct RecentHistoryResult {
    std::size_t verdicts = 0;          ///< verdicts given a history
    std::vector<std::string> problems; ///< run files of the store left out, each with why
};

/// Fills MetricVerdict::recent of every regressed, expect-failed and not-measured verdict of
/// `report` with the last `count` values of its series in the store at `store`, commits ordered by
/// the first-parent history of HEAD in `repo`. A store that is missing, empty or holds no run of
/// the suite changes nothing; a passing report is not even read for.
RecentHistoryResult attach_recent_history(RunReport& report, const std::filesystem::path& store,
                                          const std::filesystem::path& repo, std::size_t count = recent_commits);

} // namespace harness::history
