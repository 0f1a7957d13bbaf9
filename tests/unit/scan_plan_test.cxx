// The GPU scan without a GPU: which points stay full cases, and the cliff maps built from a
// measured series and each point's launch (synthetic here, as a scan on an H100 would give them).

#include "harness/pipeline/gpu_scan.hxx"
#include "harness/run/scan_runner.hxx"
#include "harness/suite/sweep.hxx"
#include "test_paths.hxx"

#include <cmath>
#include <gtest/gtest.h>
#include <set>

using namespace harness;

namespace {

constexpr int h100_sms = 132;

suite::Suite two_axis_suite()
{
    return suite::parse_suite(R"(
suite: scan_plan
params:
  K: [1, 2]
  N: {scan: [1, 10]}
reference: a
buffers:
  out: {type: f32, count: N, init: zeros, role: out}
variants:
  a: {source: ../kernels/memory/copy_offset.cu, entry: copy_offset, block: [32], grid: [N], args: [out, out, {i32: N}, {i32: 0}]}
  b: {source: ../kernels/memory/copy_offset.cu, entry: copy_offset, block: [32], grid: [N], args: [out, out, {i32: N}, {i32: K}]}
)",
                              repo_root() / "suites" / "scan_plan.yaml");
}

/// A series as a scan measures it: `time_us(x)` at each point, with `shape(x)` its launch.
pipeline::ScanSeries synthetic_series(const suite::Suite& s, const std::string& variant,
                                      const std::function<double(std::int64_t)>& time_us,
                                      const std::function<cliff::LaunchShape(std::int64_t)>& shape)
{
    const std::string axis = s.scanned_param()->name;
    pipeline::ScanSeries series;
    series.variant = variant;
    for (const auto& point : suite::sweep_points(s)) {
        series.others = suite::others_text(s, point, axis);
        series.points.push_back(point);
        run::ScanPoint p;
        p.x = point.at(axis);
        p.ok = true;
        p.time_us = time_us(p.x);
        p.noise_us = 0.002 * p.time_us;
        p.runs_per_batch = 20;
        p.shape = shape(p.x);
        p.shape.x = static_cast<double>(p.x);
        series.measured.push_back(p);
    }
    return series;
}

cliff::LaunchShape shape_of(std::uint64_t blocks_x, std::uint64_t blocks_y = 1)
{
    cliff::LaunchShape shape;
    shape.grid = {blocks_x, blocks_y, 1};
    shape.block = {256, 1, 1};
    shape.blocks_per_sm = 8;
    shape.limiter = "warps";
    shape.registers_per_thread = 16;
    return shape;
}

} // namespace

TEST(ScanPlan, OnlyTheScansEndsStayFullCases)
{
    const auto s = two_axis_suite();
    const auto all = suite::expand_cases(s);
    ASSERT_EQ(all.size(), 2u * 10u * 2u);
    const auto kept = pipeline::scan_end_cases(s, all);
    // Both variants, both values of K, N = 1 and N = 10.
    EXPECT_EQ(kept.size(), 2u * 2u * 2u);
    std::set<std::string> texts;
    for (const auto& c : kept) {
        EXPECT_TRUE(c.params.at("N") == 1 || c.params.at("N") == 10) << c.params_text;
        texts.insert(s.variants[c.variant].name + " " + c.params_text);
    }
    EXPECT_TRUE(texts.contains("a K=2 N=10"));
    EXPECT_TRUE(texts.contains("b K=1 N=1"));
}

TEST(ScanPlan, ScansOnlyWholeTimedRuns)
{
    const auto s = two_axis_suite();
    pipeline::SuiteRunOptions options;
    ShardInfo whole;
    EXPECT_TRUE(pipeline::scans_on_gpu(s, options, whole));
    ShardInfo shard;
    shard.count = 2;
    shard.indices = {1};
    EXPECT_FALSE(pipeline::scans_on_gpu(s, options, shard)) << "a shard holds only some points";
    auto verify = options;
    verify.verify_only = true;
    EXPECT_FALSE(pipeline::scans_on_gpu(s, verify, whole));
    auto rerun = options;
    rerun.only_cases = {{"a", "K=1 N=3"}};
    EXPECT_FALSE(pipeline::scans_on_gpu(s, rerun, whole)) << "a rerun of chosen cases keeps them";
    auto flat = suite::load_suite(repo_root() / "suites" / "memory_copy.yaml");
    EXPECT_FALSE(pipeline::scans_on_gpu(flat, options, whole));
}

TEST(ScanPlan, BatchSummaryIsMedianAndRobustNoise)
{
    const auto [median, noise] = run::summarize_batches({10.0, 10.2, 9.9, 50.0, 10.1}, 20);
    EXPECT_DOUBLE_EQ(median, 10.1);
    EXPECT_NEAR(noise, 1.4826 * 0.1, 1e-9) << "the outlier batch does not widen the noise";
    const auto [same, floor] = run::summarize_batches({5.0, 5.0, 5.0}, 10);
    EXPECT_DOUBLE_EQ(same, 5.0);
    EXPECT_DOUBLE_EQ(floor, run::event_resolution_us / 10) << "never below the event resolution per run";
}

