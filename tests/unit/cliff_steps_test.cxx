// The step finder on synthetic scans with known steps (seeded): steps of several depths over flat
// and sloped trends, staircases and sawtooths across wave boundaries, exact series, rises over a
// few points; and shapes that must give none: ramps, curves, a knee, pure noise. Assertions leave
// room for the noise, so they hold whichever standard library draws the numbers.

#include "harness/cliff/steps.hxx"
#include "harness/core/error.hxx"

#include <chrono>
#include <cmath>
#include <functional>
#include <gtest/gtest.h>
#include <limits>
#include <random>

namespace cliff_steps_test {

using namespace harness;
using namespace harness::cliff;

namespace {

/// A scan over x = first, first + 1, ...: its values, and each one's noise (one standard deviation).
struct Scan {
    std::vector<double> x, values, noise;
};

/// `shape` over x = first .. first + n - 1, with Gaussian noise of `relative_noise` of each value
/// (0: none, which makes an exact series).
Scan scan(std::size_t n, const std::function<double(double)>& shape, double relative_noise, std::mt19937& rng,
          double first = 1.0)
{
    std::normal_distribution<double> gauss(0.0, 1.0);
    Scan s;
    for (std::size_t i = 0; i < n; ++i) {
        const double x = first + static_cast<double>(i);
        const double v = shape(x);
        s.x.push_back(x);
        s.noise.push_back(v * relative_noise);
        s.values.push_back(v * (1.0 + relative_noise * gauss(rng)));
    }
    return s;
}

std::vector<Cliff> steps_of(const Scan& s, const StepOptions& options = {})
{
    return find_steps(s.x, s.values, s.noise, options);
}

std::string describe(const std::vector<Cliff>& cliffs)
{
    std::string out;
    for (const auto& c : cliffs)
        out += "\n  " + std::to_string(c.x_before) + " -> " + std::to_string(c.x_after) + ": " +
               std::to_string(c.level_before) + " -> " + std::to_string(c.level_after) + " depth " +
               std::to_string(c.depth) + " significance " + std::to_string(c.significance);
    return out;
}

/// Time of `blocks` blocks on a GPU of `sms` SMs running one block each: a launch's fixed cost plus
/// one wave's time per wave.
double wave_time(double blocks, double sms)
{
    return 4.0 + 10.0 * std::ceil(blocks / sms);
}

} // namespace

TEST(CliffSteps, StepsOfSeveralDepthsAreFoundWhereTheyAre)
{
    struct Case {
        double depth, noise;
    };
    // Each step at least ten noises deep, so that finding it is not a matter of luck.
    const Case cases[] = {{0.03, 0.002},  {-0.03, 0.002}, {0.05, 0.004}, {-0.05, 0.004}, {0.10, 0.008},
                          {-0.10, 0.008}, {0.50, 0.02},   {-0.50, 0.02}, {2.0, 0.05}};
    StepOptions options;
    options.min_depth = 0.02;
    std::mt19937 rng(11);
    for (const auto& c : cases)
        for (const double slope : {0.0, 0.05}) {
            const double edge = 301; // the first point at the new level
            const auto s = scan(
                600, [&](double x) { return (100.0 + slope * x) * (x >= edge ? 1.0 + c.depth : 1.0); }, c.noise, rng);
            const auto found = steps_of(s, options);
            ASSERT_EQ(found.size(), 1u) << "depth " << c.depth << " slope " << slope << describe(found);
            EXPECT_NEAR(found[0].x_before, edge - 1, 1.0);
            EXPECT_EQ(found[0].x_after, found[0].x_before + 1);
            // Within five noises, as a ratio of levels (a step of 200 % triples the level).
            EXPECT_NEAR(std::log1p(found[0].depth), std::log1p(c.depth), 5 * c.noise) << "slope " << slope;
            EXPECT_GT(found[0].significance, 6.0);
            EXPECT_EQ(found[0].cause, CliffCause::unexplained);
        }
}

TEST(CliffSteps, AStepWithoutNoiseIsPlacedExactlyAndMeasuredExactly)
{
    std::mt19937 rng(1);
    auto s = scan(
        200, [](double x) { return x < 120 ? 50.0 : 55.0; }, 0.0, rng);
    std::fill(s.noise.begin(), s.noise.end(), 0.05); // declared noise on values without any
    const auto found = steps_of(s);
    ASSERT_EQ(found.size(), 1u) << describe(found);
    EXPECT_EQ(found[0].x_before, 119);
    EXPECT_EQ(found[0].x_after, 120);
    EXPECT_DOUBLE_EQ(found[0].level_before, 50.0);
    EXPECT_DOUBLE_EQ(found[0].level_after, 55.0);
    EXPECT_NEAR(found[0].depth, 0.10, 1e-12);
    EXPECT_NEAR(found[0].significance, 100.0, 1e-6); // a step of 5 over a noise of 0.05
}

TEST(CliffSteps, ShallowStepsCountFromMinDepth)
{
    std::mt19937 rng(5);
    const auto s = scan(
        400, [](double x) { return x < 200 ? 100.0 : 104.0; }, 0.002, rng);
    EXPECT_TRUE(steps_of(s).empty()) << "4 % is under the default 5 %";
    StepOptions options;
    options.min_depth = 0.03;
    EXPECT_EQ(steps_of(s, options).size(), 1u);
}

TEST(CliffSteps, StaircaseOfWavesHasOneStepAtEachWaveBoundary)
{
    for (const double sms : {132.0, 108.0, 80.0, 46.0}) {
        std::mt19937 rng(static_cast<unsigned>(sms));
        // Time against the number of blocks over nine and a half waves, with a slight slope (more
        // blocks, more work per launch); the last boundary is still a step of 10 %.
        const auto n = static_cast<std::size_t>(9.5 * sms);
        const auto s = scan(
            n, [&](double blocks) { return wave_time(blocks, sms) + 0.002 * blocks; }, 0.01, rng);
        const auto found = steps_of(s);
        const std::size_t edges = 9;
        ASSERT_EQ(found.size(), edges) << sms << " SMs" << describe(found);
        for (std::size_t k = 0; k < edges; ++k) {
            EXPECT_NEAR(found[k].x_before, sms * static_cast<double>(k + 1), 1.0) << sms << " SMs, wave " << k;
            EXPECT_GT(found[k].depth, 0.0);
        }
    }
}

TEST(CliffSteps, SawtoothOfTimePerBlockHasOneStepAtEachWaveBoundary)
{
    // Time per unit of work falls within a wave (1/x from the first block) and jumps at each
    // boundary, by less and less: 100 %, 49 %, 33 % ... of the level before.
    const double sms = 132;
    std::mt19937 rng(3);
    const auto s = scan(
        1200, [&](double blocks) { return wave_time(blocks, sms) / blocks; }, 0.01, rng);
    const auto found = steps_of(s);
    ASSERT_EQ(found.size(), 9u) << describe(found);
    for (std::size_t k = 0; k < found.size(); ++k) {
        const double boundary = sms * static_cast<double>(k + 1);
        EXPECT_NEAR(found[k].x_before, boundary, 1.0);
        // Both levels are taken at the same x, between the two points: the ratio of the times.
        const double depth = wave_time(boundary + 1, sms) / wave_time(boundary, sms) - 1;
        EXPECT_NEAR(std::log1p(found[k].depth), std::log1p(depth), 0.05) << "wave " << k;
    }

    // As throughput (higher is better) the same boundaries are drops, and worse_only keeps them.
    Scan throughput = s;
    for (std::size_t i = 0; i < s.values.size(); ++i) {
        throughput.values[i] = 1.0 / s.values[i];
        throughput.noise[i] = throughput.values[i] * 0.01;
    }
    StepOptions worse;
    worse.worse_only = true;
    worse.higher_is_better = true;
    const auto drops = steps_of(throughput, worse);
    ASSERT_EQ(drops.size(), 9u) << describe(drops);
    for (const auto& d : drops) EXPECT_LT(d.depth, 0.0);
    worse.higher_is_better = false;
    EXPECT_TRUE(steps_of(throughput, worse).empty()) << "no rise in throughput at a wave boundary";
}

TEST(CliffSteps, SawtoothOverAProblemSizeWithTilesAndWaves)
{
    // Time per element of N elements in tiles of 8, on 46 SMs: a wave boundary every 368 elements.
    std::mt19937 rng(8);
    const auto s = scan(
        2000,
        [](double n) {
            const double tiles = std::ceil(n / 8);
            return (2.0 + 10.0 * std::ceil(tiles / 46)) / n;
        },
        0.005, rng);
    const auto found = steps_of(s);
    ASSERT_EQ(found.size(), 5u) << describe(found);
    for (std::size_t k = 0; k < found.size(); ++k) EXPECT_NEAR(found[k].x_before, 368.0 * (k + 1), 1.0);
}

TEST(CliffSteps, SmoothShapesAndNoiseHaveNoSteps)
{
    const std::vector<std::pair<const char*, std::function<double(double)>>> shapes = {
        {"flat", [](double) { return 100.0; }},
        {"ramp", [](double x) { return 10.0 + 0.2 * x; }},
        {"ramp through the origin", [](double x) { return 0.5 * x; }},
        {"1/x", [](double x) { return 1000.0 / x; }},
        {"1/x with a floor", [](double x) { return 5.0 + 200.0 / x; }},
        {"sqrt", [](double x) { return std::sqrt(x); }},
        {"sqrt with an offset", [](double x) { return 20.0 + 3.0 * std::sqrt(x); }},
        {"x squared", [](double x) { return 100.0 + x * x; }},
        {"log", [](double x) { return 1.0 + std::log(x); }},
        {"exponential decay", [](double x) { return 10.0 + 90.0 * std::exp(-x / 150.0); }},
        {"knee", [](double x) { return x < 300 ? 50.0 : 50.0 + 0.3 * (x - 300); }},
        {"sine", [](double x) { return 100.0 + 20.0 * std::sin(x / 60.0); }},
    };
    std::mt19937 rng(2026);
    for (const auto& [name, shape] : shapes)
        for (const double noise : {0.0, 0.005, 0.02, 0.05})
            for (const double first : {1.0, 100.0}) {
                auto s = scan(1000, shape, noise, rng, first);
                if (noise == 0.0) std::fill(s.noise.begin(), s.noise.end(), 1e-6 * s.values[0]);
                EXPECT_TRUE(steps_of(s).empty())
                    << name << ", noise " << noise << ", from " << first << describe(steps_of(s));
            }
}

TEST(CliffSteps, OutliersAreNoSteps)
{
    std::mt19937 rng(4);
    auto s = scan(
        500, [](double) { return 100.0; }, 0.01, rng);
    s.values[100] *= 3.0; // one point, three times as slow
    s.values[250] *= 0.5;
    s.values[400] = s.values[401] = 130.0; // two in a row
    EXPECT_TRUE(steps_of(s).empty()) << describe(steps_of(s));
}

TEST(CliffSteps, ExactSeriesStepsAtEveryChangeWhateverTheWindow)
{
    // Resident blocks per SM as the shared memory per block grows with the parameter: 228 KiB per
    // SM, 1 KiB reserved per block, 1.5 KiB of shared memory per unit of x.
    std::vector<double> x, blocks;
    for (int i = 1; i <= 200; ++i) {
        x.push_back(i);
        blocks.push_back(std::min(32.0, std::floor(228.0 / (1.0 + 1.5 * i))));
    }
    std::vector<std::pair<double, double>> changes;
    for (std::size_t i = 1; i < x.size(); ++i)
        if (blocks[i] != blocks[i - 1]) changes.emplace_back(x[i - 1], x[i]);
    ASSERT_GE(changes.size(), 15u);

    StepOptions options;
    options.min_depth = 0.0;
    options.higher_is_better = true;
    for (const std::size_t window : {3u, 12u, 64u}) {
        options.window = window;
        for (const auto& noise : {std::vector<double>{}, std::vector<double>(x.size(), 0.0)}) {
            const auto found = find_steps(x, blocks, noise, options);
            ASSERT_EQ(found.size(), changes.size()) << "window " << window;
            for (std::size_t k = 0; k < found.size(); ++k) {
                EXPECT_EQ(found[k].x_before, changes[k].first);
                EXPECT_EQ(found[k].x_after, changes[k].second);
                EXPECT_LT(found[k].depth, 0.0);
                EXPECT_EQ(found[k].significance, std::numeric_limits<double>::infinity());
            }
        }
    }
    // At the default depth only the changes of 5 % or more count; worse_only with higher is better
    // keeps every drop.
    StepOptions worse;
    worse.worse_only = true;
    worse.higher_is_better = true;
    const auto deep = find_steps(x, blocks, {}, worse);
    ASSERT_FALSE(deep.empty());
    for (const auto& c : deep) EXPECT_LE(c.depth, -0.05);
    // Rounding is no change.
    EXPECT_TRUE(find_steps({1, 2, 3}, {0.1 + 0.2, 0.3, 0.30000000000000004}, {}).empty());
    EXPECT_EQ(find_steps({1, 2, 3}, {8, 8, 7}, {}).size(), 1u);
}

TEST(CliffSteps, ARiseOverSeveralPointsIsOneStepFromTheLastOldToTheFirstNewPoint)
{
    for (const std::vector<double>& rise :
         {std::vector<double>{103.0, 107.0}, std::vector<double>{102.0, 105.0, 108.0}, std::vector<double>{105.0}}) {
        std::mt19937 rng(static_cast<unsigned>(rise.size()));
        std::normal_distribution<double> gauss(0.0, 0.1);
        Scan s;
        for (int i = 0; i < 60; ++i) s.values.push_back(100.0);
        for (const double v : rise) s.values.push_back(v);
        for (int i = 0; i < 60; ++i) s.values.push_back(110.0);
        for (std::size_t i = 0; i < s.values.size(); ++i) {
            s.x.push_back(static_cast<double>(i));
            s.values[i] += gauss(rng);
            s.noise.push_back(0.1);
        }
        const auto found = steps_of(s);
        ASSERT_EQ(found.size(), 1u) << rise.size() << " points in the rise" << describe(found);
        EXPECT_EQ(found[0].x_before, 59);
        EXPECT_EQ(found[0].x_after, 60 + static_cast<double>(rise.size()));
        EXPECT_NEAR(found[0].depth, 0.10, 0.01);
    }
}

TEST(CliffSteps, StepsCloserThanTheWindowAreEachFound)
{
    std::mt19937 rng(6);
    // A staircase with treads of 5 points, under a window of 12.
    const auto s = scan(
        60, [](double x) { return x < 20   ? 100.0
                                  : x < 25 ? 120.0
                                  : x < 30 ? 150.0
                                           : 180.0; }, 0.005, rng);
    const auto found = steps_of(s);
    ASSERT_EQ(found.size(), 3u) << describe(found);
    EXPECT_NEAR(found[0].x_before, 19, 1.0);
    EXPECT_NEAR(found[1].x_before, 24, 1.0);
    EXPECT_NEAR(found[2].x_before, 29, 1.0);
}

TEST(CliffSteps, NoiseFromTheSeriesItselfWhereTheGivenNoiseIsTooSmall)
{
    // Points that scatter by 2 % while each claims 0.1 %: the scatter, not the claim, is the noise.
    std::mt19937 rng(9);
    auto s = scan(
        1000, [](double) { return 100.0; }, 0.02, rng);
    for (auto& n : s.noise) n = 0.1;
    EXPECT_TRUE(steps_of(s).empty()) << describe(steps_of(s));
}

TEST(CliffSteps, ShortAndDegenerateSeries)
{
    EXPECT_TRUE(find_steps({}, {}, {}).empty());
    EXPECT_TRUE(find_steps({1}, {5}, {0.1}).empty());
    EXPECT_TRUE(find_steps({1, 2}, {5, 5}, {}).empty());
    EXPECT_EQ(find_steps({1, 2}, {5, 6}, {}).size(), 1u); // exact: two points suffice
    // Noisy: a side needs three points, so a step in six points is found, and none in four.
    const auto six = find_steps({1, 2, 3, 4, 5, 6}, {10, 10, 10, 20, 20, 20}, std::vector<double>(6, 0.1));
    ASSERT_EQ(six.size(), 1u);
    EXPECT_EQ(six[0].x_before, 3);
    EXPECT_EQ(six[0].x_after, 4);
    EXPECT_TRUE(find_steps({1, 2, 3, 4}, {10, 10, 20, 20}, std::vector<double>(4, 0.1)).empty());
    // Fewer points than a window.
    std::mt19937 rng(12);
    const auto s = scan(
        9, [](double x) { return x <= 4 ? 10.0 : 13.0; }, 0.005, rng);
    ASSERT_EQ(steps_of(s).size(), 1u);
    EXPECT_EQ(steps_of(s)[0].x_before, 4);
}

TEST(CliffSteps, PointsThatDidNotRunAreLeftOut)
{
    std::mt19937 rng(13);
    auto s = scan(
        200, [](double x) { return x <= 100 ? 10.0 : 12.0; }, 0.005, rng);
    const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
    s.values[20] = nan;
    s.values[150] = inf;
    s.values[160] = -inf;
    s.noise[20] = nan; // a point without a figure has no noise either
    auto found = steps_of(s);
    ASSERT_EQ(found.size(), 1u) << describe(found);
    EXPECT_NEAR(found[0].x_before, 100, 1.0);
    // The first point after the edge did not run: the step spans the hole.
    s.values[100] = nan;
    found = steps_of(s);
    ASSERT_EQ(found.size(), 1u) << describe(found);
    EXPECT_EQ(found[0].x_before, 100);
    EXPECT_EQ(found[0].x_after, 102);
    // Nothing ran.
    EXPECT_TRUE(find_steps({1, 2, 3}, {nan, nan, nan}, {}).empty());
}

TEST(CliffSteps, BadInputIsRefused)
{
    const auto kind_of = [](const std::function<void()>& f) {
        try {
            f();
        } catch (const Error& e) {
            return std::optional<ErrorKind>(e.kind());
        }
        return std::optional<ErrorKind>();
    };
    EXPECT_EQ(kind_of([] { find_steps({1, 3, 2}, {1, 1, 1}, {}); }), ErrorKind::bad_input);
    EXPECT_EQ(kind_of([] { find_steps({1, 2, 2}, {1, 1, 1}, {}); }), ErrorKind::bad_input);
    EXPECT_EQ(kind_of([] {
                  find_steps({1, std::numeric_limits<double>::quiet_NaN()}, {1, 1}, {});
              }),
              ErrorKind::bad_input);
    EXPECT_EQ(kind_of([] { find_steps({1, 2, 3}, {1, 1}, {}); }), ErrorKind::internal);
    EXPECT_EQ(kind_of([] { find_steps({1, 2, 3}, {1, 1, 1}, {0.1, 0.1}); }), ErrorKind::internal);
    EXPECT_EQ(kind_of([] { find_steps({1, 2, 3}, {1, 1, 1}, {0.1, -0.1, 0.1}); }), ErrorKind::internal);
    try {
        find_steps({1, 3, 2}, {1, 1, 1}, {});
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("ascend"), std::string::npos) << e.what();
    }
}

