#pragma once
// Everything a reporter needs about one run of one suite.

#include "harness/core/case_result.hxx"

#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

namespace harness::report {

/// One run of one suite: where it ran and what came out.
struct RunReport {
    std::string suite;
    std::string suite_file;
    std::string mode;          ///< "gpu" or "static"
    std::string device_name;   ///< empty without a GPU
    std::string arch;          ///< e.g. sm_90
    std::string driver_version;
    std::string harness_version;
    std::string timestamp;     ///< ISO 8601, UTC
    std::vector<CaseResult> results;
};

/// Counts by outcome, for summaries.
struct Totals {
    std::size_t passed = 0, failed = 0, skipped = 0;
};
Totals totals(const RunReport& report);

/// A reporter writes a report into a folder (or to the console).
struct ReporterInfo {
    const char* name;
    const char* description;
    std::function<void(const RunReport&, const std::filesystem::path& out_dir, std::ostream& console)> write;
};

/// All reporters, by name.
std::span<const ReporterInfo> reporter_table();

/// The console table printed at the end of a run.
void write_console_table(const RunReport& report, std::ostream& out);

/// results.csv in long form: suite, variant, params, metric, value, unit (plus status rows).
std::string results_csv(const RunReport& report);

/// A CSV field, quoted as RFC 4180 requires.
std::string csv_field(std::string_view text);

} // namespace harness::report
