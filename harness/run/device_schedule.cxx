#include "harness/run/device_schedule.hxx"

#include "harness/core/error.hxx"
#include "harness/core/partition.hxx"
#include "harness/core/text.hxx"

#include <algorithm>
#include <charconv>
#include <fmt/format.h>
#include <map>

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

std::vector<std::vector<std::size_t>> schedule_on_devices(const std::vector<suite::Case>& cases, std::size_t devices,
                                                          const std::vector<double>& point_costs)
{
    if (devices == 0) throw Error(ErrorKind::internal, "a schedule over no device");
    std::map<std::size_t, std::vector<std::size_t>> by_point;
    for (std::size_t i = 0; i < cases.size(); ++i) by_point[cases[i].point].push_back(i);
    const bool by_cost = std::all_of(by_point.begin(), by_point.end(), [&](const auto& entry) {
        return entry.first < point_costs.size() && point_costs[entry.first] >= 0;
    });
    std::vector<double> costs;
    std::vector<const std::vector<std::size_t>*> groups;
    for (const auto& [point, members] : by_point) {
        costs.push_back(by_cost ? point_costs[point] : static_cast<double>(members.size()));
        groups.push_back(&members);
    }
    const auto bins = partition_by_cost(costs, devices);
    std::vector<std::vector<std::size_t>> schedule(devices);
    for (std::size_t g = 0; g < groups.size(); ++g)
        schedule[bins[g]].insert(schedule[bins[g]].end(), groups[g]->begin(), groups[g]->end());
    for (auto& list : schedule) std::sort(list.begin(), list.end());
    return schedule;
}

} // namespace harness::run
