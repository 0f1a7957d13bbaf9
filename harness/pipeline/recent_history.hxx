#pragma once
// A failing figure's recent values from a history store (`--history`), attached to a run's report
// so that every report shows whether the figure moved now or has been creeping.

#include "harness/core/run_report.hxx"

#include <filesystem>
#include <ostream>

namespace harness::pipeline {

/// Gives every failing verdict of `report` its recent history from the store at `store`
/// (history::attach_recent_history), commits ordered by `repo`. A store that cannot be read
/// leaves the report as it was, with a note saying why; run files left out are named on `console`.
void add_recent_history(harness::RunReport& report, const std::filesystem::path& store,
                        const std::filesystem::path& repo, std::ostream& console);

} // namespace harness::pipeline
