#pragma once
// The SM clock while samples are timed: a sample taken while the GPU throttled (power cap,
// thermal or hardware slowdown) measures the throttle, not the kernel. Read through NVML, loaded
// at run time like the driver, so a machine without it only loses the check.

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

} // namespace harness::run