TEST(ScanPlan, WavesSuiteStepsAtEachWaveOf132Sms)
{
    const auto s = suite::load_suite(repo_root() / "suites" / "waves_scan.yaml");
    // Every block lasts 10 us whatever shares its SM: the time is 10 us per wave of 132 x 8 blocks.
    const auto per_wave = static_cast<std::int64_t>(h100_sms) * 8;
    const auto series = synthetic_series(
        s, "waves", [&](std::int64_t n) { return 10.0 * static_cast<double>((n + per_wave - 1) / per_wave); },
        [](std::int64_t n) { return shape_of(static_cast<std::uint64_t>(n)); });
    const CliffMap map = pipeline::gpu_cliff_map(s, series, "sm_90", cliff::GpuShape{h100_sms});
    EXPECT_EQ(map.figure, "time");
    EXPECT_EQ(map.unit, "us");
    EXPECT_EQ(map.x.size(), series.points.size());
    EXPECT_EQ(map.noise.size(), map.x.size());
    ASSERT_EQ(map.cliffs.size(), 4u);
    const double edges[][2] = {{1056, 1072}, {2112, 2128}, {3168, 3184}, {4224, 4240}};
    for (std::size_t i = 0; i < map.cliffs.size(); ++i) {
        const Cliff& c = map.cliffs[i];
        EXPECT_EQ(c.x_before, edges[i][0]);
        EXPECT_EQ(c.x_after, edges[i][1]);
        EXPECT_NEAR(c.depth, 1.0 / static_cast<double>(i + 1), 0.02);
        EXPECT_EQ(c.cause, CliffCause::waves) << c.explanation;
    }
    EXPECT_NE(map.cliffs[0].explanation.find("1 -> 2 waves of 132 SMs x 8 blocks"), std::string::npos)
        << map.cliffs[0].explanation;
}

TEST(ScanPlan, TilesSuiteIsTimePerWorkWithTileSteps)
{
    const auto s = suite::load_suite(repo_root() / "suites" / "tiles_scan.yaml");
    // One row per SM: the time grows with the tiles per row, 16 us each.
    const auto series = synthetic_series(
        s, "tiles", [](std::int64_t n) { return 16.0 * static_cast<double>((n + 255) / 256); },
        [](std::int64_t n) { return shape_of(static_cast<std::uint64_t>((n + 255) / 256), h100_sms); });
    EXPECT_EQ(series.others, "ROWS=132");
    const CliffMap map = pipeline::gpu_cliff_map(s, series, "sm_90", cliff::GpuShape{h100_sms});
    EXPECT_EQ(map.figure, "time_per_work");
    EXPECT_EQ(map.unit, "us/GFLOP");
    ASSERT_GE(map.cliffs.size(), 3u);
    EXPECT_EQ(map.cliffs[0].x_before, 256);
    EXPECT_EQ(map.cliffs[0].x_after, 272);
    EXPECT_EQ(map.cliffs[0].cause, CliffCause::tiles) << map.cliffs[0].explanation;
    EXPECT_NE(map.cliffs[0].explanation.find("tile of 256 along N"), std::string::npos) << map.cliffs[0].explanation;
    for (const auto& c : map.cliffs) {
        if (c.x_before == 2048) {
            EXPECT_EQ(c.cause, CliffCause::waves) << "the 9th tile starts a second wave";
        }
    }
}

TEST(ScanPlan, AlignmentSuiteStepsWhereRowsArePacked)
{
    const auto s = suite::load_suite(repo_root() / "suites" / "alignment_scan.yaml");
    const auto& axis = *s.scanned_param();
    // Aligned rows copy at 1.0 us per unit of bytes, packed rows at 1.2 but for the aligned widths.
    const auto series = synthetic_series(
        s, "rows",
        [](std::int64_t w) {
            const double bytes = 2.0 * 16384 * static_cast<double>(w) * 4;
            return bytes * 1e-6 * (w > 512 && w % 8 != 0 ? 1.2 : 1.0);
        },
        [&](std::int64_t w) {
            auto shape = shape_of(16384);
            shape.pitch_bytes = static_cast<std::uint64_t>(axis.pitch->evaluate({{"W", w}, {"ROWS", 16384}}));
            return shape;
        });
    const CliffMap map = pipeline::gpu_cliff_map(s, series, "sm_90", cliff::GpuShape{h100_sms});
    EXPECT_EQ(map.unit, "us/GB");
    ASSERT_EQ(map.cliffs.size(), 1u);
    EXPECT_EQ(map.cliffs[0].x_before, 512);
    EXPECT_EQ(map.cliffs[0].x_after, 513);
    EXPECT_EQ(map.cliffs[0].cause, CliffCause::alignment) << map.cliffs[0].explanation;
}

TEST(ScanPlan, PointsThatDidNotRunAreLeftOut)
{
    const auto s = suite::load_suite(repo_root() / "suites" / "waves_scan.yaml");
    auto series = synthetic_series(
        s, "waves", [](std::int64_t) { return 10.0; },
        [](std::int64_t n) { return shape_of(static_cast<std::uint64_t>(n)); });
    series.measured[3].ok = false;
    series.measured[3].error = "waves N=64: grid[0] = 0 is out of range";
    series.measured.resize(100); // the scan stopped early
    const CliffMap map = pipeline::gpu_cliff_map(s, series, "sm_90", cliff::GpuShape{h100_sms});
    EXPECT_EQ(map.x.size(), 99u);
    EXPECT_TRUE(map.cliffs.empty());
    EXPECT_TRUE(std::none_of(map.x.begin(), map.x.end(), [](double x) { return x == 64; }));
}
