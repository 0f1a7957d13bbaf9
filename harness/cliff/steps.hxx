#pragma once
// Finding steps along a scanned axis: a jump in a series (time, time per unit of work,
// throughput, resident blocks) against the series' local trend and its measured noise. A smooth
// ramp has none; a staircase or a sawtooth (time per unit of work across wave boundaries) has one
// at each edge. How, and why so: steps.cxx.

#include "harness/core/cliff_map.hxx"

#include <cstddef>
#include <vector>

namespace harness::cliff {

/// How large a step must be to count.
struct StepOptions {
    double min_depth = 0.05;       ///< relative: |level_after / level_before - 1|
    double min_significance = 5.0; ///< in units of one point's noise (Cliff::significance)
    bool worse_only = false;       ///< only steps where the series gets worse (higher; see `higher_is_better`)
    bool higher_is_better = false; ///< throughput, blocks per SM: a drop is the cliff
    /// Points each side of a gap that the local trend is fitted to (at least 3). More points see
    /// shallower steps in the noise; a step closer than this to another one is still found, on
    /// the points between the two (three at least).
    std::size_t window = 12;
};

/// The steps of the series `values` over the axis `x` (strictly ascending, same length), each
/// against `noise` (per point, one standard deviation in the values' unit; empty or all 0 for an
/// exact series, where every change beyond a relative 1e-9 is a step of infinite significance).
/// Points whose value is NaN or infinite (a point that did not run) are left out. Steps come in
/// axis order with cause `unexplained`: x_before the last point at the old level and x_after the
/// first at the new one (a rise over a few points lies between them); level_before and
/// level_after the old and new trends where the rise is half done (an exact series: the two
/// points' values); depth their ratio less 1; significance the difference of the levels over one
/// point's noise there, scaled up where fewer points than a window surround the step. In a noisy
/// series each side of a step needs three points. Throws Error: bad_input for an x that is not
/// finite or does not ascend, internal for lengths that differ or a negative or non-finite noise.
std::vector<Cliff> find_steps(const std::vector<double>& x, const std::vector<double>& values,
                              const std::vector<double>& noise, const StepOptions& options = {});

} // namespace harness::cliff
