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

/// The parameter point of a case, for keeping a point's cases on one GPU where that costs little.
struct CasePoint {
    std::size_t point = 0;  ///< tells the run's points apart (of any suite)
    bool reference = false; ///< the point's reference case
    /// What a GPU pays, once, to compute the point's reference outputs when it runs another case
    /// of the point without its reference case (buffers drawn again, one untimed launch).
    double recompute_s = 0.0;
};

/// As above, with each GPU charged `recompute_s` once for each point whose cases it runs without
/// the point's reference case: a case goes to the GPU least loaded with it, charge included, so a
/// point's cases stay with its reference where the loads are within a recomputation of each other,
/// and the rule otherwise balances as the plain one. (Keeping points whole up to the mean load was
/// tried: with costs modelled from the baselines it put gemm's N=4096 cases on one GPU, 25.8 s
/// against 17.9 s on four H200s.) `expected_s` includes the charges; without `start_s`, no GPU's
/// load exceeds the mean by more than the costliest case and its charges. `points` has one entry
/// per cost; a point's entries give the same `recompute_s`.
/// `start_s`, when given, is when each GPU is expected to take its first case (its worker started
/// after the others'): a GPU that starts later gets that much less work. `expected_s` does not
/// include it.
DeviceSchedule schedule_on_devices(const std::vector<double>& costs, std::size_t devices,
                                   const std::vector<CasePoint>& points, const std::vector<double>& start_s = {});

} // namespace harness::run
