#pragma once
// Waivers (baselines/waivers.yaml): a known, accepted regression passes as "waived" with its
// reason until the waiver's expiry date; after it, the regression fails again and the message
// names the waiver's file and line.
//
//   waivers:
//     - suite: gemm
//       variant: tiled32          # glob, default "*"
//       params: "N=4096"          # each word a glob over the case's "NAME=VALUE" words; default "*"
//       metric: time_median       # a metric of the table, a cliff verdict ("cliff@N"), or "*"
//       reason: driver 580 slows the tail; tracked in the driver bug
//       expires: 2025-09-30       # YYYY-MM-DD, the last day the waiver holds

#include "harness/core/case_result.hxx"

#include <filesystem>
#include <string>
#include <vector>

namespace harness::compare {

/// One entry of the waiver file.
struct Waiver {
    std::string suite;
    std::string variant = "*";
    std::string params = "*";
    std::string metric;
    std::string reason;
    std::string expires; ///< YYYY-MM-DD
    std::string where;   ///< "baselines/waivers.yaml:12", for messages
};

/// Parses a waiver file's text; throws InputError with file:line:col and the field.
std::vector<Waiver> parse_waivers(const std::string& text, const std::string& file);
/// Reads the waiver file; none when it does not exist, unless `required` (a file named on the
/// command line), when a missing file or a folder is bad input.
std::vector<Waiver> read_waivers(const std::filesystem::path& file, bool required = false);

/// Whether the waiver names this case and metric.
bool waiver_matches(const Waiver& waiver, const CaseResult& result, const std::string& metric);

/// Turns regressions and failed expectations that a current waiver names into Verdict::waived
/// (the message gains the reason); one that only an expired waiver names stays failing and its
/// message names the waiver. `today` is YYYY-MM-DD.
void apply_waivers(CaseResult& result, const std::vector<Waiver>& waivers, const std::string& today);

/// Today's date, UTC, as YYYY-MM-DD.
std::string today_utc();

} // namespace harness::compare
