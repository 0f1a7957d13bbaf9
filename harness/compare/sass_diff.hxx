#pragma once
// The SASS diff anchored at the verdict: a failing case's normalised SASS against the SASS its
// baseline was recorded from (baselines/<suite>/<arch>.sass.gz, core/sass_code.hxx), grouped by
// source line, the hunk at each failing SASS verdict's line first.

#include "harness/core/run_report.hxx"
#include "harness/core/sass_code.hxx"

#include <filesystem>
#include <string>
#include <vector>

namespace harness::compare {

/// The lines a case's diff leads with: its failing verdicts' locations, those of the SASS gate
/// (rule "sass") first.
std::vector<std::string> diff_anchors(const CaseResult& r);

/// How many lines of a case's diff the step summary shows (CaseResult::sass_diff_excerpt).
inline constexpr std::size_t sass_diff_excerpt_lines = 8;

/// A case's diff, whole and as its excerpt; both empty when the code is equal.
struct CaseSassDiff {
    std::string text;
    std::string excerpt;
};

/// The diff of case (variant, params) between its code in `baseline` and in `current`, hunks at
/// `anchors` first, each hunk's moved opcodes named memory accesses, asynchronous copies and
/// tensor-core instructions first, then arithmetic, then the rest; `baseline_gpu`/`current_gpu`:
/// which recording of each file to take (a GPU run's, else the static tier's; where the one asked
/// for is missing, the other). nullopt when either file lacks the case.
std::optional<CaseSassDiff> case_sass_diff(const SassCodeFile& baseline, bool baseline_gpu, const SassCodeFile& current,
                                           bool current_gpu, const std::string& variant, const std::string& params,
                                           const std::vector<std::string>& anchors);

/// Sets sass_diff and its excerpt on every case of `report` that has a failing verdict and whose
/// code moved from the code its baseline in `baseline_dir` was recorded from (nothing where
/// either lacks it).
void attach_sass_diffs(harness::RunReport& report, const std::filesystem::path& baseline_dir);

} // namespace harness::compare
