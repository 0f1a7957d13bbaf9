#include "harness/run/clock_monitor.hxx"

#include "harness/core/text.hxx"

#include <dlfcn.h>

namespace harness::run {

namespace {

// NVML's C interface, as its documentation gives it: the few calls used here.
using nvml_return = int;
using nvml_device = void*;
constexpr int nvml_success = 0;
constexpr int nvml_clock_sm = 1;

// Clock-event reasons that mean a slower clock for the kernel (NVML's documented bit values).
constexpr std::uint64_t reason_sw_power_cap = 0x4;
constexpr std::uint64_t reason_hw_slowdown = 0x8;
constexpr std::uint64_t reason_sw_thermal = 0x20;
constexpr std::uint64_t reason_hw_thermal = 0x40;
constexpr std::uint64_t reason_hw_power_brake = 0x80;
constexpr std::uint64_t slowing_reasons =
    reason_sw_power_cap | reason_hw_slowdown | reason_sw_thermal | reason_hw_thermal | reason_hw_power_brake;

struct Nvml {
    nvml_return (*init)() = nullptr;
    nvml_return (*by_pci_bus_id)(const char*, nvml_device*) = nullptr;
    nvml_return (*clock)(nvml_device, int, unsigned*) = nullptr;
    nvml_return (*max_clock)(nvml_device, int, unsigned*) = nullptr;
    nvml_return (*reasons)(nvml_device, unsigned long long*) = nullptr;
    bool ready = false;
};

const Nvml& nvml()
{
    static const Nvml n = [] {
        Nvml n;
        void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!lib) return n;
        const auto find = [&](auto& fn, const char* name) {
            fn = reinterpret_cast<std::decay_t<decltype(fn)>>(dlsym(lib, name));
        };
        find(n.init, "nvmlInit_v2");
        find(n.by_pci_bus_id, "nvmlDeviceGetHandleByPciBusId_v2");
        find(n.clock, "nvmlDeviceGetClockInfo");
        find(n.max_clock, "nvmlDeviceGetMaxClockInfo");
        find(n.reasons, "nvmlDeviceGetCurrentClocksEventReasons");
        if (!n.reasons) find(n.reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
        n.ready = n.init && n.by_pci_bus_id && n.clock && n.max_clock && n.reasons && n.init() == nvml_success;
        return n;
    }();
    return n;
}

} // namespace

bool ClockReading::throttled(double fraction) const
{
    return (reasons & slowing_reasons) != 0 || (max_sm_mhz > 0 && sm_mhz < fraction * max_sm_mhz);
}

std::string ClockReading::describe() const
{
    std::vector<std::string> parts;
    if (reasons & reason_sw_power_cap) parts.emplace_back("power cap");
    if (reasons & reason_hw_power_brake) parts.emplace_back("power brake");
    if (reasons & (reason_sw_thermal | reason_hw_thermal)) parts.emplace_back("thermal");
    if (reasons & reason_hw_slowdown) parts.emplace_back("hardware slowdown");
    std::string text = std::to_string(sm_mhz) + " of " + std::to_string(max_sm_mhz) + " MHz";
    if (!parts.empty()) text += ", " + join(parts, ", ");
    return text;
}

ClockMonitor::ClockMonitor(const std::string& pci_bus_id)
{
    const Nvml& n = nvml();
    nvml_device device = nullptr;
    if (n.ready && n.by_pci_bus_id(pci_bus_id.c_str(), &device) == nvml_success) device_ = device;
}

std::optional<ClockReading> ClockMonitor::read() const
{
    if (!device_) return std::nullopt;
    const Nvml& n = nvml();
    ClockReading r;
    unsigned long long reasons = 0;
    if (n.clock(device_, nvml_clock_sm, &r.sm_mhz) != nvml_success ||
        n.max_clock(device_, nvml_clock_sm, &r.max_sm_mhz) != nvml_success ||
        n.reasons(device_, &reasons) != nvml_success)
        return std::nullopt;
    r.reasons = reasons;
    return r;
}

std::vector<bool> samples_to_keep(const std::vector<bool>& throttled, std::size_t min_kept)
{
    std::size_t kept = 0;
    for (const bool t : throttled) kept += t ? 0 : 1;
    std::vector<bool> keep(throttled.size(), true);
    if (kept < min_kept) return keep;
    for (std::size_t i = 0; i < throttled.size(); ++i) keep[i] = !throttled[i];
    return keep;
}

ClockWatch::ClockWatch(const ClockMonitor* monitor) : monitor_(monitor && monitor->available() ? monitor : nullptr)
{
    if (monitor_) read(0);
}

void ClockWatch::after_samples(std::size_t taken, bool last)
{
    constexpr auto interval = std::chrono::milliseconds(25);
    if (monitor_ && (last || std::chrono::steady_clock::now() - last_read_ >= interval)) read(taken);
}

void ClockWatch::read(std::size_t taken)
{
    const auto reading = monitor_->read();
    const bool now_throttled = reading && reading->throttled();
    if (now_throttled && (!slowest_ || reading->sm_mhz < slowest_->sm_mhz)) slowest_ = reading;
    // A sample between two readings is suspect when either reading was throttled.
    throttled_.resize(taken, now_throttled || previous_throttled_);
    previous_throttled_ = now_throttled;
    last_read_ = std::chrono::steady_clock::now();
}

std::vector<bool> ClockWatch::keep(std::size_t taken, std::size_t min_kept)
{
    throttled_.resize(taken, false);
    return samples_to_keep(throttled_, min_kept);
}

} // namespace harness::run
