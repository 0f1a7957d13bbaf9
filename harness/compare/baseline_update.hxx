#pragma once
// `harness baseline update`: records a run's figures into the suite's baseline files, merging
// with what they already hold.

#include "harness/core/file_transaction.hxx"
#include "harness/core/run_report.hxx"
#include "harness/suite/suite.hxx"

#include <filesystem>
#include <string>
#include <vector>

namespace harness::compare {

/// The most time samples a baseline row keeps.
inline constexpr std::size_t max_baseline_samples = 64;

/// The samples a baseline row keeps: all of them, sorted, up to `most`; beyond, that many evenly
/// spaced quantiles of them.
std::vector<double> baseline_samples(std::vector<double> samples, std::size_t most = max_baseline_samples);

/// What an update did, for the console.
struct BaselineUpdate {
    std::vector<std::string> written;   ///< files written
    std::vector<std::string> unchanged; ///< files whose figures did not change: left byte-identical
    std::vector<std::string> notes;     ///< cases left out (failed, skipped), rows dropped
};

/// Writes the figures of every case that passed into <dir>/<suite>/<arch>.csv (exact figures)
/// and, for a GPU run, <dir>/<suite>/<GPU-model>.csv (noisy figures, with the time samples).
/// Each file is merged: rows for the cases and metrics this run measured are replaced, rows for
/// other metrics are kept (a static update keeps GPU counters and vice versa), rows for
/// variants or points no longer in the suite are dropped. Failed cases are never recorded; their
/// earlier rows stay. The files change together (replace_files_together): all of them or none.
/// `before_step` is passed on to replace_files_together, for tests that stop the update there.
BaselineUpdate update_baselines(const suite::Suite& suite, const harness::RunReport& report,
                                const std::filesystem::path& dir, const TransactionStep& before_step = {});

} // namespace harness::compare
