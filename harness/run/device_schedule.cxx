#include "harness/run/device_schedule.hxx"

#include "harness/core/error.hxx"
#include "harness/core/partition.hxx"
#include "harness/core/text.hxx"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <numeric>
#include <tuple>

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

DeviceSchedule schedule_on_devices(const std::vector<double>& costs, std::size_t devices,
                                   const std::vector<CasePoint>& points, const std::vector<double>& start_s)
{
    if (!start_s.empty() && start_s.size() != devices)
        throw Error(ErrorKind::internal,
                    fmt::format("a schedule over {} GPUs given the start of {}", devices, start_s.size()));
    for (const double s : start_s)
        if (!std::isfinite(s) || s < 0) throw Error(ErrorKind::internal, fmt::format("a GPU starting at {} s", s));
    if (points.size() != costs.size())
        throw Error(ErrorKind::internal,
                    fmt::format("a schedule of {} cases given the points of {}", costs.size(), points.size()));
    if (devices == 0) throw Error(ErrorKind::internal, "a schedule over no device");
    for (std::size_t i = 0; i < costs.size(); ++i)
        if (!std::isfinite(costs[i]) || costs[i] < 0)
            throw Error(ErrorKind::internal, fmt::format("a schedule's case {} costs {}", i, costs[i]));
    for (const auto& p : points)
        if (!std::isfinite(p.recompute_s) || p.recompute_s < 0)
            throw Error(ErrorKind::internal, fmt::format("a point's reference recomputed for {} s", p.recompute_s));

    // The longest-processing-time rule's order: costliest first, ties by index.
    std::vector<std::size_t> order(costs.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return costs[a] > costs[b]; });

    // Per GPU and point: whether it runs the point's reference case, and how many of its others.
    struct Share {
        bool reference = false;
        std::size_t others = 0;
        bool charged() const { return others > 0 && !reference; }
    };
    std::vector<std::map<std::size_t, Share>> shares(devices);
    DeviceSchedule schedule;
    schedule.items.resize(devices);
    schedule.expected_s.assign(devices, 0.0);
    for (const std::size_t item : order) {
        const CasePoint& p = points[item];
        // The charge for this case on a GPU: the point's recomputation where the case starts one,
        // less it where the reference case makes it unneeded.
        const auto charge_on = [&](std::size_t d) {
            const auto it = shares[d].find(p.point);
            const Share before = it == shares[d].end() ? Share{} : it->second;
            Share after = before;
            if (p.reference)
                after.reference = true;
            else
                ++after.others;
            return (after.charged() ? p.recompute_s : 0.0) - (before.charged() ? p.recompute_s : 0.0);
        };
        // The least loaded with the case; on a tie the GPU charged less for it, then the one with
        // fewer cases, then the lower.
        const auto key_of = [&](std::size_t d) {
            const double charge = charge_on(d);
            const double start = start_s.empty() ? 0.0 : start_s[d];
            return std::make_tuple(start + schedule.expected_s[d] + costs[item] + charge, charge,
                                   schedule.items[d].size(), d);
        };
        auto best_key = key_of(0);
        for (std::size_t d = 1; d < devices; ++d) best_key = std::min(best_key, key_of(d));
        const std::size_t best = std::get<3>(best_key);
        schedule.expected_s[best] += costs[item] + std::get<1>(best_key);
        Share& share = shares[best][p.point];
        if (p.reference)
            share.reference = true;
        else
            ++share.others;
        schedule.items[best].push_back(item);
    }
    for (auto& items : schedule.items) std::sort(items.begin(), items.end());
    return schedule;
}

} // namespace harness::run
