// The GPU scan without a GPU: which points stay full cases, and the cliff maps built from a
// measured series and each point's launch (synthetic here, as a scan on an H100 would give them).

#include "harness/compare/cliff_baseline.hxx"
#include "harness/compare/cliff_gate.hxx"
#include "harness/pipeline/gpu_scan.hxx"
#include "harness/run/scan_runner.hxx"
#include "harness/suite/sweep.hxx"
#include "test_paths.hxx"

#include <cmath>
#include <gtest/gtest.h>
#include <random>
#include <set>

namespace scan_plan_test {

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

/// The verdicts of the suite's `expect:` rules on `map`, without a baseline.
std::vector<MetricVerdict> expectations_on(const CliffMap& map, const suite::Suite& s)
{
    std::vector<MetricVerdict> out;
    for (const auto& v : compare::judge_cliff_map(map, s, nullptr))
        if (v.judgement.rule.starts_with("expect ")) out.push_back(v.judgement);
    return out;
}

/// us/GB of rows of W floats padded to `capacity` floats where they fit and packed past it, as an
/// H100 measured them: a comb past the capacity, by how far a pitch of W x 4 bytes is from a sector.
double rows_us_per_gb(std::int64_t w, std::int64_t capacity)
{
    if (w <= capacity) return 190.0;
    if (w % 8 == 0) return 186.0;
    if (w % 4 == 0) return 211.0;
    if (w % 2 == 0) return 227.0;
    return 236.0;
}

/// The alignment suite's map on an H100 from rows padded to `capacity` floats, with `scatter` of
/// relative noise from point to point (the batches' own noise is a tenth of it).
CliffMap alignment_map(const suite::Suite& s, std::int64_t capacity, double scatter, std::mt19937& rng)
{
    const auto& axis = *s.scanned_param();
    std::normal_distribution<double> gauss(0.0, 1.0);
    const auto series = synthetic_series(
        s, "rows",
        [&](std::int64_t w) {
            const double gb = 2.0 * 4096 * static_cast<double>(w) * 4 * 8 * 1e-9;
            return gb * rows_us_per_gb(w, capacity) * (1.0 + scatter * gauss(rng));
        },
        [&](std::int64_t w) {
            auto shape = shape_of(4096, 8);
            shape.pitch_bytes = static_cast<std::uint64_t>(axis.pitch->evaluate({{"W", w}, {"ROWS", 4096}}));
            return shape;
        });
    return pipeline::gpu_cliff_map(s, series, "sm_90", cliff::GpuShape{h100_sms});
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
    run::RunSettings options;
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
    // The suite pins them on the measured map: at least four.
    const auto rules = expectations_on(map, s);
    ASSERT_EQ(rules.size(), 1u);
    EXPECT_EQ(rules[0].rule, "expect cliff_count >= 4 on measured maps");
    EXPECT_EQ(rules[0].verdict, Verdict::passed) << rules[0].message;
    auto three = map;
    three.cliffs.pop_back();
    EXPECT_EQ(expectations_on(three, s)[0].verdict, Verdict::expect_failed);
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
    // A cliff at each multiple of 256 up to 2304, as on an H100; the suite asks for eight at least.
    EXPECT_EQ(map.cliffs.size(), 9u);
    const auto rules = expectations_on(map, s);
    ASSERT_EQ(rules.size(), 1u);
    EXPECT_EQ(rules[0].rule, "expect cliff_count >= 8 on measured maps");
    EXPECT_EQ(rules[0].verdict, Verdict::passed) << rules[0].message;
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
    const auto rules = expectations_on(map, s);
    ASSERT_EQ(rules.size(), 1u);
    EXPECT_EQ(rules[0].rule, "expect cliff_count == 1 on measured maps");
    EXPECT_EQ(rules[0].verdict, Verdict::passed) << rules[0].message;
}

TEST(ScanPlan, AlignmentSuiteAsMeasuredKeepsItsOneCliffAt512)
{
    const auto s = suite::load_suite(repo_root() / "suites" / "alignment_scan.yaml");
    for (unsigned seed = 0; seed < 10; ++seed) {
        std::mt19937 rng(seed);
        const CliffMap map = alignment_map(s, 512, 0.01, rng);
        ASSERT_EQ(map.cliffs.size(), 1u) << "seed " << seed;
        EXPECT_EQ(map.cliffs[0].x_after, 513);
        EXPECT_EQ(map.cliffs[0].cause, CliffCause::alignment) << map.cliffs[0].explanation;
        EXPECT_EQ(expectations_on(map, s)[0].verdict, Verdict::passed);
    }
}

TEST(ScanPlan, RowsPaddedTo448FailAgainstTheH100Baseline)
{
    // tests/suites/alignment_scan_448.yaml: the step moves to 448 -> 449, where the map is a comb.
    suite::LoadOptions anywhere;
    anywhere.sources_anywhere = true;
    const auto s = suite::load_suite(repo_root() / "tests" / "suites" / "alignment_scan_448.yaml", anywhere);
    EXPECT_EQ(s.name, "alignment_scan") << "gated against the committed baseline";
    // The committed cliffs, without the GPU's levels: these synthetic maps are shaped like the H100's,
    // not equal to them point by point (the levels are judged below, against a synthetic baseline).
    auto baseline =
        compare::read_cliff_baseline(repo_root() / "baselines" / "alignment_scan" / "NVIDIA-H100-80GB-HBM3.cliffs.csv");
    const auto committed_levels = baseline.levels;
    baseline.levels.clear();
    for (unsigned seed = 0; seed < 10; ++seed) {
        std::mt19937 rng(seed);
        const CliffMap map = alignment_map(s, 448, 0.015, rng);
        ASSERT_TRUE(baseline.holds(map));
        ASSERT_EQ(map.cliffs.size(), 1u) << "seed " << seed;
        const Cliff& c = map.cliffs[0];
        EXPECT_EQ(c.x_after, 449);
        EXPECT_GE(c.x_before, 447);
        EXPECT_EQ(c.cause, CliffCause::alignment) << c.explanation;
        EXPECT_NE(c.explanation.find("pitch 1792 -> 1796 bytes"), std::string::npos) << c.explanation;

        const auto verdicts = compare::judge_cliff_map(map, s, &baseline);
        std::size_t regressed = 0, gone = 0;
        for (const auto& v : verdicts) {
            if (v.judgement.verdict == Verdict::regressed) {
                ++regressed;
                EXPECT_EQ(v.x_after, 449);
                EXPECT_NE(v.judgement.message.find("new cliff at W="), std::string::npos) << v.judgement.message;
                EXPECT_NE(v.judgement.message.find("caused by alignment: pitch 1792 -> 1796 bytes"), std::string::npos)
                    << v.judgement.message;
            }
            if (v.judgement.verdict == Verdict::improved) {
                ++gone;
                EXPECT_EQ(v.x_before, 512);
            }
        }
        EXPECT_EQ(regressed, 1u) << "seed " << seed;
        EXPECT_EQ(gone, 1u) << "seed " << seed;

        // With the levels of a clean scan (rows padded to 512) in the baseline, the cliff at 512 is
        // gone because the level before it rose: a regression too, not an improvement.
        auto with_levels = baseline;
        with_levels.levels = compare::level_rows(alignment_map(s, 512, 0.015, rng));
        std::size_t new_cliffs = 0, gone_by_rise = 0, improved = 0;
        for (const auto& v : compare::judge_cliff_map(map, s, &with_levels)) {
            if (v.judgement.verdict == Verdict::improved) ++improved;
            if (v.judgement.verdict != Verdict::regressed) continue;
            new_cliffs += v.judgement.message.find("new cliff at W=") != std::string::npos;
            if (v.judgement.message.find("is gone because the level before it rose") != std::string::npos) {
                ++gone_by_rise;
                EXPECT_EQ(v.x_before, 512);
            }
        }
        EXPECT_EQ(new_cliffs, 1u) << "seed " << seed;
        EXPECT_EQ(gone_by_rise, 1u) << "seed " << seed;
        EXPECT_EQ(improved, 0u) << "seed " << seed;
    }
    EXPECT_FALSE(committed_levels.empty()) << "the H100 baseline keeps the map's levels";
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

} // namespace scan_plan_test
