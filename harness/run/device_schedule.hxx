#pragma once
// Which GPU of a host runs which case when a run spreads over several (`harness run --devices`).

#include <cstddef>
#include <string>
#include <vector>

namespace harness::run {

/// The device ordinals of a `--devices` value: "all" (every one of the `available` devices) or a
/// comma-separated list ("0,2"). Throws Error(bad_input) naming the option for anything else,
/// a repeated ordinal or one the host does not have.
std::vector<int> parse_devices(const std::string& spec, int available);

/// Which GPU runs which case, and how long each GPU is expected to be busy.
struct DeviceSchedule {
    std::vector<std::vector<std::size_t>> items; ///< per device: indices into the costs, ascending
    std::vector<double> expected_s;              ///< per device: the sum of its items' costs
};

/// Spreads items (cases, of one suite or of several) over `devices` by their expected cost in
/// seconds with the longest-processing-time rule: costliest first onto the least-loaded device.
/// Cases, not parameter points, are the unit: a point's cases may run on several GPUs, each
/// verifying against the reference's outputs computed there, so a point whose one case takes most
/// of a suite's time no longer holds its other cases on the same GPU. Each device runs its items
/// in their given order (a point's reference first, one suite after another). Deterministic: the
/// same costs give the same schedule. Throws Error(internal) for no device or a bad cost.
DeviceSchedule schedule_on_devices(const std::vector<double>& costs, std::size_t devices);

} // namespace harness::run
