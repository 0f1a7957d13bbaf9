#pragma once
// The SM clock while samples are timed: a sample taken while the GPU throttled (power cap,
// thermal or hardware slowdown) measures the throttle, not the kernel. Read through NVML, loaded
// at run time like the driver, so a machine without it only loses the check.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace harness::run {

/// One reading of the SM clock.
struct ClockReading {
    unsigned sm_mhz = 0;
    unsigned max_sm_mhz = 0;
    std::uint64_t reasons = 0; ///< NVML clock-event reasons that slow the clock (idle and settings left out)

    /// Below `fraction` of the maximum clock, or slowed by power, heat or the hardware.
    bool throttled(double fraction = 0.75) const;
    /// "power cap, thermal" for reports.
    std::string describe() const;
};

/// Reads the SM clock of one GPU; inert when NVML is missing or does not know the GPU.
class ClockMonitor {
public:
    /// `pci_bus_id` as the driver gives it (cuDeviceGetPCIBusId).
    explicit ClockMonitor(const std::string& pci_bus_id);
    bool available() const { return device_ != nullptr; }
    std::optional<ClockReading> read() const;

private:
    void* device_ = nullptr;
};

/// Which samples to keep after throttled ones are dropped: `throttled[i]` marks sample i. All are
/// kept when fewer than `min_kept` would remain (the run was throttled throughout: the figures are
/// reported as they are, with a note).
std::vector<bool> samples_to_keep(const std::vector<bool>& throttled, std::size_t min_kept);

/// The SM clock while one case is timed, read when sampling starts, at most every 25 ms while it
/// goes on, and when it ends: which samples were taken while the clock was throttled, and the
/// slowest throttled reading. Inert without a monitor, or where the monitor is unavailable.
class ClockWatch {
public:
    /// Reads the clock a first time, before any sample.
    explicit ClockWatch(const ClockMonitor* monitor);
    bool watching() const { return monitor_ != nullptr; }
    /// After `taken` samples: reads the clock when `last` (sampling is over) or when a reading is due.
    void after_samples(std::size_t taken, bool last);
    /// The samples taken so far are dropped and taken again (by another timer): their marks go.
    void restart() { throttled_.clear(); }
    /// The slowest throttled reading; none when the clock never throttled.
    const std::optional<ClockReading>& slowest() const { return slowest_; }
    /// samples_to_keep() of the `taken` samples, those after the last reading counted unthrottled.
    std::vector<bool> keep(std::size_t taken, std::size_t min_kept);

private:
    void read(std::size_t taken);

    const ClockMonitor* monitor_;
    std::vector<bool> throttled_; ///< per sample taken: was the clock throttled before or after it
    std::optional<ClockReading> slowest_;
    bool previous_throttled_ = false;
    std::chrono::steady_clock::time_point last_read_;
};

} // namespace harness::run
