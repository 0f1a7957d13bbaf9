#pragma once
// From per-instruction SASS figures to the source lines that waste sectors or wavefronts.
// Host-only: the instructions come from the SASS profiler, their lines from the cubin.

#include "harness/core/case_result.hxx"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace harness::profile {

/// One instruction's figures, keyed by SASS metric name, with its source line.
struct AttributedInstruction {
    std::string kernel;
    std::string file; ///< as the report should show it
    int line = 0;     ///< 0 when the cubin has no line information for it
    std::map<std::string, double> values;
};

/// What SassProfiler must collect: the SASS metrics of the metric table (Collector::sass_metrics),
/// in table order, then the access classifiers (instruction counts of stores, atomics and
/// reductions) that tell loads from stores and atomics.
std::vector<std::string> hotspot_sass_metrics();

/// Groups instructions by kernel, line and access kind and keeps the `per_metric` lines with the
/// largest excess for each figure whose row ranks lines (MetricRoles::lines: excess_global_sectors,
/// excess_shared_wavefronts, local_sectors, divergent_branch_targets); largest first. Lines without
/// excess are left out.
std::vector<Hotspot> rank_hotspots(const std::vector<AttributedInstruction>& instructions, std::size_t per_metric);

/// Reads lines [line - context, line + context] of `file` into the hotspot's snippet (nothing when
/// the file cannot be read).
void attach_snippet(Hotspot& h, const std::filesystem::path& file, int context);

} // namespace harness::profile
