#pragma once
// The access baseline: each case's predicted accesses (docs/static-analysis.md), one file per suite
// and architecture beside the exact figures, so that a regression of a predicted figure names the
// access whose figures rose against the same access in the baseline:
//
//   baselines/<suite>/<arch>.accesses.csv
//   variant,params,kernel,launch,access,buffer,order,file,line,requests,actual,ideal
//   "naive","M=1000 N=1000","transpose_naive<32, 8>","","global store","out","0",
//       "kernels/transpose/transpose_naive.cu","18","32000","1000000","125000"   (one line)
//
// `actual` and `ideal` are sectors for a global access and wavefronts for a shared one, over the
// whole launch. Accesses are matched across edits by launch, kernel, access kind, buffer and rank
// (their order among the kernel's accesses of that buffer and kind), not by line: a line moved by
// an edit above it still matches, and an access of another buffer inserted before it shifts nothing.

#include "harness/compare/baseline_file.hxx"
#include "harness/core/case_result.hxx"
#include "harness/core/run_report.hxx"
#include "harness/suite/suite.hxx"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace harness::compare {

/// The predicted accesses of every case of one suite and architecture.
struct AccessBaseline : BaselineHeader {
    std::map<std::pair<std::string, std::string>, std::vector<PredictedAccess>> cases; ///< by variant and params

    /// The case's accesses, or nullptr when the file has none for it.
    const std::vector<PredictedAccess>* find(const std::string& variant, const std::string& params) const;
};

/// <dir>/<suite>/<arch>.accesses.csv.
std::filesystem::path access_baseline_path(const std::filesystem::path& dir, const std::string& suite,
                                           const std::string& arch);
std::string access_baseline_text(const AccessBaseline& file);
/// Throws InputError naming `name`, the line and the field.
AccessBaseline parse_access_baseline(const std::string& text, const std::string& name);
/// Reads `path`; nullopt when there is no such file.
std::optional<AccessBaseline> read_access_baseline(const std::filesystem::path& path);

/// One access of a case now and the access of the baseline it matches. `now` is nullptr for a
/// baseline access that no longer has one, `before` for an access the baseline did not have.
struct AccessMatch {
    const PredictedAccess* now = nullptr;
    const PredictedAccess* before = nullptr;
};

/// Matches `current` against `baseline` (both one case's accesses): within each launch, kernel,
/// access kind and buffer, by rank in `order`. Where the two hold as many such accesses, the n-th
/// matches the n-th; otherwise those at the same file and line match first, the rest by rank.
/// One entry per access of `current`, in its order, then the baseline's unmatched ones.
std::vector<AccessMatch> match_accesses(const std::vector<PredictedAccess>& baseline,
                                        const std::vector<PredictedAccess>& current);

/// The access that explains a regression of the predicted figure `name` (a metric, or a launch's
/// "metric@label"): of the figure's access kind and launch, the matched access whose figure rose
/// most against its baseline access (an access without a match counts from its own ideal, a new
/// one), or nullopt when none rose.
struct AccessRise {
    AccessMatch match;
    double from = 0.0, to = 0.0; ///< the access's figure in the baseline and now
    /// "kernel planted_transpose, tests/kernels/planted_accesses.cu:21 global store out[]: 4 -> 32
    /// sectors per request, ideal 4 (predicted; line 23 in the baseline)"
    std::string text;
};
std::optional<AccessRise> risen_access(const std::vector<PredictedAccess>& baseline,
                                       const std::vector<PredictedAccess>& current, std::string_view name);

/// The access baseline files `harness baseline update` writes for `report`: for each architecture,
/// the file merged with the accesses of every case that passed and was predicted in full (cases no
/// longer in the suite dropped, cases not predicted now keep their rows). Files whose contents would
/// not change are listed in `unchanged`.
std::vector<std::pair<std::filesystem::path, std::string>> access_baseline_changes(const suite::Suite& suite,
                                                                                   const harness::RunReport& report,
                                                                                   const std::filesystem::path& dir,
                                                                                   std::vector<std::string>& unchanged);

} // namespace harness::compare
