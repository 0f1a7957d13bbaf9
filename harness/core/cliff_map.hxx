#pragma once
// Performance cliffs along a scanned axis, as runs, reports and baselines keep them: the series a
// scan measured and the steps found in it, each with its cause. The analysis lives in cliff/.

#include "harness/core/case_result.hxx"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace harness {

/// What made a series step between two adjacent points of a scanned axis.
enum class CliffCause {
    waves,       ///< the grid needs another wave of blocks over the GPU's SMs
    tiles,       ///< a grid dimension's ceil-division by a tile gained a block
    alignment,   ///< a pitch in bytes stopped (or started) being a multiple of 32-byte sectors
    footprint,   ///< a row's footprint (its pitch) grew across a 128-byte line or a 32-byte sector
    occupancy,   ///< resident blocks per SM changed (registers or shared memory grew with the axis)
    unexplained, ///< none of the above changes between the two points
};

/// "waves", "tiles", "alignment", "footprint", "occupancy", "unexplained".
const char* cliff_cause_name(CliffCause cause);
/// The cause named `name`; nullopt for an unknown name.
std::optional<CliffCause> cliff_cause_from_name(const std::string& name);

/// One step along an axis: where it is, how deep, how sure, and why.
struct Cliff {
    double x_before = 0;     ///< the axis value of the last point before the step
    double x_after = 0;      ///< the axis value of the first point after it
    double level_before = 0; ///< the series' level just before the step (the series' unit)
    double level_after = 0;  ///< and just after it
    double depth = 0;        ///< level_after / level_before - 1: 0.25 is 25 % worse after the step
    double significance = 0; ///< the step's size in units of the measured noise (infinite: exact series)
    CliffCause cause = CliffCause::unexplained;
    std::string explanation; ///< "wave quantisation: 264 -> 265 blocks, 2 -> 3 waves of 132 SMs x 1 block"
};

/// The gate's judgement of one cliff of a map (compare::compare_run fills CliffMap::verdicts).
///
/// How it reaches the run's outcome: the same MetricVerdict is also a verdict of one case, the
/// carrier, so that totals, the exit code, gate counts, waivers, JUnit and the summary count it as
/// they count every figure. The carrier is the map's case (same variant and arch) at `x_after`;
/// for a cliff that vanished and is not in this run's points, or a verdict on the whole map, the
/// map's first point. Its metric is cliff_verdict_metric(axis) ("cliff@N"), its value this run's
/// depth and its baseline the baseline's (both absent where there is none); `rule` says what
/// judged it ("cliffs (min_depth 0.05)", "expect cliff_depth <= 0.1").
///
/// Verdicts: a cliff the baseline holds at the same place with the same depth `passed`; one that
/// is new and at least the suite's `cliffs: {min_depth}` deep, or known and deeper (exact series:
/// any change of depth; noisy ones: beyond their noise), `regressed`; one that vanished or got
/// shallower `improved`; a map the baseline does not hold `no_baseline` (`not_gated` in CI mode,
/// one verdict for the whole map); a cliff that breaks an `expect:` rule `expect_failed`.
struct CliffVerdict {
    double x_before = 0;     ///< where the cliff is: this run's place, or the baseline's for one that vanished
    double x_after = 0;      ///< (both 0 for a verdict on the whole map)
    std::string carrier;     ///< params_text of the case that carries the verdict
    MetricVerdict judgement; ///< as the carrier holds it (waivers applied)
};

/// The metric name of every cliff verdict along `axis`: "cliff@N".
inline std::string cliff_verdict_metric(std::string_view axis)
{
    return "cliff@" + std::string(axis);
}
/// Whether `metric` names a cliff verdict (cliff_verdict_metric).
inline bool is_cliff_verdict_metric(std::string_view metric)
{
    return metric.starts_with("cliff@") && metric.size() > 6;
}

/// One scanned axis of one variant (at fixed values of the suite's other parameters): its series
/// and its cliffs.
struct CliffMap {
    std::string variant;
    std::string axis; ///< the scanned parameter
    /// the other parameters' values, "K=64 M=128": the case's params_text without the axis
    /// (suite::others_text); "" when there are none
    std::string others;
    /// The same values by name ({K: 64, M: 128}), for code that needs a point of the map; empty
    /// when there are none, and in maps read from results files before version 4.
    std::map<std::string, std::int64_t> other_params;
    std::string arch;   ///< sm_90
    std::string figure; ///< what the series is: "time_per_work" (us per unit), "blocks_per_sm", ...
    std::string unit;   ///< of `values`
    std::vector<double> x;
    std::vector<double> values;
    std::vector<double> noise; ///< per point, the values' unit; empty for an exact series
    std::vector<Cliff> cliffs; ///< in axis order
    /// The gate's judgement of the cliffs, in axis order (see CliffVerdict); empty until compared.
    std::vector<CliffVerdict> verdicts;
};

} // namespace harness