// The defaults' calibration: 200 clean scans of smooth shapes at 0.5..5 % noise, 512..4,096
// points each, give no step at all.
TEST(CliffSteps, CleanScansGiveNoStepAtTheDefaults)
{
    std::mt19937 rng(20261126);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::uniform_int_distribution<std::size_t> length(512, 4096);
    std::size_t false_steps = 0;
    std::string where;
    for (int k = 0; k < 200; ++k) {
        const std::size_t n = length(rng);
        const double size = static_cast<double>(n), noise = 0.005 * std::pow(10.0, unit(rng));
        const double a = 0.5 + unit(rng), b = 0.5 + unit(rng);
        std::function<double(double)> shape;
        switch (k % 5) {
        case 0: shape = [&](double) { return 100.0 * a; }; break;
        case 1: shape = [&](double x) { return 50.0 * a + 100.0 * b * x / size; }; break;
        case 2: shape = [&](double x) { return 20.0 * a + 40.0 * b * size / (8.0 * x + size); }; break;
        case 3: shape = [&](double x) { return 20.0 * a + 100.0 * b * std::sqrt(x / size); }; break;
        default: shape = [&](double x) { return 80.0 * a + (x > size / 3 ? 60.0 * b * (x - size / 3) / size : 0.0); };
        }
        const auto found = steps_of(scan(n, shape, noise, rng));
        false_steps += found.size();
        if (!found.empty()) where += "\n scan " + std::to_string(k) + describe(found);
    }
    EXPECT_EQ(false_steps, 0u) << where;
}

TEST(CliffSteps, FourThousandPointsTakeMilliseconds)
{
    std::mt19937 rng(14);
    const auto s = scan(
        4096, [](double blocks) { return wave_time(blocks, 132) / blocks; }, 0.01, rng);
    const auto start = std::chrono::steady_clock::now();
    const auto found = steps_of(s);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    // The boundaries up to about the 15th wave are 5 % deep or more (the k-th is about 1/k).
    EXPECT_GE(found.size(), 12u) << describe(found);
    for (const auto& c : found) EXPECT_NEAR(std::remainder(c.x_before, 132.0), 0.0, 1.0) << describe(found);
    // A bound against a slip into quadratic cost, loose enough for sanitizers and a busy machine;
    // cliff_bench prints the time itself.
    EXPECT_LT(ms, 250.0);
}

} // namespace cliff_steps_test
