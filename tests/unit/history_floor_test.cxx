// Change points that mean something: a move of a noisy figure is a change point only where it is
// both significant and beyond the gate's own rule for that figure (its practical floor); exact
// figures stay exact.

#include "../common/history_runs.hxx"
#include "harness/history/suite_history.hxx"

#include <fmt/format.h>
#include <functional>
#include <gtest/gtest.h>
#include <random>
#include <string>
#include <vector>

namespace history_floor_test {

using namespace harness;
using namespace harness::history;

namespace {

/// `commits` commits of 3 runs each, of one case whose DRAM bytes, time and registers are given
/// per commit (each run's time samples scattered by 0.2 % around the commit's time).
std::vector<RunRecord> runs_of(std::size_t commits, const std::function<double(std::size_t)>& dram,
                               const std::function<double(std::size_t)>& time_us,
                               const std::function<double(std::size_t)>& registers, unsigned seed)
{
    std::mt19937 rng(seed);
    std::normal_distribution<double> wobble(0.0, 0.002);
    std::vector<RunRecord> runs;
    for (std::size_t c = 0; c < commits; ++c)
        for (int k = 0; k < 3; ++k) {
            RunRecord r = test::run_at("steady", c);
            CaseFigures f = test::passed_case("copy");
            std::vector<double> samples;
            for (int i = 0; i < 50; ++i) samples.push_back(time_us(c) * (1 + wobble(rng)));
            f.time = summarize_time(samples);
            f.figures = {{"time_median", f.time->median_us}, {"dram_bytes", dram(c)}, {"registers", registers(c)}};
            r.cases.push_back(std::move(f));
            runs.push_back(std::move(r));
        }
    return runs;
}

CommitOrder order_of(std::size_t commits)
{
    std::vector<std::string> order;
    for (std::size_t c = 0; c < commits; ++c) order.push_back(test::commit_hash(c));
    return CommitOrder(order);
}

std::string change_points(const SuiteHistory& h)
{
    std::string out;
    for (const auto& s : h.series) {
        for (const auto& c : s.analysis.change_points)
            out += fmt::format("{} @{} {:+.4f} %\n", s.metric, c.index, 100 * c.relative());
        if (s.analysis.creep) out += fmt::format("{} creep\n", s.metric);
    }
    return out;
}

} // namespace

TEST(HistoryFloor, ASixteenCommitHistoryOfASuiteThatNeverChangesHasNoChangePoint)
{
    // DRAM bytes move by -0.01 % (1,536 bytes) at commit 8, about six of their tiny noise: as
    // significant as the test can see, far under the gate's rule for the figure (5 % and 2 MiB).
    const std::size_t commits = 16;
    std::mt19937 rng(3);
    std::vector<double> dram_noise;
    for (std::size_t c = 0; c < commits; ++c) dram_noise.push_back(std::normal_distribution<double>(0, 256)(rng));
    const auto dram = [&](std::size_t c) { return 16777216.0 + (c >= 8 ? -1536.0 : 0.0) + dram_noise[c]; };
    const auto h =
        build_suite_history("steady",
                            runs_of(
                                commits, dram, [](std::size_t) { return 100.0; }, [](std::size_t) { return 32.0; }, 11),
                            order_of(commits));
    ASSERT_EQ(h.commits.size(), commits);
    EXPECT_EQ(change_points(h), "");
    // Significance alone would call it a change: the floor is what keeps it off the page.
    std::vector<double> values;
    for (std::size_t c = 0; c < commits; ++c) values.push_back(dram(c));
    const auto significant = analyze_noisy(values, 0.0);
    ASSERT_EQ(significant.change_points.size(), 1u);
    EXPECT_EQ(significant.change_points.front().index, 8u);
}

TEST(HistoryFloor, AMoveBeyondTheRuleIsStillFoundAndExactFiguresStayExact)
{
    const std::size_t commits = 16;
    const auto h =
        build_suite_history("steady",
                            runs_of(
                                commits, [](std::size_t c) { return c >= 6 ? 16777216.0 * 1.2 : 16777216.0; },
                                [](std::size_t c) { return c >= 10 ? 104.0 : 100.0; },
                                [](std::size_t c) { return c >= 12 ? 33.0 : 32.0; }, 12),
                            order_of(commits));
    const std::string found = change_points(h);
    EXPECT_NE(found.find("dram_bytes @6"), std::string::npos) << found;
    EXPECT_NE(found.find("time_median @10"), std::string::npos) << found;
    // One register more is a change of an exact figure, however small.
    EXPECT_NE(found.find("registers @12"), std::string::npos) << found;
}

TEST(HistoryFloor, ATimeStepUnderTheRulesMinimumIsNoChangePoint)
{
    // 3 % of a 10 us kernel is 0.3 us: significant in quiet samples, under the rule's 0.5 us minimum.
    const std::size_t commits = 16;
    const auto h = build_suite_history("steady",
                                       runs_of(
                                           commits, [](std::size_t) { return 16777216.0; },
                                           [](std::size_t c) { return c >= 8 ? 10.3 : 10.0; },
                                           [](std::size_t) { return 32.0; }, 13),
                                       order_of(commits));
    EXPECT_EQ(change_points(h), "");
}

} // namespace history_floor_test
