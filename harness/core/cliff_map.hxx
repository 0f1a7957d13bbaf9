#pragma once
// Performance cliffs along a scanned axis, as runs, reports and baselines keep them: the series a
// scan measured and the steps found in it, each with its cause. The analysis lives in cliff/.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace harness {

/// What made a series step between two adjacent points of a scanned axis.
enum class CliffCause {
    waves,       ///< the grid needs another wave of blocks over the GPU's SMs
    tiles,       ///< a grid dimension's ceil-division by a tile gained a block
    alignment,   ///< a pitch in bytes stopped (or started) being a multiple of 32-byte sectors
    occupancy,   ///< resident blocks per SM changed (registers or shared memory grew with the axis)
    unexplained, ///< none of the above changes between the two points
};

/// "waves", "tiles", "alignment", "occupancy", "unexplained".
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

/// One scanned axis of one variant (at fixed values of the suite's other parameters): its series
/// and its cliffs.
struct CliffMap {
    std::string variant;
    std::string axis;   ///< the scanned parameter
    std::string others; ///< the other parameters' values, "K=64 M=128"; "" when there are none
    std::string arch;   ///< sm_90
    std::string figure; ///< what the series is: "time_per_work" (us per unit), "blocks_per_sm", ...
    std::string unit;   ///< of `values`
    std::vector<double> x;
    std::vector<double> values;
    std::vector<double> noise; ///< per point, the values' unit; empty for an exact series
    std::vector<Cliff> cliffs; ///< in axis order
};

} // namespace harness
