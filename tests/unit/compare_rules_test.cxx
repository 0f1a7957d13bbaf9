#include "harness/compare/compare_run.hxx"
#include "harness/compare/mann_whitney.hxx"
#include "harness/compare/rules.hxx"
#include "harness/core/metrics.hxx"
#include "harness/core/stats.hxx"

#include <gtest/gtest.h>
#include <random>

namespace compare_rules_test {

using namespace harness;
using namespace harness::compare;

namespace {

MetricInfo info(const char* name)
{
    return *find_metric(name);
}

} // namespace

TEST(Rules, ParsesEveryKindAndRejectsNonsense)
{
    EXPECT_EQ(parse_rule("exact").kind, RuleKind::exact);
    EXPECT_EQ(parse_rule("ignore").kind, RuleKind::ignore);
    const Rule rel = parse_rule(" rel 5% ");
    EXPECT_EQ(rel.kind, RuleKind::relative);
    EXPECT_DOUBLE_EQ(rel.tolerance, 0.05);
    const Rule abs = parse_rule("abs 0.05");
    EXPECT_EQ(abs.kind, RuleKind::absolute);
    EXPECT_DOUBLE_EQ(abs.tolerance, 0.05);
    EXPECT_DOUBLE_EQ(parse_rule("samples 8%").tolerance, 0.08);
    EXPECT_THROW(parse_rule("rel 5"), std::invalid_argument); // a bare number could mean 500 %
    EXPECT_THROW(parse_rule("exact 1"), std::invalid_argument);
    EXPECT_THROW(parse_rule("abs -1"), std::invalid_argument);
    EXPECT_THROW(parse_rule("relative 5%"), std::invalid_argument);
    // Every default rule of the metric table parses.
    for (const auto& m : metric_table()) EXPECT_NO_THROW(parse_rule(m.default_rule)) << m.name;
}

TEST(Rules, ExpectOperators)
{
    EXPECT_TRUE(expect_holds(parse_expect("== 0"), 0));
    EXPECT_FALSE(expect_holds(parse_expect("== 0"), 1));
    EXPECT_TRUE(expect_holds(parse_expect("!= 0"), 1));
    EXPECT_TRUE(expect_holds(parse_expect("< 4"), 3));
    EXPECT_FALSE(expect_holds(parse_expect("< 4"), 4));
    EXPECT_TRUE(expect_holds(parse_expect("<= 4"), 4));
    EXPECT_FALSE(expect_holds(parse_expect(">0.75"), 0.75));
    EXPECT_TRUE(expect_holds(parse_expect(">= 0.75"), 0.75));
    EXPECT_EQ(parse_expect("<=64").text, "<= 64");
    EXPECT_THROW(parse_expect("=< 4"), std::invalid_argument);
    EXPECT_THROW(parse_expect("<= four"), std::invalid_argument);
    EXPECT_THROW(parse_expect("64"), std::invalid_argument);
}

TEST(Rules, ExactIsDirectionAware)
{
    const Rule exact = parse_rule("exact");
    EXPECT_EQ(judge_value(info("registers"), exact, 32, 32).verdict, Verdict::passed);
    const auto worse = judge_value(info("registers"), exact, 32, 40);
    EXPECT_EQ(worse.verdict, Verdict::regressed);
    EXPECT_NE(worse.message.find("registers 32 regs/thread -> 40 regs/thread (+25.0 %)"), std::string::npos)
        << worse.message;
    EXPECT_EQ(judge_value(info("registers"), exact, 40, 32).verdict, Verdict::improved);
    // Higher is better for occupancy: a drop regresses.
    EXPECT_EQ(judge_value(info("theoretical_occupancy"), exact, 1.0, 0.75).verdict, Verdict::regressed);
    EXPECT_EQ(judge_value(info("theoretical_occupancy"), exact, 0.75, 1.0).verdict, Verdict::improved);
    // Neither direction: any change regresses.
    EXPECT_EQ(judge_value(info("flops"), exact, 100, 90).verdict, Verdict::regressed);
    EXPECT_EQ(judge_value(info("flops"), exact, 100, 110).verdict, Verdict::regressed);
}

TEST(Rules, RelativeAndAbsoluteTolerances)
{
    const Rule rel = parse_rule("rel 5%");
    EXPECT_EQ(judge_value(info("dram_read_bytes"), rel, 1000, 1049).verdict, Verdict::passed);
    EXPECT_EQ(judge_value(info("dram_read_bytes"), rel, 1000, 1051).verdict, Verdict::regressed);
    EXPECT_EQ(judge_value(info("dram_read_bytes"), rel, 1000, 949).verdict, Verdict::improved);
    EXPECT_EQ(judge_value(info("dram_read_bytes"), rel, 0, 1).verdict, Verdict::regressed);
    const Rule abs = parse_rule("abs 0.05");
    EXPECT_EQ(judge_value(info("achieved_occupancy"), abs, 0.80, 0.76).verdict, Verdict::passed);
    EXPECT_EQ(judge_value(info("achieved_occupancy"), abs, 0.80, 0.70).verdict, Verdict::regressed);
    EXPECT_EQ(judge_value(info("achieved_occupancy"), abs, 0.70, 0.80).verdict, Verdict::improved);
}

TEST(MannWhitney, MatchesHandComputedValues)
{
    // No overlap: U = 0; n = 3 + 3, sd = sqrt(9 * 7 / 12); p one-sided = P(Z >= (4.5 - 0.5) / sd).
    const std::vector<double> low = {1, 2, 3}, high = {4, 5, 6};
    const MannWhitney t = mann_whitney(low, high);
    EXPECT_DOUBLE_EQ(t.u_a, 0.0);
    EXPECT_DOUBLE_EQ(t.u_b, 9.0);
    EXPECT_NEAR(t.p_a_less, 0.040428, 1e-5);
    EXPECT_NEAR(t.p_two_sided, 0.080856, 1e-5);
    EXPECT_NEAR(t.p_a_greater, 1.0, 0.05);

    // Ties: U counts a tie as one half; U_a = 0 + 0.5 + 0.5 + 1.5.
    const std::vector<double> a = {1, 2, 2, 3}, b = {2, 3, 4, 4};
    const MannWhitney tied = mann_whitney(a, b);
    EXPECT_DOUBLE_EQ(tied.u_a, 2.5);
    EXPECT_DOUBLE_EQ(tied.u_b, 13.5);
    // Tie-corrected variance: 16 / 12 * (9 - 36 / 56) = 11.142857.
    EXPECT_NEAR(tied.z, -5.5 / std::sqrt(11.142857), 1e-5);

    // Every value tied: no evidence.
    const std::vector<double> same = {5, 5, 5};
    EXPECT_DOUBLE_EQ(mann_whitney(same, same).p_two_sided, 1.0);
    EXPECT_DOUBLE_EQ(median(std::vector<double>{3, 1, 2, 10}), 2.5);
}

TEST(SamplesRule, NoFalseAlarmsOnOneDistributionAndDetectsAShift)
{
    std::mt19937_64 rng(12345);
    std::lognormal_distribution<double> kernel_time(std::log(100.0), 0.03);
    const auto draw = [&](double scale) {
        std::vector<double> v(20);
        for (auto& x : v) x = kernel_time(rng) * scale;
        return v;
    };
    const Rule rule = parse_rule("samples 5%");
    const MetricInfo time = info("time_median");
    int alarms = 0, significant = 0;
    for (int trial = 0; trial < 500; ++trial) {
        const auto base = draw(1.0), run = draw(1.0);
        const auto v = judge_samples(time, rule, base, run);
        alarms += v.verdict != Verdict::passed;
        significant += mann_whitney(run, base).p_two_sided < 0.01;
    }
    EXPECT_EQ(alarms, 0);
    EXPECT_LE(significant, 15); // about 1 % of 500 by construction of the test

    const auto slower = judge_samples(time, rule, draw(1.0), draw(1.2));
    EXPECT_EQ(slower.verdict, Verdict::regressed) << slower.message;
    EXPECT_NE(slower.message.find("Mann-Whitney"), std::string::npos);
    EXPECT_EQ(judge_samples(time, rule, draw(1.0), draw(0.8)).verdict, Verdict::improved);
    // Significant but smaller than the minimum effect: passes.
    EXPECT_EQ(judge_samples(time, rule, draw(1.0), draw(1.02)).verdict, Verdict::passed);
    // Too few samples: nothing to judge.
    EXPECT_EQ(judge_samples(time, rule, {1, 2}, draw(1.0)).verdict, Verdict::no_baseline);
}

// A median that moved beyond the rule in samples that do not show it (half of the run's samples
// slower): neither the same nor different. It passes, marked unsure; a clear shift and a run like
// the baseline are not unsure.
TEST(SamplesRule, AMoveTheSamplesDoNotShowIsUnsure)
{
    const Rule rule = parse_rule("samples 2% min 0.5");
    const MetricInfo time = info("time_median");
    std::vector<double> base;
    for (int i = 0; i < 64; ++i) base.push_back(10.0 + 0.01 * (i % 7));
    const std::vector<double> mixed = {10.0, 10.02, 10.01, 12.0, 12.1, 12.05};
    const auto v = judge_samples(time, rule, base, mixed);
    EXPECT_EQ(v.verdict, Verdict::passed);
    EXPECT_TRUE(v.unsure) << v.message;
    EXPECT_NE(v.message.find("unsure"), std::string::npos) << v.message;
    std::vector<double> slower(6, 12.0);
    EXPECT_FALSE(judge_samples(time, rule, base, slower).unsure);
    EXPECT_EQ(judge_samples(time, rule, base, slower).verdict, Verdict::regressed);
    const std::vector<double> same(base.begin(), base.begin() + 10);
    EXPECT_FALSE(judge_samples(time, rule, base, same).unsure);
    // Beyond the tolerance but under the rule's minimum (0.5 us): the same, not unsure.
    const std::vector<double> small = {10.0, 10.02, 10.01, 10.4, 10.41, 10.42};
    EXPECT_FALSE(judge_samples(time, rule, base, small).unsure);
}

TEST(Cliff, NamesTheRegisterCliff)
{
    OccupancyFigures before{32, 0, 0, 0, 8, 1.0};
    OccupancyFigures after{40, 0, 0, 0, 6, 0.75};
    const auto text = occupancy_cliff("sm_90", before, after);
    ASSERT_TRUE(text);
    EXPECT_EQ(*text, "registers 32 -> 40: resident blocks 8 -> 6, theoretical occupancy 100 % -> 75 % (limiter: "
                     "registers)");
    // Same occupancy: no cliff.
    OccupancyFigures fewer{30, 0, 0, 0, 8, 1.0};
    EXPECT_FALSE(occupancy_cliff("sm_90", before, fewer));
    // Shared memory: 1024-thread blocks -> 256-thread blocks do not change; 48 KiB blocks do.
    OccupancyFigures small_smem{32, 16384, 0, 1, 8, 1.0};
    OccupancyFigures big_smem{32, 49152, 0, 1, 4, 0.5};
    const auto smem = occupancy_cliff("sm_90", small_smem, big_smem);
    ASSERT_TRUE(smem);
    EXPECT_NE(smem->find("shared memory 16384 -> 49152 bytes"), std::string::npos) << *smem;
    EXPECT_NE(smem->find("(limiter: shared memory)"), std::string::npos) << *smem;
}

// A relative or samples rule with "min": small absolute changes never count (tiny kernels, small
// DRAM figures), large ones still do.
TEST(Rules, MinimumChangeFloorsRelativeAndSamplesRules)
{
    const Rule rel = parse_rule("rel 5% min 1048576");
    EXPECT_EQ(rel.kind, RuleKind::relative);
    EXPECT_DOUBLE_EQ(rel.tolerance, 0.05);
    EXPECT_DOUBLE_EQ(rel.minimum, 1048576.0);
    EXPECT_EQ(judge_value(info("dram_read_bytes"), rel, 40000, 60000).verdict, Verdict::passed) << "+50 % of 40 KB";
    EXPECT_EQ(judge_value(info("dram_read_bytes"), rel, 100e6, 110e6).verdict, Verdict::regressed);
    EXPECT_THROW(parse_rule("rel 5% min"), std::invalid_argument);
    EXPECT_THROW(parse_rule("rel 5% min -3"), std::invalid_argument);

    const Rule samples = parse_rule("samples 5% min 1");
    EXPECT_DOUBLE_EQ(samples.minimum, 1.0);
    std::vector<double> base(50, 8.192), slower(50, 8.704); // +6 %, but half a microsecond
    EXPECT_EQ(judge_samples(info("time_median"), samples, base, slower).verdict, Verdict::passed);
    std::vector<double> big_base(50, 100.0), big_slower(50, 110.0);
    EXPECT_EQ(judge_samples(info("time_median"), samples, big_base, big_slower).verdict, Verdict::regressed);
    // The default: a 5 us kernel 0.3 us slower passes, 0.6 us slower fails.
    const Rule fallback = parse_rule(info("time_median").default_rule);
    EXPECT_DOUBLE_EQ(fallback.minimum, 0.5);
    std::vector<double> short_base(50, 5.0), bit_slower(50, 5.3), slower_still(50, 5.6);
    EXPECT_EQ(judge_samples(info("time_median"), fallback, short_base, bit_slower).verdict, Verdict::passed);
    EXPECT_EQ(judge_samples(info("time_median"), fallback, short_base, slower_still).verdict, Verdict::regressed);
}

TEST(Rules, TheTimeEffectFollowsTheBaselinesSpread)
{
    const Rule rule = parse_rule("samples 2% min 2");
    // A steady 500 us kernel (spread 0.1 %): a 3 % slowdown fails.
    std::vector<double> steady, steady_slower;
    for (int k = 0; k < 60; ++k) {
        steady.push_back(500.0 * (1.0 + 0.001 * ((k % 7) - 3) / 3.0));
        steady_slower.push_back(steady.back() * 1.03);
    }
    EXPECT_LT(relative_spread(steady), 0.002);
    EXPECT_EQ(judge_samples(info("time_median"), rule, steady, steady_slower).verdict, Verdict::regressed);
    // A noisy one (spread about 2 %): the same 3 % shift is within 4 widths of its noise.
    std::vector<double> noisy, noisy_slower;
    for (int k = 0; k < 60; ++k) {
        noisy.push_back(500.0 * (1.0 + 0.03 * ((k % 7) - 3) / 3.0));
        noisy_slower.push_back(noisy.back() * 1.03);
    }
    EXPECT_GT(relative_spread(noisy), 0.01);
    EXPECT_EQ(judge_samples(info("time_median"), rule, noisy, noisy_slower).verdict, Verdict::passed);
    // ... and a 15 % one fails, saying why the threshold was higher than the rule's.
    for (auto& x : noisy_slower) x *= 1.15 / 1.03;
    const auto v = judge_samples(info("time_median"), rule, noisy, noisy_slower);
    EXPECT_EQ(v.verdict, Verdict::regressed);
    EXPECT_NE(v.message.find("widths of the baseline's spread"), std::string::npos) << v.message;
}

TEST(Rules, NoisyDefaultsAbsorbRunToRunMovesAndCatchRealOnes)
{
    // Moves seen between H100 runs of the same build (run vs a baseline recorded on another machine).
    const auto judge_default = [](const char* name, double baseline, double value) {
        return judge_value(info(name), parse_rule(info(name).default_rule), baseline, value).verdict;
    };
    EXPECT_EQ(judge_default("dram_write_bytes", 6.68e6, 7.834624e6), Verdict::passed) << "+1.15 MB, +17 %";
    EXPECT_EQ(judge_default("dram_bytes", 23.48e6, 24.62e6), Verdict::passed);
    EXPECT_EQ(judge_default("achieved_occupancy", 0.659, 0.563), Verdict::passed) << "a 6 us kernel";
    // Real changes: an output written twice, a register cliff (100 % -> 75 % resident warps).
    EXPECT_EQ(judge_default("dram_write_bytes", 16.8e6, 33.6e6), Verdict::regressed);
    EXPECT_EQ(judge_default("dram_bytes", 50.3e6, 67.1e6), Verdict::regressed);
    EXPECT_EQ(judge_default("achieved_occupancy", 0.95, 0.74), Verdict::regressed);
}

TEST(Rules, PValuesReadAsReportsShowThem)
{
    EXPECT_EQ(p_value_text(0.0), "p < 0.001");
    EXPECT_EQ(p_value_text(0.0004), "p < 0.001");
    EXPECT_EQ(p_value_text(0.034), "p = 0.034");
    EXPECT_EQ(p_value_text(0.5), "p = 0.5");
}

} // namespace compare_rules_test
