#include "harness/pipeline/gating.hxx"

#include "harness/compare/sass_diff.hxx"
#include "harness/pipeline/cliff_maps.hxx"
#include "harness/pipeline/recent_history.hxx"
#include "harness/report/reporters.hxx"

namespace harness::pipeline {

namespace fs = std::filesystem;

void gate_and_report(harness::RunReport& rep, const suite::Suite& suite, const compare::CompareOptions& gate,
                     const ReportOptions& reports, std::ostream& console)
{
    add_static_cliff_maps(rep, suite); // merged static shards: the whole axis is here now
    compare::compare_run(rep, suite, gate);
    compare::attach_sass_diffs(rep, gate.baseline_dir);
    rep.fail_on_improvement = reports.fail_on_improvement;
    if (!reports.history_store.empty())
        add_recent_history(rep, reports.history_store, fs::absolute(suite.file).parent_path(), console);
    for (const auto& reporter : report::reporter_table()) reporter.write(rep, reports.out_dir, console);
}

} // namespace harness::pipeline
