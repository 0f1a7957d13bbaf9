#include "harness/run/device_schedule.hxx"

#include "harness/core/error.hxx"
#include "harness/core/partition.hxx"
#include "harness/core/text.hxx"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <numeric>

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

DeviceSchedule schedule_on_devices(const std::vector<double>& costs, std::size_t devices, double shared_fraction)
{
    if (devices == 0) throw Error(ErrorKind::internal, "a schedule over no device");
    if (!(shared_fraction >= 0.0 && shared_fraction < 1.0))
        throw Error(ErrorKind::internal, fmt::format("a shared tail of {} of the cost", shared_fraction));
    for (std::size_t i = 0; i < costs.size(); ++i)
        if (!std::isfinite(costs[i]) || costs[i] < 0)
            throw Error(ErrorKind::internal, fmt::format("a schedule of a case that costs {} (case {})", costs[i], i));
    DeviceSchedule schedule;
    schedule.items.resize(devices);
    schedule.expected_s.assign(devices, 0.0);

    // The tail: the cheapest cases (ties: the later first), while their sum stays within the share.
    std::vector<bool> in_tail(costs.size(), false);
    if (devices > 1 && shared_fraction > 0) {
        std::vector<std::size_t> order(costs.size());
        std::iota(order.begin(), order.end(), std::size_t{0});
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            return costs[a] < costs[b] || (costs[a] == costs[b] && a > b);
        });
        const double total = std::accumulate(costs.begin(), costs.end(), 0.0);
        for (const auto i : order) {
            if (schedule.shared_s + costs[i] > shared_fraction * total) break;
            in_tail[i] = true;
            schedule.shared_s += costs[i];
            schedule.shared.push_back(i);
        }
        std::reverse(schedule.shared.begin(), schedule.shared.end()); // costliest first
    }

    std::vector<double> kept;
    std::vector<std::size_t> index_of_kept;
    for (std::size_t i = 0; i < costs.size(); ++i)
        if (!in_tail[i]) {
            kept.push_back(costs[i]);
            index_of_kept.push_back(i);
        }
    const auto bins = partition_by_cost(kept, devices);
    for (std::size_t k = 0; k < bins.size(); ++k) {
        schedule.items[bins[k]].push_back(index_of_kept[k]);
        schedule.expected_s[bins[k]] += kept[k];
    }
    return schedule;
}

SharedCases::SharedCases(const DeviceSchedule& schedule, const std::vector<double>& costs, std::size_t devices,
                         double min_batch_s)
    : items_(schedule.shared), devices_(std::max<std::size_t>(devices, 1)), min_batch_s_(min_batch_s)
{
    for (const auto i : items_) {
        costs_.push_back(costs.at(i));
        left_s_ += costs_.back();
    }
}

std::vector<std::size_t> SharedCases::claim()
{
    const std::lock_guard lock(mutex_);
    std::vector<std::size_t> batch;
    const double target = std::max(left_s_ / static_cast<double>(2 * devices_), min_batch_s_);
    double taken = 0;
    while (next_ < items_.size() && (batch.empty() || taken < target)) {
        taken += costs_[next_];
        batch.push_back(next_++);
    }
    left_s_ = std::max(0.0, left_s_ - taken);
    std::sort(batch.begin(), batch.end(), [&](std::size_t a, std::size_t b) { return items_[a] < items_[b]; });
    return batch;
}

} // namespace harness::run
