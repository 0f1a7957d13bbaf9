// Noisy cliff maps against a baseline that keeps the map's levels: a step near min_depth judged
// against the baseline's own step at that gap (hysteresis), a level that moved along the axis with
// no step moving, a cliff that vanished because the level before it rose, the levels file, and the
// footprint cause of the launch model.

#include "../common/staircase_suite.hxx"
#include "harness/cliff/launch_model.hxx"
#include "harness/cliff/steps.hxx"
#include "harness/compare/cliff_baseline.hxx"
#include "harness/compare/cliff_gate.hxx"
#include "harness/core/error.hxx"
#include "harness/core/run_report.hxx"
#include "harness/pipeline/pool_runs.hxx"
#include "harness/suite/suite.hxx"
#include "test_paths.hxx"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <gtest/gtest.h>
#include <random>
#include <string>
#include <vector>

namespace cliff_levels_test {

using namespace harness;
namespace fs = std::filesystem;

namespace {

// A user's shallow staircase (tests/common/staircase_suite.hxx).
const std::string suite_text = test::staircase_suite_text("rows");

suite::Suite rows_suite()
{
    return suite::parse_suite(suite_text, repo_root() / "suites" / "rows.yaml");
}

constexpr double relative_noise = 0.004;

/// A noisy map of time along W = 1024..1279 whose level is `level(W)`, with a fresh draw of noise.
CliffMap measured(const std::function<double(int)>& level, unsigned seed)
{
    std::mt19937 random(seed);
    std::normal_distribution<double> scatter(0.0, relative_noise);
    CliffMap m;
    m.variant = "rows";
    m.axis = "W";
    m.arch = "sm_90";
    m.figure = "time";
    m.unit = "us";
    for (int w = 1024; w <= 1279; ++w) {
        const double v = level(w) * (1 + scatter(random));
        m.x.push_back(w);
        m.values.push_back(v);
        m.noise.push_back(v * relative_noise);
    }
    return m;
}

/// The map's cliffs as the GPU scan finds them (steps up, at least min_depth deep).
CliffMap with_cliffs(CliffMap m, double min_depth = 0.05)
{
    cliff::StepOptions options;
    options.min_depth = min_depth;
    options.worse_only = true;
    m.cliffs = cliff::find_steps(m.x, m.values, m.noise, options);
    return m;
}

/// A staircase: 10 us at W = 1024, one step every 32 floats, each `depths[k]` deep.
std::function<double(int)> staircase(std::vector<double> depths)
{
    return [depths](int w) {
        double v = 10.0;
        for (std::size_t k = 0; k < depths.size(); ++k)
            if (w >= 1056 + 32 * static_cast<int>(k)) v *= 1 + depths[k];
        return v;
    };
}

/// The baseline a map records, read back from its two files' text; without levels when `keep_levels` is false.
compare::CliffBaselineFile recorded(const CliffMap& map, bool keep_levels = true)
{
    compare::CliffBaselineFile file;
    file.set_meta("schema_version", "1");
    file.set_meta("suite", "rows");
    file.set_meta("key", "NVIDIA-H100-80GB-HBM3");
    file.rows = compare::cliff_rows(map);
    file.levels = compare::level_rows(map);
    auto read = compare::parse_cliff_baseline(compare::cliff_baseline_text(file), "x.cliffs.csv");
    if (keep_levels) compare::parse_cliff_levels(compare::cliff_levels_text(file), "x.levels.csv", read);
    return read;
}

std::vector<CliffVerdict> judged(const CliffMap& run, const compare::CliffBaselineFile& baseline)
{
    return compare::judge_cliff_map(run, rows_suite(), &baseline);
}

int count(const std::vector<CliffVerdict>& verdicts, Verdict which)
{
    return static_cast<int>(std::count_if(verdicts.begin(), verdicts.end(),
                                          [&](const CliffVerdict& v) { return v.judgement.verdict == which; }));
}

std::string messages(const std::vector<CliffVerdict>& verdicts)
{
    std::string out;
    for (const auto& v : verdicts) out += v.judgement.message + "\n";
    return out;
}

const CliffVerdict* find_message(const std::vector<CliffVerdict>& verdicts, const std::string& text)
{
    for (const auto& v : verdicts)
        if (v.judgement.message.find(text) != std::string::npos) return &v;
    return nullptr;
}

} // namespace

TEST(CliffLevels, AStepUnderMinDepthInTheBaselineThatMeasuresJustOverItNowPasses)
{
    // The seventh step at 4.9 % when recorded, 5.1 % now.
    const CliffMap base = with_cliffs(measured(staircase({0.07, 0.06, 0.08, 0.05, 0.07, 0.06, 0.049}), 1));
    const CliffMap run = with_cliffs(measured(staircase({0.07, 0.06, 0.08, 0.05, 0.07, 0.06, 0.051}), 2));
    ASSERT_FALSE(std::any_of(base.cliffs.begin(), base.cliffs.end(), [](const Cliff& c) { return c.x_after > 1240; }))
        << "the baseline's 4.9 % step must be under min_depth";
    ASSERT_TRUE(std::any_of(run.cliffs.begin(), run.cliffs.end(), [](const Cliff& c) { return c.x_after > 1240; }))
        << "the run's 5.1 % step must be a cliff";

    const auto with_levels = judged(run, recorded(base));
    EXPECT_EQ(count(with_levels, Verdict::regressed), 0) << messages(with_levels);
    EXPECT_NE(find_message(with_levels, "the baseline's levels step"), nullptr) << messages(with_levels);

    // A baseline of steps alone judges it by min_depth: the false alarm that the levels prevent.
    const auto steps_only = judged(run, recorded(base, false));
    EXPECT_EQ(count(steps_only, Verdict::regressed), 1) << messages(steps_only);
}

TEST(CliffLevels, ARecordedCliffThatMeasuresJustUnderMinDepthNowIsStillTheSameCliff)
{
    const CliffMap base = with_cliffs(measured(staircase({0.07, 0.055}), 3));
    const CliffMap run = with_cliffs(measured(staircase({0.07, 0.046}), 4));
    ASSERT_EQ(base.cliffs.size(), 2u);
    ASSERT_EQ(run.cliffs.size(), 1u);
    const auto v = judged(run, recorded(base));
    EXPECT_EQ(count(v, Verdict::regressed), 0) << messages(v);
    EXPECT_EQ(count(v, Verdict::improved), 0) << messages(v);
    EXPECT_NE(find_message(v, "(under the suite's min_depth 5 %, within the allowed"), nullptr) << messages(v);
}

TEST(CliffLevels, ANewStepWhereTheBaselineIsFlatFails)
{
    const CliffMap base = with_cliffs(measured(staircase({0.07, 0.06, 0.0}), 5));
    const CliffMap run = with_cliffs(measured(staircase({0.07, 0.06, 0.051}), 6));
    const auto v = judged(run, recorded(base));
    // One failure, the new step: the level after it rose with it, which is no second finding.
    ASSERT_EQ(count(v, Verdict::regressed), 1) << messages(v);
    const CliffVerdict* step = find_message(v, "new cliff at W=");
    ASSERT_NE(step, nullptr) << messages(v);
    EXPECT_EQ(step->judgement.verdict, Verdict::regressed);
    EXPECT_GE(step->x_before, 1118);
    EXPECT_LE(step->x_after, 1122);
}

TEST(CliffLevels, CleanRerunsOfAShallowStaircaseRaiseNoAlarm)
{
    // Steps of 4 to 8 % around min_depth, every rerun a fresh draw of the noise.
    const auto level = staircase({0.06, 0.045, 0.08, 0.052, 0.04, 0.07, 0.049});
    const CliffMap base = with_cliffs(measured(level, 100));
    int alarms = 0;
    std::string seen;
    for (unsigned rerun = 0; rerun < 40; ++rerun) {
        const auto v = judged(with_cliffs(measured(level, 200 + rerun)), recorded(base));
        if (count(v, Verdict::regressed) > 0) {
            ++alarms;
            seen += messages(v);
        }
    }
    EXPECT_EQ(alarms, 0) << seen;
}

TEST(CliffLevels, AnInteriorTenPerCentSlowerWithItsEndsUnchangedFails)
{
    // No step anywhere: a hump over the interior of the axis, 10 % at its top, the ends as before.
    const auto flat = [](int) { return 10.0; };
    const auto hump = [](int w) { return 10.0 * (1 + 0.10 * std::sin(M_PI * (w - 1024) / 255.0)); };
    const CliffMap base = with_cliffs(measured(flat, 7));
    const CliffMap run = with_cliffs(measured(hump, 8));
    ASSERT_TRUE(run.cliffs.empty()) << "the hump must have no step";
    EXPECT_NEAR(run.values.front(), base.values.front(), 0.02 * base.values.front());
    EXPECT_NEAR(run.values.back(), base.values.back(), 0.02 * base.values.back());

    const auto v = judged(run, recorded(base));
    const CliffVerdict* shift = find_message(v, "level rose along W=");
    ASSERT_NE(shift, nullptr) << messages(v);
    EXPECT_EQ(shift->judgement.verdict, Verdict::regressed);
    EXPECT_GT(*shift->judgement.value, 0.05);

    // Without the levels the same run passes: the silent pass that keeping them mends.
    EXPECT_EQ(count(judged(run, recorded(base, false)), Verdict::regressed), 0);
}

TEST(CliffLevels, ACliffThatVanishedBecauseTheLevelBeforeItRoseFails)
{
    // An occupancy staircase whose first step was +18 %: everything before it got as slow as after.
    const auto before = [](int w) { return w < 1152 ? 10.0 : 11.8; };
    const auto after = [](int) { return 11.8; };
    const CliffMap base = with_cliffs(measured(before, 9));
    ASSERT_EQ(base.cliffs.size(), 1u);
    const auto v = judged(with_cliffs(measured(after, 10)), recorded(base));
    const CliffVerdict* gone = find_message(v, "is gone because the level before it rose");
    ASSERT_NE(gone, nullptr) << messages(v);
    EXPECT_EQ(gone->judgement.verdict, Verdict::regressed);
    EXPECT_EQ(count(v, Verdict::improved), 0) << messages(v);

    // Gone because the level after it fell: an improvement, as before.
    const auto faster = judged(with_cliffs(measured([](int) { return 10.0; }, 11)), recorded(base));
    EXPECT_EQ(count(faster, Verdict::regressed), 0) << messages(faster);
    EXPECT_NE(find_message(faster, "of the baseline is gone ("), nullptr) << messages(faster);
}

TEST(CliffLevels, AMovedCliffStillFails)
{
    const CliffMap base = with_cliffs(measured(staircase({0.0, 0.0, 0.15}), 12)); // at W = 1120
    const auto moved = [](int w) { return w < 1104 ? 10.0 : 11.5; };              // 16 floats earlier
    const auto v = judged(with_cliffs(measured(moved, 13)), recorded(base));
    const CliffVerdict* step = find_message(v, "new cliff at W=");
    ASSERT_NE(step, nullptr) << messages(v);
    EXPECT_EQ(step->judgement.verdict, Verdict::regressed);
}

TEST(CliffLevels, LevelsFilesReadBackAndRefuseAnotherSuitesOrRepeatedPoints)
{
    const CliffMap map = with_cliffs(measured(staircase({0.07}), 14));
    const auto read = recorded(map);
    ASSERT_EQ(read.levels.size(), map.x.size());
    ASSERT_EQ(read.levels_of(map).size(), map.x.size());
    EXPECT_EQ(read.levels_of(map)[5]->level, map.values[5]);
    EXPECT_EQ(read.levels_of(map)[5]->noise, map.noise[5]);

    compare::CliffBaselineFile file;
    file.set_meta("schema_version", "1");
    file.set_meta("suite", "rows");
    file.set_meta("key", "NVIDIA-H100-80GB-HBM3");
    file.levels = compare::level_rows(map);
    compare::CliffBaselineFile other;
    other.set_meta("schema_version", "1");
    other.set_meta("suite", "another");
    other.set_meta("key", "NVIDIA-H100-80GB-HBM3");
    try {
        compare::parse_cliff_levels(compare::cliff_levels_text(file), "rows/x.levels.csv", other);
        ADD_FAILURE() << "a levels file of another suite was read";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("rows/x.levels.csv:1:1: suite"), std::string::npos) << e.what();
    }
    file.levels.push_back(file.levels.front());
    compare::CliffBaselineFile same;
    same.set_meta("schema_version", "1");
    same.set_meta("suite", "rows");
    same.set_meta("key", "NVIDIA-H100-80GB-HBM3");
    try {
        compare::parse_cliff_levels(compare::cliff_levels_text(file), "rows/x.levels.csv", same);
        ADD_FAILURE() << "a repeated point was read";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("a second level for the map rows W"), std::string::npos) << e.what();
    }
    // An exact map keeps no levels: its points are cases with their figures in <key>.csv.
    CliffMap exact = map;
    exact.noise.clear();
    EXPECT_TRUE(compare::level_rows(exact).empty());
    EXPECT_EQ(compare::cliff_levels_path(fs::path("b") / "rows" / "NVIDIA-H100.cliffs.csv"),
              fs::path("b") / "rows" / "NVIDIA-H100.levels.csv");
}

