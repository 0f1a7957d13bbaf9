#include "harness/run/device_schedule.hxx"

#include "harness/core/error.hxx"
#include "harness/core/partition.hxx"
#include "harness/core/text.hxx"

#include <algorithm>
#include <charconv>
#include <fmt/format.h>

namespace harness::run {

std::vector<int> parse_devices(const std::string& spec, int available)
{
    const std::string text(trim(spec));
    std::vector<int> ordinals;
    if (text == "all") {
        for (int i = 0; i < available; ++i) ordinals.push_back(i);
        if (ordinals.empty()) throw Error(ErrorKind::environment, "--devices all: the driver sees no CUDA device");
        return ordinals;
    }
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        const std::string item(trim(text.substr(start, comma - start)));
        int value = -1;
        const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
        if (item.empty() || ec != std::errc() || end != item.data() + item.size() || value < 0)
            throw Error(
                ErrorKind::bad_input,
                fmt::format("--devices: '{}' is not a device ordinal (give 'all' or a list such as 0,1)", item));
        if (std::find(ordinals.begin(), ordinals.end(), value) != ordinals.end())
            throw Error(ErrorKind::bad_input, fmt::format("--devices: device {} is listed twice", value));
        if (value >= available)
            throw Error(ErrorKind::bad_input,
                        fmt::format("--devices: no CUDA device {} (the driver sees {})", value, available));
        ordinals.push_back(value);
        start = comma + 1;
    }
    return ordinals;
}

DeviceSchedule schedule_on_devices(const std::vector<double>& costs, std::size_t devices)
{
    if (devices == 0) throw Error(ErrorKind::internal, "a schedule over no device");
    const auto bins = partition_by_cost(costs, devices);
    DeviceSchedule schedule;
    schedule.items.resize(devices);
    schedule.expected_s.assign(devices, 0.0);
    for (std::size_t i = 0; i < bins.size(); ++i) {
        schedule.items[bins[i]].push_back(i);
        schedule.expected_s[bins[i]] += costs[i];
    }
    return schedule;
}

} // namespace harness::run
