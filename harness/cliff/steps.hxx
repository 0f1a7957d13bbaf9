#pragma once
// Finding steps along a scanned axis: a jump in a series (time, time per unit of work,
// throughput, resident blocks) against the series' local trend and its measured noise. A smooth
// ramp has none; a staircase or a sawtooth (time per unit of work across wave boundaries) has one
// at each edge.

#include "harness/core/cliff_map.hxx"

#include <cstddef>
#include <vector>

namespace harness::cliff {

/// How large a step must be to count.
struct StepOptions {
    double min_depth = 0.05;       ///< relative: |level_after / level_before - 1|
    double min_significance = 5.0; ///< in units of the noise
    bool worse_only = false;       ///< only steps where the series gets worse (higher; see `higher_is_better`)
    bool higher_is_better = false; ///< throughput, blocks per SM: a drop is the cliff
};

/// The steps of the series `values` over the axis `x` (ascending, same length), each against
/// `noise` (per point, the values' unit; empty or all 0 for an exact series, where any change
/// beyond rounding is a step of infinite significance). Steps come in axis order, with
/// x_before/x_after/levels/depth/significance filled and cause `unexplained`.
std::vector<Cliff> find_steps(const std::vector<double>& x, const std::vector<double>& values,
                              const std::vector<double>& noise, const StepOptions& options = {});

} // namespace harness::cliff
