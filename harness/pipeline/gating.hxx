#pragma once
// The end of every suite's run, and of merged shards: its figures judged against the baselines
// and `expect:` rules, and every reporter's file written.

#include "harness/compare/compare_run.hxx"
#include "harness/core/run_report.hxx"
#include "harness/suite/suite.hxx"

#include <filesystem>
#include <ostream>

namespace harness::pipeline {

/// Where a suite's reports go and what they show beside the run.
struct ReportOptions {
    std::filesystem::path out_dir;    ///< every reporter's file goes here
    bool fail_on_improvement = false; ///< improved figures fail the run
    /// A history store (`--history`): each failing figure shows its recent values on the default
    /// branch (the first-parent history of the suite's repository); empty: none.
    std::filesystem::path history_store;
};

/// Compares a run of `suite` with its baselines and `expect:` rules (replacing an earlier
/// comparison, as when merged shards are gated together) and writes every reporter's output into
/// `reports.out_dir` (and the console's to `console`).
void gate_and_report(harness::RunReport& report, const suite::Suite& suite, const compare::CompareOptions& gate,
                     const ReportOptions& reports, std::ostream& console);

} // namespace harness::pipeline
