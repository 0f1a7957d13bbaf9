#pragma once
// Which GPU of a host runs which case when a run spreads over several (`harness run --devices`).

#include "harness/suite/sweep.hxx"

#include <cstddef>
#include <string>
#include <vector>

namespace harness::run {

/// The device ordinals of a `--devices` value: "all" (every one of the `available` devices) or a
/// comma-separated list ("0,2"). Throws Error(bad_input) naming the option for anything else,
/// a repeated ordinal or one the host does not have.
std::vector<int> parse_devices(const std::string& spec, int available);

/// The cases (indices into `cases`) each of `devices` runs, in their original order. All variants
/// at one parameter point go to the same device, since the reference's outputs there verify the
/// others; points are balanced by their expected cost, `point_costs[point]` (seconds, as shards
/// are: from the baselines' times), or by their number of cases where `point_costs` does not
/// cover every point; costliest first onto the least-loaded device. Deterministic: the same
/// cases and costs give the same schedule.
std::vector<std::vector<std::size_t>> schedule_on_devices(const std::vector<suite::Case>& cases, std::size_t devices,
                                                          const std::vector<double>& point_costs = {});

} // namespace harness::run
