#pragma once
// The comparison stage: every case of a run against its baselines, the suite's `expect:` rules
// and the waivers; fills CaseResult::verdicts and the run's comparison_notes and baseline_files.

#include "harness/compare/baseline_file.hxx"
#include "harness/compile/occupancy.hxx"
#include "harness/core/run_report.hxx"
#include "harness/suite/suite.hxx"

#include <filesystem>
#include <optional>
#include <string>

namespace harness::compare {

/// Where the baselines and waivers are, what day it is (for waiver expiry), and how strictly to gate.
struct CompareOptions {
    std::filesystem::path baseline_dir = "baselines";
    std::filesystem::path waiver_file; ///< empty: <baseline_dir>/waivers.yaml when it exists
    std::string today;                 ///< YYYY-MM-DD; empty: today (UTC)
    bool strict = false;               ///< drift figures (rule "report") are gated exactly, as snapshots (`--strict`)
    bool ci = false;                   ///< a figure with no baseline fails as not gated (`--ci`, or CI=true)
};

/// Compares every case that ran cleanly; failed and skipped cases get no verdicts. What an
/// earlier comparison of `report` left (verdicts, comparison notes, baseline files) is replaced.
/// Throws InputError for a malformed baseline or waiver file.
void compare_run(harness::RunReport& report, const suite::Suite& suite, const CompareOptions& options);

/// The verdicts of one case (without waivers): `exact` holds the architecture's baseline,
/// `noisy` the GPU model's (nullptr where there is none; `noisy_elsewhere` names GPU models that
/// have one, for the note that noisy figures were skipped). `accesses`, the case's predicted
/// accesses in the access baseline (compare/access_baseline.hxx) or nullptr, lets a regression of a
/// predicted figure name the access whose figure rose against its baseline access.
void compare_case(CaseResult& result, const suite::Suite& suite, const BaselineFile* exact, const BaselineFile* noisy,
                  const std::string& noisy_elsewhere, const CompareOptions& options = {},
                  const std::vector<PredictedAccess>* accesses = nullptr);

/// The static figures that decide theoretical occupancy, as stored in a result or a baseline.
struct OccupancyFigures {
    std::optional<double> registers, static_shared_bytes, dynamic_shared_bytes, barriers, blocks_per_sm,
        theoretical_occupancy;
};

/// "registers 32 -> 40: resident blocks 8 -> 6, theoretical occupancy 100 % -> 75 % (limiter:
/// registers)" when the occupancy differs between the two; nullopt otherwise or when the figures
/// are incomplete. The block size is recovered from blocks and occupancy.
std::optional<std::string> occupancy_cliff(const std::string& arch, const OccupancyFigures& before,
                                           const OccupancyFigures& after);

} // namespace harness::compare
