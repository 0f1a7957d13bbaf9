#pragma once
// Which GPU of a host runs which case when a run spreads over several (`harness run --devices`).

#include <cstddef>
#include <mutex>
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
    /// The shared tail: the cheapest cases, costliest first, handed out while the run goes to
    /// whichever GPU is free first (SharedCases), so that a case that takes longer than expected
    /// on one GPU does not leave the others idle at the end.
    std::vector<std::size_t> shared;
    double shared_s = 0; ///< the sum of the shared cases' costs
};

/// Spreads items (cases, of one suite or of several) over `devices` by their expected cost in
/// seconds with the longest-processing-time rule: costliest first onto the least-loaded device.
/// Cases, not parameter points, are the unit: a point's cases may run on several GPUs, each
/// verifying against the reference's outputs computed there, so a point whose one case takes most
/// of a suite's time no longer holds its other cases on the same GPU. Each device runs its items
/// in their given order (a point's reference first, one suite after another). Deterministic: the
/// same costs give the same schedule. On several devices, the cheapest cases whose costs add up
/// to at most `shared_fraction` of the whole become the shared tail instead. Throws
/// Error(internal) for no device, a bad cost or a fraction outside [0, 1).
DeviceSchedule schedule_on_devices(const std::vector<double>& costs, std::size_t devices, double shared_fraction = 0.0);

/// The share of a run's expected cost left to the shared tail on several GPUs: enough to even out
/// a GPU whose cases ran 20 % longer than expected.
inline constexpr double shared_tail_fraction = 0.2;

/// The least expected cost of a batch of shared cases: each batch changes its worker's profilers
/// twice (timer, then counters), about 0.1 s each.
inline constexpr double min_shared_batch_s = 1.0;

/// The shared tail while the run goes: each claim hands the GPU that asks a batch of the cases
/// left, costliest first, of a (2 x devices)th of the cost left or `min_batch_s`, whichever is
/// more, and at least one case. Thread-safe: the GPUs' threads claim at once.
class SharedCases {
public:
    SharedCases(const DeviceSchedule& schedule, const std::vector<double>& costs, std::size_t devices,
                double min_batch_s = min_shared_batch_s);
    /// Positions in the schedule's `shared` list, in the order of the cases they name (a point's
    /// reference first); empty when every shared case is taken.
    std::vector<std::size_t> claim();

private:
    std::mutex mutex_;
    std::vector<std::size_t> items_; ///< the schedule's shared cases, costliest first
    std::vector<double> costs_;      ///< their costs
    std::size_t next_ = 0;
    double left_s_ = 0;
    std::size_t devices_;
    double min_batch_s_;
};

} // namespace harness::run
