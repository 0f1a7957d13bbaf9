// The history page read by commit: each commit's entry lists what moved there, newest first; the
// points of a scanned axis that moved together are one row (a map), every series names its
// architecture, commits name the x axis of a short history, a change from 0 reads as new and
// absolute, and commits of one date keep the order their runs ran in.

#include "harness/history/history_page.hxx"
#include "harness/history/suite_history.hxx"

#include <algorithm>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <random>
#include <string>
#include <vector>

namespace history_page_test {

using namespace harness;
using namespace harness::history;

namespace {

constexpr std::size_t commits = 12;

std::string commit_name(std::size_t c)
{
    return fmt::format("{:07x}{:033x}", 0xabc0000 + c, c);
}

/// A scanned suite: variant `rows` at W = 496..505 slows by 10 % at commit 8; variant `other`
/// gains a register at commit 5 and its blocks per SM fall to 1.
std::vector<RunRecord> runs()
{
    std::mt19937 rng(4);
    std::normal_distribution<double> wobble(0.0, 0.002);
    std::vector<RunRecord> out;
    for (std::size_t c = 0; c < commits; ++c)
        for (int k = 0; k < 3; ++k) {
            RunRecord r;
            r.suite = "row_staircase";
            r.commit = commit_name(c);
            r.commit_date = fmt::format("2026-11-{:02}T00:00:00Z", c + 1);
            r.mode = RunMode::gpu;
            r.arch = "sm_90";
            r.gpu = "NVIDIA H100 80GB HBM3";
            for (int w = 496; w <= 505; ++w) {
                CaseFigures f;
                f.variant = "rows";
                f.params = fmt::format("ROWS=8448 W={}", w);
                f.arch = "sm_90";
                f.status = CaseStatus::passed;
                std::vector<double> samples;
                const double time = 30.0 * (c >= 8 ? 1.10 : 1.0) * (1 + 0.0005 * (w - 496));
                for (int i = 0; i < 30; ++i) samples.push_back(time * (1 + wobble(rng)));
                f.time = summarize_time(samples);
                f.figures = {{"time_median", f.time->median_us}};
                r.cases.push_back(std::move(f));
            }
            CaseFigures other;
            other.variant = "other";
            other.params = "ROWS=8448 W=496";
            other.arch = "sm_90";
            other.status = CaseStatus::passed;
            other.figures = {{"registers", c >= 5 ? 33.0 : 32.0}, {"blocks_per_sm", c >= 5 ? 1.0 : 2.0}};
            r.cases.push_back(std::move(other));
            out.push_back(std::move(r));
        }
    return out;
}

} // namespace

TEST(HistoryPage, ChangesAreListedByCommitWithAScannedMapAsOneRow)
{
    std::vector<std::string> order;
    for (std::size_t c = 0; c < commits; ++c) order.push_back(commit_name(c));
    const SuiteHistory h = build_suite_history("row_staircase", runs(), CommitOrder(order));
    PageContext context;
    context.output = "page.html";
    const std::string html = history_page(h, context);

    // One entry per commit that moved, the newest first.
    const auto at8 = html.find("<code>abc000800000</code> <span");
    const auto at5 = html.find("<code>abc000500000</code> <span");
    ASSERT_NE(at8, std::string::npos) << html;
    ASSERT_NE(at5, std::string::npos) << html;
    EXPECT_LT(at8, at5);
    EXPECT_NE(html.find("10 figures moved, 10 worse"), std::string::npos);
    // The ten points of W are one row of the map, with the median move.
    EXPECT_NE(html.find("rows ROWS=8448 W=* [sm_90]"), std::string::npos);
    EXPECT_NE(html.find("10 points of W moved"), std::string::npos);
    EXPECT_NE(html.find("(median)"), std::string::npos);
    EXPECT_EQ(html.find("rows ROWS=8448 W=500 [sm_90]</a>"), std::string::npos) << "no row per point";
    // Every series names its architecture; a count of one is singular; hash and date apart.
    EXPECT_NE(html.find("other ROWS=8448 W=496 [sm_90]"), std::string::npos);
    EXPECT_NE(html.find("1 block<"), std::string::npos);
    EXPECT_EQ(html.find("1 blocks"), std::string::npos);
    EXPECT_NE(html.find("</code><br><span class=\"unit\">"), std::string::npos);
    // A short history names its commits on the x axis.
    EXPECT_NE(html.find(">abc0003<"), std::string::npos);
}

namespace {

/// A static series per point of W = 1..n that spills 288 bytes from commit 3 on; the commits share
/// one date and are recorded a minute apart, named so that their hashes sort the other way round.
std::vector<RunRecord> spill_runs(int points)
{
    std::vector<RunRecord> out;
    for (std::size_t c = 0; c < 6; ++c) {
        RunRecord r;
        r.suite = "spill";
        r.commit = fmt::format("{:040x}", 0xfff - c);
        r.commit_date = "2026-11-01T00:00:00Z";
        r.timestamp = fmt::format("2026-11-01T00:{:02}:00Z", c);
        r.mode = RunMode::static_tier;
        r.arch = "sm_90";
        for (int w = 1; w <= points; ++w) {
            CaseFigures f;
            f.variant = "local";
            f.params = fmt::format("W={}", w);
            f.arch = "sm_90";
            f.status = CaseStatus::passed;
            f.figures = {{"local_bytes", c >= 3 ? 288.0 : 0.0}};
            r.cases.push_back(std::move(f));
        }
        out.push_back(std::move(r));
    }
    return out;
}

} // namespace

TEST(HistoryPage, AChangeFromZeroIsNewAndAbsoluteNotAPercentage)
{
    PageContext context;
    context.output = "page.html";
    const std::string one = history_page(build_suite_history("spill", spill_runs(1), CommitOrder({})), context);
    EXPECT_NE(one.find("new: +288"), std::string::npos) << one;
    EXPECT_EQ(one.find("+0.00 %"), std::string::npos) << one;
    EXPECT_EQ(one.find("+0.0%"), std::string::npos) << "the chart's change-point label";
    // Three points of W moved from 0 together: one row of the map, its median absolute.
    const std::string map = history_page(build_suite_history("spill", spill_runs(3), CommitOrder({})), context);
    EXPECT_NE(map.find("3 points of W moved"), std::string::npos) << map;
    EXPECT_NE(map.find("(median, from 0 at 3 points)"), std::string::npos) << map;
    EXPECT_EQ(map.find("+0.00 % (median)"), std::string::npos) << map;
}

TEST(HistoryPage, CommitsOfOneDateFollowTheOrderTheirRunsRan)
{
    // No commit order from git: every commit is off the branch, all of one date; the hashes sort
    // against the order of the runs.
    const SuiteHistory h = build_suite_history("spill", spill_runs(1), CommitOrder({}));
    ASSERT_EQ(h.commits.size(), 6u);
    for (std::size_t c = 0; c < h.commits.size(); ++c)
        EXPECT_EQ(h.commits[c].commit, fmt::format("{:040x}", 0xfff - c));
    // The same whatever order the store hands the runs in.
    auto reversed = spill_runs(1);
    std::reverse(reversed.begin(), reversed.end());
    const SuiteHistory again = build_suite_history("spill", reversed, CommitOrder({}));
    for (std::size_t c = 0; c < again.commits.size(); ++c) EXPECT_EQ(again.commits[c].commit, h.commits[c].commit);
}

} // namespace history_page_test
