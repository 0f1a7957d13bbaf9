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
#include <optional>
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
                                   const std::vector<CasePoint>& points)
{
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

    // Points costliest first, each point's cases costliest first; ties keep the given order.
    std::map<std::size_t, double> point_cost;
    for (std::size_t i = 0; i < costs.size(); ++i) point_cost[points[i].point] += costs[i];
    std::vector<std::size_t> order(costs.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const double pa = point_cost[points[a].point], pb = point_cost[points[b].point];
        if (pa != pb) return pa > pb;
        if (points[a].point != points[b].point) return points[a].point < points[b].point;
        return costs[a] > costs[b];
    });
    // No schedule ends before the mean load or the costliest case: a case joins its point's GPU
    // while that GPU stays within this bound, which costs the run nothing.
    const double total = std::accumulate(costs.begin(), costs.end(), 0.0);
    const double bound = std::max(total / static_cast<double>(devices),
                                  costs.empty() ? 0.0 : *std::max_element(costs.begin(), costs.end()));

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
        // The GPU's load with this case: its cost, plus the point's recomputation where it starts
        // one, less it where the reference case makes it unneeded.
        const auto load_with = [&](std::size_t d) {
            const auto it = shares[d].find(p.point);
            const Share before = it == shares[d].end() ? Share{} : it->second;
            Share after = before;
            if (p.reference)
                after.reference = true;
            else
                ++after.others;
            const double charge = (after.charged() ? p.recompute_s : 0.0) - (before.charged() ? p.recompute_s : 0.0);
            return schedule.expected_s[d] + costs[item] + charge;
        };
        // The least loaded after the case, among `eligible` GPUs; on a tie the GPU with fewer
        // cases, then the lower.
        const auto least_loaded = [&](const auto& eligible) -> std::optional<std::size_t> {
            std::optional<std::tuple<double, std::size_t, std::size_t>> best;
            for (std::size_t d = 0; d < devices; ++d) {
                if (!eligible(d)) continue;
                const auto key = std::make_tuple(load_with(d), schedule.items[d].size(), d);
                if (!best || key < *best) best = key;
            }
            return best ? std::optional<std::size_t>(std::get<2>(*best)) : std::nullopt;
        };
        std::optional<std::size_t> chosen = least_loaded([&](std::size_t d) { return shares[d].contains(p.point); });
        if (chosen && load_with(*chosen) > bound) chosen.reset();
        const std::size_t best = chosen ? *chosen : *least_loaded([](std::size_t) { return true; });
        schedule.expected_s[best] = load_with(best);
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
