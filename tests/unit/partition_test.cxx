#include "harness/core/error.hxx"
#include "harness/core/partition.hxx"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <numeric>
#include <random>

namespace partition_test {

using harness::partition_by_cost;

namespace {

std::vector<double> bin_totals(const std::vector<double>& costs, const std::vector<std::size_t>& bin_of,
                               std::size_t bins)
{
    std::vector<double> totals(bins, 0.0);
    for (std::size_t i = 0; i < costs.size(); ++i) totals.at(bin_of.at(i)) += costs[i];
    return totals;
}

std::vector<double> random_costs(std::size_t n, unsigned seed)
{
    std::mt19937 rng(seed);
    std::lognormal_distribution<double> cost(0.0, 1.5); // a few heavy items among many light ones
    std::vector<double> costs(n);
    for (auto& c : costs) c = cost(rng);
    return costs;
}

} // namespace

TEST(Partition, EveryItemGetsExactlyOneBinInRange)
{
    const auto costs = random_costs(97, 1);
    for (const std::size_t bins : {1u, 2u, 3u, 7u, 96u, 97u}) {
        const auto bin_of = partition_by_cost(costs, bins);
        ASSERT_EQ(bin_of.size(), costs.size());
        for (const auto b : bin_of) EXPECT_LT(b, bins);
        // The totals of the bins add up to the total cost: nothing lost, nothing counted twice.
        const auto totals = bin_totals(costs, bin_of, bins);
        EXPECT_NEAR(std::accumulate(totals.begin(), totals.end(), 0.0),
                    std::accumulate(costs.begin(), costs.end(), 0.0), 1e-9);
    }
    EXPECT_TRUE(partition_by_cost({}, 3).empty());
}

TEST(Partition, NoBinExceedsTheAverageByMoreThanTheLargestItem)
{
    for (unsigned seed = 1; seed <= 20; ++seed)
        for (const std::size_t bins : {2u, 3u, 4u, 8u}) {
            const auto costs = random_costs(10 + seed * 5, seed);
            const auto totals = bin_totals(costs, partition_by_cost(costs, bins), bins);
            const double total = std::accumulate(costs.begin(), costs.end(), 0.0);
            const double largest = *std::max_element(costs.begin(), costs.end());
            const double heaviest = *std::max_element(totals.begin(), totals.end());
            // No split can do better than the larger of the average and the largest item.
            const double lower_bound = std::max(total / static_cast<double>(bins), largest);
            EXPECT_LE(heaviest, total / static_cast<double>(bins) + largest + 1e-9) << seed << " " << bins;
            EXPECT_GE(heaviest, lower_bound - 1e-9);
        }
}

TEST(Partition, WithinFourThirdsOfTheBestSplit)
{
    // Small enough to try every split: the longest-processing-time rule is within (4/3 - 1/3m) of it.
    for (unsigned seed = 1; seed <= 10; ++seed)
        for (const std::size_t bins : {2u, 3u}) {
            const auto costs = random_costs(8, seed);
            double best = std::numeric_limits<double>::infinity();
            std::size_t splits = 1;
            for (std::size_t i = 0; i < costs.size(); ++i) splits *= bins;
            for (std::size_t code = 0; code < splits; ++code) {
                std::vector<std::size_t> bin_of(costs.size());
                for (std::size_t i = 0, c = code; i < costs.size(); ++i, c /= bins) bin_of[i] = c % bins;
                const auto totals = bin_totals(costs, bin_of, bins);
                best = std::min(best, *std::max_element(totals.begin(), totals.end()));
            }
            const auto totals = bin_totals(costs, partition_by_cost(costs, bins), bins);
            const double m = static_cast<double>(bins);
            EXPECT_LE(*std::max_element(totals.begin(), totals.end()), best * (4.0 / 3.0 - 1.0 / (3.0 * m)) + 1e-9)
                << seed << " " << bins;
        }
}

TEST(Partition, LargestFirstOntoTheLeastLoadedBin)
{
    // 5 -> bin 0; 3 -> bin 1; 3 -> bin 1 (3 < 5); 2 -> bin 0 (5 < 6); 2 -> bin 1 (6 < 7); 1 -> bin 0.
    EXPECT_EQ(partition_by_cost({5, 3, 3, 2, 2, 1}, 2), (std::vector<std::size_t>{0, 1, 1, 0, 1, 0}));
    // The same costs in another order: 5, 3 (index 2), 3 (index 5), 2 (index 1), 2 (index 4), 1.
    EXPECT_EQ(partition_by_cost({1, 2, 3, 5, 2, 3}, 2), (std::vector<std::size_t>{0, 0, 1, 0, 1, 1}));
}

TEST(Partition, TiesAreBrokenByIndexSoTheResultIsDeterministic)
{
    EXPECT_EQ(partition_by_cost({1, 1, 1, 1}, 2), (std::vector<std::size_t>{0, 1, 0, 1}));
    const auto costs = random_costs(500, 7);
    const auto first = partition_by_cost(costs, 5);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(partition_by_cost(costs, 5), first);
    // Equal costs at other positions: the lower index is placed first.
    EXPECT_EQ(partition_by_cost({2, 4, 2, 4}, 2), (std::vector<std::size_t>{0, 0, 1, 1}));
}

TEST(Partition, MoreBinsThanItemsGivesEachItemABinOfItsOwn)
{
    const auto bin_of = partition_by_cost({3, 9, 1}, 5);
    EXPECT_EQ(bin_of, (std::vector<std::size_t>{1, 0, 2})); // largest first, onto bins 0, 1, 2
}

TEST(Partition, ItemsOfNoCostAreDealtOutInTurn)
{
    EXPECT_EQ(partition_by_cost({0, 0, 0, 0, 0}, 3), (std::vector<std::size_t>{0, 1, 2, 0, 1}));
    // Free items fill the bins that hold fewer items once the costly ones are placed.
    EXPECT_EQ(partition_by_cost({0, 4, 0, 4, 0, 0}, 2), (std::vector<std::size_t>{0, 0, 1, 1, 0, 1}));
}

TEST(Partition, RefusesNoBinsAndCostsThatAreNotAmounts)
{
    EXPECT_THROW(partition_by_cost({1}, 0), harness::Error);
    EXPECT_THROW(partition_by_cost({1, -1}, 2), harness::Error);
    EXPECT_THROW(partition_by_cost({std::nan("")}, 2), harness::Error);
    EXPECT_THROW(partition_by_cost({std::numeric_limits<double>::infinity()}, 2), harness::Error);
}

} // namespace partition_test
