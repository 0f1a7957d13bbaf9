#pragma once
// Gating cliffs: each cliff map of a run against the cliffs its baseline records and the suite's
// `expect:` rules on cliffs (docs/cliffs.md). core/cliff_map.hxx says how the verdicts reach the
// run's outcome.

#include "harness/compare/cliff_baseline.hxx"
#include "harness/core/cliff_map.hxx"
#include "harness/suite/suite.hxx"

#include <vector>

namespace harness::compare {

/// The verdicts of one map, in axis order: each of its cliffs against the baseline's cliffs of the
/// same map (`baseline` null when the file is missing), each cliff the baseline records that the
/// map no longer has, and each `expect:` rule on cliffs of the map's variant that judges maps of
/// its kind (exact or measured: ExpectSpec::judges_map). A cliff matches a
/// baseline cliff at the same place (an exact map) or within one point of it (a noisy one). With
/// `ci`, a map the baseline does not hold is `not_gated` instead of `no_baseline`. Carriers are
/// the params texts of `suite`'s points (suite::point_text).
std::vector<CliffVerdict> judge_cliff_map(const CliffMap& map, const suite::Suite& suite,
                                          const CliffBaselineFile* baseline, bool ci = false);

} // namespace harness::compare
