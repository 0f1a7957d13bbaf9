#pragma once
// Combining the results of several runs of one suite (shards, or a split between machines).

#include "harness/report/reporters.hxx"

#include <string>
#include <vector>

namespace harness::report {

/// One report holding every case of `reports`, in order. Refuses (Error, bad input, naming the
/// files) reports of different suites, modes or GPUs, and a case that appears twice.
/// `names` labels the reports in messages (their files).
RunReport merge_reports(const std::vector<RunReport>& reports, const std::vector<std::string>& names);

} // namespace harness::report
