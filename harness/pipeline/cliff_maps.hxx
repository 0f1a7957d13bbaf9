#pragma once
// Cliff maps of the static tier: along a suite's scanned axis, the theoretical occupancy of each
// variant on each architecture, its cliffs found and explained from the launch at each point
// (docs/cliffs.md). No GPU: every figure is exact.

#include "harness/core/run_report.hxx"
#include "harness/suite/suite.hxx"

#include <vector>

namespace harness::pipeline {

/// The maps of a static run of `suite` (its results): one per variant, architecture and values of
/// the other parameters, of the figure "theoretical_occupancy" over the cases that passed, with
/// the steps down that are at least `cliffs: {min_depth}` deep, each explained by
/// cliff::explain_cliff. None when the suite scans no parameter.
std::vector<CliffMap> static_cliff_maps(const suite::Suite& suite, const harness::RunReport& report);

/// Gives a static run of the whole suite its maps (static_cliff_maps), when it has none yet. A
/// shard holds only some points of the axis: it gets none, with a note; merged and gated
/// (`harness merge --gate`), the whole run gets them.
void add_static_cliff_maps(harness::RunReport& report, const suite::Suite& suite);

} // namespace harness::pipeline
