// Change points on synthetic series with known steps, creeps and pure noise (seeded): the tests
// print precision and recall and hold the calibration of ChangePointOptions' defaults.

#include "harness/history/change_points.hxx"

#include <cmath>
#include <cstdio>
#include <gtest/gtest.h>
#include <random>

namespace history_change_points_test {

using namespace harness::history;

namespace {

constexpr double level = 100.0;
constexpr double noise = 0.5; // 0.5 % of the level

std::vector<double> noisy_series(std::mt19937& rng, std::size_t n)
{
    std::normal_distribution<double> gauss(0.0, noise);
    std::vector<double> v(n);
    for (auto& x : v) x = level + gauss(rng);
    return v;
}

} // namespace

TEST(HistoryChangePoints, ExactSeriesChangeAtEveryStep)
{
    const std::vector<double> v = {40, 40, 40, 48, 48, 40, 40};
    const auto a = analyze_exact(v);
    ASSERT_EQ(a.change_points.size(), 2u);
    EXPECT_EQ(a.change_points[0].index, 3u);
    EXPECT_EQ(a.change_points[0].before, 40);
    EXPECT_EQ(a.change_points[0].after, 48);
    EXPECT_EQ(a.change_points[1].index, 5u);
    EXPECT_TRUE(analyze_exact(std::vector<double>(30, 7.0)).change_points.empty());
}

TEST(HistoryChangePoints, FourPercentStepsAtHalfAPercentNoiseAreFound)
{
    std::mt19937 rng(20261126);
    std::uniform_int_distribution<std::size_t> where(5, 25);
    std::bernoulli_distribution up(0.5);
    std::size_t truth = 0, found = 0, reported = 0, correct = 0;
    for (int k = 0; k < 300; ++k) {
        auto v = noisy_series(rng, 30);
        // A third of the series hold two steps, at least five commits apart.
        std::vector<std::size_t> steps = {where(rng)};
        if (k % 3 == 0) {
            std::size_t second = where(rng);
            while (second + 5 > steps[0] && second < steps[0] + 5) second = where(rng);
            steps.push_back(second);
        }
        for (std::size_t s : steps) {
            const double factor = up(rng) ? 1.04 : 0.96;
            for (std::size_t i = s; i < v.size(); ++i) v[i] *= factor;
        }
        const auto a = analyze_noisy(v, noise);
        truth += steps.size();
        reported += a.change_points.size();
        for (std::size_t s : steps)
            for (const auto& c : a.change_points)
                if (c.index + 1 >= s && c.index <= s + 1) {
                    ++found;
                    break;
                }
        for (const auto& c : a.change_points)
            for (std::size_t s : steps)
                if (c.index + 1 >= s && c.index <= s + 1) {
                    ++correct;
                    break;
                }
    }
    const double recall = static_cast<double>(found) / static_cast<double>(truth);
    const double precision = reported ? static_cast<double>(correct) / static_cast<double>(reported) : 1.0;
    std::printf("4%% steps at 0.5%% noise, 30 commits: recall %.3f (%zu of %zu), precision %.3f (%zu of %zu)\n", recall,
                found, truth, precision, correct, reported);
    EXPECT_GE(recall, 0.9);
    EXPECT_GE(precision, 0.9);
}

TEST(HistoryChangePoints, PureNoiseRaisesNothing)
{
    std::mt19937 rng(7);
    std::size_t false_changes = 0, false_creeps = 0;
    for (int k = 0; k < 200; ++k) {
        const auto v = noisy_series(rng, 30);
        const auto a = analyze_noisy(v, noise);
        false_changes += a.change_points.size();
        false_creeps += a.creep ? 1 : 0;
    }
    // The measured noise may understate the series' own (runs vary more than their samples say).
    std::size_t understated = 0;
    for (int k = 0; k < 200; ++k) understated += analyze_noisy(noisy_series(rng, 30), noise / 3).change_points.size();
    std::printf("200 pure-noise series of 30 commits: %zu change points, %zu creeps; with the noise understated "
                "threefold: %zu change points\n",
                false_changes, false_creeps, understated);
    EXPECT_EQ(false_changes, 0u);
    EXPECT_EQ(false_creeps, 0u);
    EXPECT_EQ(understated, 0u);
}

TEST(HistoryChangePoints, AHalfPercentPerCommitCreepOverTenCommitsIsFlagged)
{
    std::mt19937 rng(11);
    std::size_t flagged = 0, as_creep = 0;
    const int trials = 100;
    for (int k = 0; k < trials; ++k) {
        auto v = noisy_series(rng, 30);
        for (std::size_t i = 20; i < 30; ++i) v[i] *= 1.0 + 0.005 * static_cast<double>(i - 19);
        const auto a = analyze_noisy(v, noise);
        as_creep += a.creep && a.creep->total > 0 ? 1 : 0;
        bool in_window = a.creep.has_value();
        for (const auto& c : a.change_points) in_window = in_window || c.index >= 20;
        flagged += in_window ? 1 : 0;
    }
    std::printf("0.5%%/commit creep over 10 commits: flagged as creep %d/%d, flagged at all %zu/%d\n",
                static_cast<int>(as_creep), trials, flagged, trials);
    EXPECT_GE(as_creep, static_cast<std::size_t>(trials * 9 / 10));
    EXPECT_EQ(flagged, static_cast<std::size_t>(trials));
}

// A creep that stopped a few commits before the newest is still one: 0.5 % a commit over commits
// 4 to 13 of 16, then flat, as in a series whose creeping kernel was left alone afterwards.
TEST(HistoryChangePoints, ACreepThatStoppedBeforeTheNewestCommitIsFlagged)
{
    std::mt19937 rng(17);
    std::size_t as_creep = 0;
    const int trials = 100;
    for (int k = 0; k < trials; ++k) {
        auto v = noisy_series(rng, 16);
        double level = 1.0;
        for (std::size_t i = 0; i < 16; ++i) {
            if (i >= 3 && i <= 12) level *= 1.005;
            v[i] *= level;
        }
        const auto a = analyze_noisy(v, noise);
        as_creep += a.creep && a.creep->total > 0 && a.creep->first + a.creep->window <= 16 ? 1 : 0;
    }
    std::printf("0.5%%/commit creep over commits 4 to 13 of 16: flagged as creep %d/%d\n", static_cast<int>(as_creep),
                trials);
    EXPECT_GE(as_creep, static_cast<std::size_t>(trials * 9 / 10));
}

TEST(HistoryChangePoints, AStepIsNotACreep)
{
    std::mt19937 rng(13);
    std::size_t creeps = 0;
    for (int k = 0; k < 100; ++k) {
        auto v = noisy_series(rng, 30);
        for (std::size_t i = 25; i < 30; ++i) v[i] *= 1.04;
        creeps += analyze_noisy(v, noise).creep ? 1 : 0;
    }
    std::printf("a 4%% step five commits back: %zu/100 called creep\n", creeps);
    EXPECT_LE(creeps, 5u);
}

TEST(HistoryChangePoints, TrendStatistics)
{
    const std::vector<double> rising = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    EXPECT_GT(mann_kendall_z(rising), 3.5);
    EXPECT_DOUBLE_EQ(theil_sen_slope(rising), 1.0);
    EXPECT_EQ(mann_kendall_z(std::vector<double>(10, 3.0)), 0.0);
    EXPECT_NEAR(neighbour_noise(std::vector<double>{0, 1, 0, 1, 0, 1}), 1.4826 / std::sqrt(2.0), 1e-12);
    const auto cuts = pelt_mean_changes(std::vector<double>{0, 0, 0, 0, 5, 5, 5, 5}, 0.5, 10, 2);
    ASSERT_EQ(cuts.size(), 1u);
    EXPECT_EQ(cuts[0], 4u);
}

} // namespace history_change_points_test
