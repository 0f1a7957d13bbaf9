#include "harness/core/partition.hxx"

#include "harness/core/error.hxx"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <functional>
#include <numeric>
#include <queue>
#include <tuple>

namespace harness {

std::vector<std::size_t> partition_by_cost(const std::vector<double>& costs, std::size_t bins)
{
    if (bins == 0) throw Error(ErrorKind::internal, "partition_by_cost: no bins to fill");
    for (std::size_t i = 0; i < costs.size(); ++i)
        if (!std::isfinite(costs[i]) || costs[i] < 0)
            throw Error(ErrorKind::internal, fmt::format("partition_by_cost: item {} costs {}", i, costs[i]));

    std::vector<std::size_t> order(costs.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return costs[a] > costs[b]; });

    // (total so far, items so far, bin): the smallest is the least-loaded bin; on a tie the one
    // with fewer items (items of no cost spread out), then the lower one.
    using Load = std::tuple<double, std::size_t, std::size_t>;
    std::priority_queue<Load, std::vector<Load>, std::greater<>> loads;
    for (std::size_t b = 0; b < bins; ++b) loads.emplace(0.0, 0, b);
    std::vector<std::size_t> bin_of(costs.size());
    for (const std::size_t item : order) {
        auto [total, items, bin] = loads.top();
        loads.pop();
        bin_of[item] = bin;
        loads.emplace(total + costs[item], items + 1, bin);
    }
    return bin_of;
}

} // namespace harness