TEST(CliffExplain, ARowFootprintCrossingALineOrASectorIsTheFootprintCause)
{
    cliff::LaunchShape before, after;
    before.x = 1248;
    after.x = 1249;
    before.pitch_bytes = 4992; // 39 lines of 128 bytes, sector-aligned
    after.pitch_bytes = 5120;  // 40 lines
    auto e = cliff::explain_step(before, after, cliff::GpuShape{132}, "W");
    EXPECT_EQ(e.cause, CliffCause::footprint);
    EXPECT_EQ(e.text, "footprint: pitch 4992 -> 5120 bytes, each row spans 39 -> 40 lines of 128 bytes");
    before.pitch_bytes = 5152; // 41 lines begun, 161 sectors
    after.pitch_bytes = 5184;  // still 41 lines, 162 sectors
    e = cliff::explain_step(before, after, cliff::GpuShape{132}, "W");
    EXPECT_EQ(e.cause, CliffCause::footprint);
    EXPECT_EQ(e.text, "footprint: pitch 5152 -> 5184 bytes, each row spans 161 -> 162 sectors of 32 bytes");
    // Within one line and one sector, or the pitch unchanged: no footprint cause.
    before.pitch_bytes = after.pitch_bytes = 5120;
    EXPECT_EQ(cliff::explain_step(before, after, cliff::GpuShape{132}, "W").cause, CliffCause::unexplained);
    EXPECT_EQ(cliff_cause_from_name("footprint"), CliffCause::footprint);
}

