#include "harness/pipeline/device_choice.hxx"

#include "harness/core/error.hxx"
#include "harness/core/text.hxx"
#include "harness/run/device_schedule.hxx"

#include <algorithm>
#include <cstdio>
#include <fmt/format.h>
#include <limits>
#include <numeric>

namespace harness::pipeline {

namespace {

/// GPUs probed in one child for `--devices all`: more than a host has, so that choose_devices
/// finds them all probed (a host with more probes the rest then).
constexpr int probed_at_once = 16;

} // namespace

std::optional<run::DeviceInfo> choose_device(const run::RunSettings& settings)
{
    std::string why = "--static given";
    // With --devices, every GPU it may name is probed now, in one child: choose_devices then finds
    // them probed (on a four-GPU host each probe's driver start took about a second).
    std::vector<int> ordinals = {settings.device};
    if (!settings.devices.empty() && trim(settings.devices) != "all")
        ordinals = run::parse_devices(settings.devices, std::numeric_limits<int>::max());
    else if (!settings.devices.empty()) {
        ordinals.resize(probed_at_once);
        std::iota(ordinals.begin(), ordinals.end(), 0);
    }
    std::optional<run::DeviceInfo> device;
    if (!settings.static_only) {
        std::vector<std::string> reasons;
        device = run::probe_devices(ordinals, reasons).front();
        if (!device) why = reasons.front();
    }
    if (!device && settings.require_gpu && !settings.static_only)
        throw Error(ErrorKind::environment,
                    fmt::format("no usable GPU ({}), and {} requires one; pass --static to run the static tier "
                                "only",
                                why, settings.require_gpu_because));
    if (!device)
        fmt::print(stderr,
                   "harness: no usable GPU ({}): running the static tier only. Every variant is compiled for each "
                   "architecture and its registers, spills, shared memory and theoretical occupancy are read and "
                   "compared with the baselines; nothing is verified or timed.\n",
                   why);
    return device;
}

std::vector<run::DeviceInfo> choose_devices(const run::RunSettings& settings, const run::DeviceInfo& first)
{
    if (settings.devices.empty()) return {first};
    const auto ordinals = run::parse_devices(settings.devices, first.device_count);
    std::vector<int> others;
    for (const int ordinal : ordinals)
        if (ordinal != first.ordinal) others.push_back(ordinal);
    std::vector<std::string> why;
    const auto probed =
        others.empty() ? std::vector<std::optional<run::DeviceInfo>>{} : run::probe_devices(others, why);
    std::vector<run::DeviceInfo> devices;
    for (const int ordinal : ordinals) {
        if (ordinal == first.ordinal) {
            devices.push_back(first);
            continue;
        }
        const auto k = static_cast<std::size_t>(std::find(others.begin(), others.end(), ordinal) - others.begin());
        const auto& info = probed[k];
        if (!info)
            throw Error(ErrorKind::environment, fmt::format("--devices: GPU {} is not usable: {}", ordinal, why[k]));
        if (info->name != first.name || info->arch != first.arch)
            throw Error(ErrorKind::environment,
                        fmt::format("--devices: GPU {} is a {} and GPU {} a {}; time baselines are kept per GPU "
                                    "model, so run GPUs of different models separately",
                                    first.ordinal, first.name, ordinal, info->name));
        devices.push_back(*info);
    }
    return devices;
}

} // namespace harness::pipeline
