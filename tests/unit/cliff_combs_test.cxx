// The comb finder on synthetic alignment scans (seeded), shaped as an H100 measured the rows of
// suites/alignment_scan.yaml: ~190 us/GB while rows are padded to an aligned capacity, and past it
// a comb of four levels (W % 8 == 0 at 186, W % 8 == 4 at 211, W % 4 == 2 at 227, odd W at 236).
// Padded to 448 floats, the whole series hides the step; padded to 512, it finds it, and the comb
// finder must leave that cliff as it was.

#include "harness/cliff/combs.hxx"

#include <algorithm>
#include <cmath>
#include <functional>
#include <gtest/gtest.h>
#include <random>

namespace cliff_combs_test {

using namespace harness;
using namespace harness::cliff;

namespace {

constexpr int h100_sms = 132;

/// A scan along W with each point's launch.
struct AlignmentScan {
    std::vector<double> x, values, noise;
    std::vector<LaunchShape> shapes;
};

/// us/GB of rows of W floats padded to `capacity` floats where they fit and packed past it, as the
/// H100 measured them: packed rows by how far their pitch of W x 4 bytes is from a sector.
double level_of(std::int64_t w, std::int64_t capacity)
{
    if (w <= capacity) return 190.0;
    if (w % 8 == 0) return 186.0;
    if (w % 4 == 0) return 211.0;
    if (w % 2 == 0) return 227.0;
    return 236.0;
}

/// W from `first` to `last`, rows padded to `capacity` floats and packed past it (capacity 0: packed
/// all along), with Gaussian scatter of `relative_noise`; `comb` false keeps every point at the
/// padded level (a pitch without a comb).
AlignmentScan alignment_scan(std::int64_t capacity, double relative_noise, std::mt19937& rng, bool comb = true,
                             std::int64_t first = 384, std::int64_t last = 640)
{
    std::normal_distribution<double> gauss(0.0, 1.0);
    AlignmentScan s;
    for (std::int64_t w = first; w <= last; ++w) {
        const std::int64_t pitch = std::max(w, capacity);
        const double level = comb ? level_of(w, capacity) : 190.0;
        s.x.push_back(static_cast<double>(w));
        s.values.push_back(level * (1.0 + relative_noise * gauss(rng)));
        s.noise.push_back(level * relative_noise);
        LaunchShape shape;
        shape.x = static_cast<double>(w);
        shape.grid = {4096, 8, 1};
        shape.block = {256, 1, 1};
        shape.blocks_per_sm = 8;
        shape.limiter = "warps";
        shape.pitch_bytes = static_cast<std::uint64_t>(pitch * 4);
        s.shapes.push_back(shape);
    }
    return s;
}

StepOptions gpu_options()
{
    StepOptions options;
    options.worse_only = true; // as gpu_cliff_map reads a map of time
    return options;
}

/// The cliffs of a GPU map: the whole series' steps, explained, and the comb's.
std::vector<Cliff> map_cliffs(const AlignmentScan& s)
{
    auto cliffs = find_steps(s.x, s.values, s.noise, gpu_options());
    for (auto& c : cliffs) explain_cliff(c, s.shapes, GpuShape{h100_sms}, "W");
    add_comb_steps(cliffs, s.x, s.values, s.noise, s.shapes, GpuShape{h100_sms}, "W", gpu_options());
    return cliffs;
}

std::string describe(const std::vector<Cliff>& cliffs)
{
    std::string out;
    for (const auto& c : cliffs)
        out += "\n  " + std::to_string(c.x_before) + " -> " + std::to_string(c.x_after) + ": depth " +
               std::to_string(c.depth) + " significance " + std::to_string(c.significance) + ": " + c.explanation;
    return out;
}

std::vector<LaunchShape> pitched(const std::vector<std::int64_t>& x,
                                 const std::function<std::int64_t(std::int64_t)>& pitch)
{
    std::vector<LaunchShape> out;
    for (const auto v : x) {
        LaunchShape shape;
        shape.x = static_cast<double>(v);
        shape.pitch_bytes = static_cast<std::uint64_t>(pitch(v));
        out.push_back(shape);
    }
    return out;
}

std::vector<std::int64_t> axis(std::int64_t first, std::int64_t last, std::int64_t step = 1)
{
    std::vector<std::int64_t> out;
    for (std::int64_t v = first; v <= last; v += step) out.push_back(v);
    return out;
}

} // namespace

TEST(CliffCombs, PeriodFollowsThePitchsGrowthPerPoint)
{
    const auto w = axis(384, 640);
    EXPECT_EQ(comb_period(pitched(w, [](auto v) { return std::max<std::int64_t>(v, 512) * 4; })), 8u);
    EXPECT_EQ(comb_period(pitched(w, [](auto v) { return v * 2; })), 16u);
    EXPECT_EQ(comb_period(pitched(w, [](auto v) { return v * 8; })), 4u);
    EXPECT_EQ(comb_period(pitched(w, [](auto v) { return v * 32; })), 1u) << "whole sectors: no comb";
    EXPECT_EQ(comb_period(pitched(w, [](auto) { return 2048; })), 1u) << "a pitch that does not grow";
    EXPECT_EQ(comb_period(pitched(axis(0, 640, 2), [](auto v) { return v * 4; })), 4u) << "8 bytes per axis step";
    // A point left out does not double the pitch's step.
    auto gap = pitched(w, [](auto v) { return v * 4; });
    gap.erase(gap.begin() + 10);
    EXPECT_EQ(comb_period(gap), 8u);
    std::vector<LaunchShape> no_pitch(5);
    for (std::size_t i = 0; i < no_pitch.size(); ++i) no_pitch[i].x = static_cast<double>(i);
    EXPECT_EQ(comb_period(no_pitch), 1u);
    EXPECT_EQ(comb_period({}), 1u);
}

TEST(CliffCombs, ExactCombStepMergesItsResidues)
{
    std::mt19937 rng(1);
    const AlignmentScan s = alignment_scan(448, 0.0, rng);
    const AlignmentScan exact{s.x, s.values, {}, s.shapes};
    const auto steps = find_comb_steps(exact.x, exact.values, exact.noise, 8, gpu_options());
    ASSERT_EQ(steps.size(), 1u);
    // Seven classes step, each between its points 8 apart (441 -> 449 ... 447 -> 455); W % 8 == 0
    // falls from 190 to 186 and is no step up.
    EXPECT_EQ(steps[0].residues, 7u);
    EXPECT_EQ(steps[0].period, 8u);
    EXPECT_EQ(steps[0].cliff.x_before, 447);
    EXPECT_EQ(steps[0].cliff.x_after, 449);
    EXPECT_DOUBLE_EQ(steps[0].cliff.level_before, 190.0);
    EXPECT_DOUBLE_EQ(steps[0].cliff.level_after, 236.0) << "the deepest class: odd W";
    EXPECT_DOUBLE_EQ(steps[0].cliff.depth, 236.0 / 190.0 - 1.0);
    EXPECT_TRUE(find_comb_steps(exact.x, exact.values, exact.noise, 1).empty()) << "a period of 1 is no comb";
}

TEST(CliffCombs, RowsPaddedTo448StepAt448InEverySeed)
{
    // The planted change: the whole series alone misses the step in some seeds, as on the H100.
    std::size_t missed_by_whole_series = 0;
    for (unsigned seed = 0; seed < 20; ++seed) {
        std::mt19937 rng(seed);
        const AlignmentScan s = alignment_scan(448, 0.015, rng);
        missed_by_whole_series += find_steps(s.x, s.values, s.noise, gpu_options()).empty();
        const auto cliffs = map_cliffs(s);
        ASSERT_EQ(cliffs.size(), 1u) << "seed " << seed << describe(cliffs);
        const Cliff& c = cliffs[0];
        EXPECT_EQ(c.x_after, 449) << "seed " << seed << describe(cliffs);
        EXPECT_TRUE(c.x_before == 447 || c.x_before == 448) << "seed " << seed << describe(cliffs);
        EXPECT_EQ(c.cause, CliffCause::alignment) << c.explanation;
        EXPECT_NE(c.explanation.find("pitch 1792 -> 1796 bytes, no longer a multiple of 32-byte sectors"),
                  std::string::npos)
            << c.explanation;
        EXPECT_GT(c.depth, 0.15) << "seed " << seed << describe(cliffs);
        EXPECT_LT(c.depth, 0.35) << "seed " << seed << describe(cliffs);
    }
    EXPECT_GE(missed_by_whole_series, 5u) << "the synthetic scan no longer hides the step from the whole series";
}

TEST(CliffCombs, CombStepSaysHowManyResiduesStepped)
{
    std::mt19937 rng(2);
    const AlignmentScan s = alignment_scan(448, 0.0, rng);
    std::vector<Cliff> cliffs; // as if the whole series had found none
    add_comb_steps(cliffs, s.x, s.values, {}, s.shapes, GpuShape{h100_sms}, "W", gpu_options());
    ASSERT_EQ(cliffs.size(), 1u) << describe(cliffs);
    EXPECT_EQ(cliffs[0].cause, CliffCause::alignment);
    EXPECT_EQ(cliffs[0].explanation,
              "alignment: pitch 1792 -> 1796 bytes, no longer a multiple of 32-byte sectors; a comb along W: the "
              "step shows in 7 of its 8 residues (the pitch's alignment repeats every 8 points)");
}

TEST(CliffCombs, RowsPaddedTo512KeepTheWholeSeriesCliff)
{
    // The suite as committed: where the whole series finds the step, the comb finder adds nothing
    // and the cliff is exactly find_steps's, so recorded baselines stay valid.
    std::size_t found_by_whole_series = 0;
    for (unsigned seed = 0; seed < 20; ++seed) {
        std::mt19937 rng(100 + seed);
        const AlignmentScan s = alignment_scan(512, 0.01, rng);
        auto whole = find_steps(s.x, s.values, s.noise, gpu_options());
        for (auto& c : whole) explain_cliff(c, s.shapes, GpuShape{h100_sms}, "W");
        const auto cliffs = map_cliffs(s);
        ASSERT_EQ(cliffs.size(), 1u) << "seed " << seed << describe(cliffs);
        EXPECT_EQ(cliffs[0].x_after, 513) << describe(cliffs);
        EXPECT_EQ(cliffs[0].cause, CliffCause::alignment) << cliffs[0].explanation;
        if (whole.empty()) continue;
        ++found_by_whole_series;
        ASSERT_EQ(whole.size(), 1u) << describe(whole);
        EXPECT_EQ(cliffs[0].x_before, whole[0].x_before);
        EXPECT_EQ(cliffs[0].x_after, whole[0].x_after);
        EXPECT_EQ(cliffs[0].level_before, whole[0].level_before);
        EXPECT_EQ(cliffs[0].level_after, whole[0].level_after);
        EXPECT_EQ(cliffs[0].depth, whole[0].depth);
        EXPECT_EQ(cliffs[0].significance, whole[0].significance);
        EXPECT_EQ(cliffs[0].explanation, whole[0].explanation) << "no comb note on the whole series' cliff";
        EXPECT_EQ(cliffs[0].explanation,
                  "alignment: pitch 2048 -> 2052 bytes, no longer a multiple of 32-byte sectors");
    }
    EXPECT_GE(found_by_whole_series, 15u);
}

TEST(CliffCombs, CombsAllAlongAndFlatScansHaveNoSteps)
{
    for (unsigned seed = 0; seed < 200; ++seed) {
        std::mt19937 rng(1000 + seed);
        const double noise = 0.005 + 0.0002 * seed; // 0.5 .. 4.5 %
        const AlignmentScan comb = alignment_scan(0, noise, rng);
        EXPECT_EQ(comb_period(comb.shapes), 8u);
        EXPECT_TRUE(map_cliffs(comb).empty()) << "comb, seed " << seed << describe(map_cliffs(comb));
        const AlignmentScan flat = alignment_scan(0, noise, rng, false);
        EXPECT_TRUE(map_cliffs(flat).empty()) << "flat, seed " << seed << describe(map_cliffs(flat));
    }
}

TEST(CliffCombs, OnlyAnAxisWithAGrowingPitchIsSplit)
{
    std::mt19937 rng(3);
    AlignmentScan s = alignment_scan(448, 0.015, rng);
    ASSERT_TRUE(find_steps(s.x, s.values, s.noise, gpu_options()).empty()) << "seed 3 hides the step";
    for (auto& shape : s.shapes) shape.pitch_bytes.reset();
    std::vector<Cliff> cliffs;
    add_comb_steps(cliffs, s.x, s.values, s.noise, s.shapes, GpuShape{h100_sms}, "W", gpu_options());
    EXPECT_TRUE(cliffs.empty()) << describe(cliffs);
}

TEST(CliffCombs, PointsLeftOutKeepTheirNeighboursResidues)
{
    std::mt19937 rng(4);
    AlignmentScan s = alignment_scan(448, 0.0, rng);
    // Three points that did not run: gpu_cliff_map leaves them out of x, values and shapes alike.
    for (const double gone : {420.0, 500.0, 501.0}) {
        const auto at = static_cast<std::ptrdiff_t>(std::find(s.x.begin(), s.x.end(), gone) - s.x.begin());
        s.x.erase(s.x.begin() + at);
        s.values.erase(s.values.begin() + at);
        s.shapes.erase(s.shapes.begin() + at);
    }
    EXPECT_EQ(comb_period(s.shapes), 8u);
    const auto steps = find_comb_steps(s.x, s.values, {}, 8, gpu_options());
    ASSERT_EQ(steps.size(), 1u);
    EXPECT_EQ(steps[0].residues, 7u);
    EXPECT_EQ(steps[0].cliff.x_after, 449);
}

TEST(CliffCombs, AStepInOneResidueAloneIsNotACliff)
{
    // A clean scan of the committed suite on an H100 showed one residue 5.4 % slower past W = 608:
    // an alignment change steps in most residues, so one residue alone is its noise.
    std::mt19937 rng(3);
    AlignmentScan s = alignment_scan(512, 0.0, rng);
    for (std::size_t i = 0; i < s.x.size(); ++i)
        if (s.x[i] > 608 && static_cast<std::int64_t>(s.x[i]) % 8 == 1) s.values[i] *= 1.2;
    std::vector<Cliff> cliffs; // as if the whole series had found none
    add_comb_steps(cliffs, s.x, s.values, {}, s.shapes, GpuShape{h100_sms}, "W", gpu_options());
    for (const auto& c : cliffs) EXPECT_LT(c.x_after, 600) << describe(cliffs);

    // The same step in four residues of eight is a cliff.
    for (std::size_t i = 0; i < s.x.size(); ++i)
        if (s.x[i] > 608 && static_cast<std::int64_t>(s.x[i]) % 8 >= 2 && static_cast<std::int64_t>(s.x[i]) % 8 <= 4)
            s.values[i] *= 1.2;
    cliffs.clear();
    add_comb_steps(cliffs, s.x, s.values, {}, s.shapes, GpuShape{h100_sms}, "W", gpu_options());
    EXPECT_TRUE(std::any_of(cliffs.begin(), cliffs.end(), [](const Cliff& c) { return c.x_after > 600; }))
        << describe(cliffs);
}

} // namespace cliff_combs_test
