#pragma once
// What a run's report says before its results: which suite, run by which versions of the tool and
// the compiler, at which revision of the suite's repository, when.

#include "harness/core/run_report.hxx"
#include "harness/suite/suite.hxx"

#include <filesystem>
#include <string>

namespace harness::pipeline {

/// A run's report before its results: the suite, the tool's and the compiler's versions, the
/// suite's git revision and the time.
harness::RunReport report_for(const suite::Suite& s);

/// The short git revision of the repository holding `file`, "" outside git; "+dirty" when it has changes.
std::string git_revision(const std::filesystem::path& file);

/// The current time, ISO 8601 UTC.
std::string utc_timestamp();

} // namespace harness::pipeline
