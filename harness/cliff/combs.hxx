#pragma once
// Steps of a comb: where a pitch grows along the axis, its alignment against 32-byte sectors
// repeats every few points, and a series can turn from a level into a comb (every 8th point
// aligned and fast, the others slower by how many sectors they straddle). Across the whole axis
// the comb's spread looks like noise; each residue class of the period is a plain series of its
// own, and steps in it. How, and why so: combs.cxx.

#include "harness/cliff/launch_model.hxx"
#include "harness/cliff/steps.hxx"
#include "harness/core/cliff_map.hxx"

#include <cstddef>
#include <string_view>
#include <vector>

namespace harness::cliff {

/// The period, in points, of the pitch's alignment against 32-byte sectors along the axis whose
/// points' launches are `shapes` (in axis order): 32 / gcd(32, d), d the pitch's change per axis
/// step where it changes (4 bytes per step: 8; 2: 16). 1, no comb, where no point has a pitch or
/// the pitch changes by whole sectors only.
std::size_t comb_period(const std::vector<LaunchShape>& shapes);

/// A step found in the residue classes of a comb, over the whole axis.
struct CombStep {
    /// x_before the last point below x_after that a stepping class has before its step, x_after
    /// the first point after a step in any class; levels, depth and significance those of the
    /// class that stepped deepest. Cause `unexplained`.
    Cliff cliff;
    std::size_t residues = 0; ///< how many of the period's residue classes stepped here
    std::size_t period = 1;   ///< the comb's period in points
};

/// The steps of each residue class of the series (x, values, noise as find_steps takes them),
/// its points grouped by their index along the axis modulo `period`, found by find_steps with
/// `options` on each class's points (their own noise), and merged where the spans of class steps
/// (each a period wide or more) share a gap. None where `period` is below 2. In axis order.
std::vector<CombStep> find_comb_steps(const std::vector<double>& x, const std::vector<double>& values,
                                      const std::vector<double>& noise, std::size_t period,
                                      const StepOptions& options = {});

/// Adds to `cliffs` (found by find_steps over the whole series, explained) the steps of the comb
/// that the pitch of `shapes` (one per point of x) makes, each explained by explain_cliff with
/// how many residues of `axis` stepped; a comb step within a period of a cliff of `cliffs` is that
/// cliff and is left out, and so is one that fewer than half the residues show. Nothing where
/// comb_period is 1. Keeps `cliffs` in axis order.
void add_comb_steps(std::vector<Cliff>& cliffs, const std::vector<double>& x, const std::vector<double>& values,
                    const std::vector<double>& noise, const std::vector<LaunchShape>& shapes, const GpuShape& gpu,
                    std::string_view axis, const StepOptions& options = {});

} // namespace harness::cliff