TEST(CliffLevels, LevelsRecordedFromSeveralRunsAreTheirMiddleWithTheirSpreadAsNoise)
{
    // Three processes, one of them with the first tread 1.3 % faster.
    std::vector<RunReport> runs(3);
    for (std::size_t r = 0; r < runs.size(); ++r) {
        CliffMap m = measured(staircase({0.05}), 20 + static_cast<unsigned>(r));
        if (r == 1)
            for (std::size_t i = 0; i < m.x.size(); ++i)
                if (m.x[i] < 1056) m.values[i] *= 0.987;
        runs[r].cliff_maps.push_back(std::move(m));
    }
    const auto pooled = pipeline::pool_runs(runs, {"run 1", "run 2", "run 3"});
    ASSERT_EQ(pooled.report.cliff_maps.size(), 1u);
    const CliffMap& m = pooled.report.cliff_maps.front();
    for (std::size_t i = 0; i < m.x.size(); ++i) {
        std::vector<double> values;
        for (const auto& run : runs) values.push_back(run.cliff_maps.front().values[i]);
        std::sort(values.begin(), values.end());
        EXPECT_EQ(m.values[i], values[1]) << m.x[i];
        EXPECT_GE(m.noise[i], runs.front().cliff_maps.front().noise[i]);
    }
    // Where one process sat apart, the spread between runs is the noise.
    EXPECT_GT(m.noise.front(), 2 * relative_noise * m.values.front());
}

} // namespace cliff_levels_test
