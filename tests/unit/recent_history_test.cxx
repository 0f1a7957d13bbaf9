// The recent history beside a failing verdict: a scratch history store of a few recorded runs, a
// run with a regression, and the sparkline that summary.md and report.html show for that row
// (and nothing without a store, or with an empty one).

#include "harness/cli/commands.hxx"
#include "harness/cli/exit_codes.hxx"
#include "harness/core/metrics.hxx"
#include "harness/history/history_store.hxx"
#include "harness/history/recent_values.hxx"
#include "harness/report/reporters.hxx"
#include "harness/report/sparkline.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace recent_history_test {

using namespace harness;
namespace fs = std::filesystem;

namespace {

RunReport fixture_run()
{
    return read_results_json(repo_root() / "tests/fixtures/gemm_results.json");
}

CaseResult& tiled_2048(RunReport& run)
{
    for (auto& r : run.results)
        if (r.variant == "tiled32" && r.params_text == "N=2048") return r;
    throw std::runtime_error("the fixture has no tiled32 N=2048");
}

const MetricVerdict& verdict_of(const RunReport& run, const std::string& metric)
{
    for (const auto& r : run.results)
        if (r.variant == "tiled32" && r.params_text == "N=2048")
            for (const auto& v : r.verdicts)
                if (v.metric == metric) return v;
    throw std::runtime_error("no verdict " + metric);
}

/// Records the fixture's run at `commits` commits, one a day, the regressed case's time at 100 us
/// plus the commit's number; and one run on another GPU model, far slower.
void fill_store(const fs::path& store, std::size_t commits)
{
    const history::HistoryStore history_store(store);
    for (std::size_t i = 0; i < commits; ++i) {
        RunReport run = fixture_run();
        tiled_2048(run).set_metric(metric::time_median, 100.0 + static_cast<double>(i));
        const std::string date = fmt::format("2025-05-{:02}T10:00:00Z", i + 1);
        history_store.add(history::record_from_report(run, fmt::format("{:040x}", 0xa0 + i), date, ""));
    }
    RunReport other = fixture_run();
    other.device_name = "NVIDIA H100 80GB HBM3";
    tiled_2048(other).set_metric(metric::time_median, 900.0);
    history_store.add(history::record_from_report(other, fmt::format("{:040x}", 0xf0), "2025-05-30T10:00:00Z", ""));
}

} // namespace

TEST(RecentHistory, BlocksSpanLowestToHighestWithTheCurrentValue)
{
    EXPECT_EQ(report::block_sparkline({1, 2, 3, 4, 5, 6, 7, 8}), "▁▂▃▄▅▆▇█");
    EXPECT_EQ(report::block_sparkline({5, 5, 5}), "▅▅▅");
    EXPECT_EQ(report::block_sparkline({1, 1}, 8.0), "▁▁") << "the current value widens the scale";
    const std::string md = report::markdown_sparkline({1, 1, 1}, 8.0, "us");
    EXPECT_NE(md.find("history (3 commits): ▁▁▁ → **█**"), std::string::npos) << md;
    EXPECT_NE(md.find("min 1 · max 1 us"), std::string::npos) << md;
    EXPECT_EQ(report::markdown_sparkline({}, 8.0, "us"), "");
    EXPECT_EQ(report::svg_sparkline({}, 8.0, "us", "#c62828"), "");
}

TEST(RecentHistory, RegressedRowShowsItsSeriesInSummaryAndReport)
{
    TempDir dir;
    const fs::path store = dir.path / "store";
    fill_store(store, 6);

    RunReport run = fixture_run();
    // No git in the scratch folder: commits follow their dates.
    const auto added = history::attach_recent_history(run, store, dir.path);
    EXPECT_TRUE(added.problems.empty());
    EXPECT_GE(added.verdicts, 2u);
    const auto& time = verdict_of(run, metric::time_median);
    ASSERT_EQ(time.verdict, Verdict::regressed);
    EXPECT_EQ(time.recent, (std::vector<double>{100, 101, 102, 103, 104, 105}))
        << "the same GPU model only, oldest first";
    const auto& wavefronts = verdict_of(run, metric::excess_shared_wavefronts);
    ASSERT_EQ(wavefronts.verdict, Verdict::regressed);
    EXPECT_EQ(wavefronts.recent.size(), 7u) << "exact figures are shared by every GPU of the architecture";
    for (const auto& r : run.results)
        for (const auto& v : r.verdicts) {
            if (v.verdict == Verdict::passed || v.verdict == Verdict::improved) {
                EXPECT_TRUE(v.recent.empty()) << v.metric;
            }
        }

    const std::string md = report::markdown_summary(run);
    const auto row = md.find("| regressed | tiled32 N=2048 | sm_90 | time_median |");
    ASSERT_NE(row, std::string::npos) << md;
    const std::string line = md.substr(row, md.find('\n', row) - row);
    const std::string blocks = report::block_sparkline(time.recent, time.value);
    EXPECT_NE(line.find("<br>history (6 commits): " + blocks + " → **"), std::string::npos) << line;
    EXPECT_NE(line.find("min 100 · max 105"), std::string::npos) << line;

    const std::string html = report::html_report(run);
    const auto regressions = html.find("id=\"regressions\"");
    const auto spark = html.find("data-sparkline=\"recent\" data-points=\"6\"");
    ASSERT_NE(spark, std::string::npos);
    EXPECT_LT(regressions, spark);
    EXPECT_LT(spark, html.find("</section>", regressions)) << "in the regressions table";
    EXPECT_NE(html.find("<circle class=\"now\"", spark), std::string::npos) << "the current value is marked";
    EXPECT_NE(html.find("last 6 commits on the default branch: min 100 us, max 105 us; now", spark), std::string::npos);
}

TEST(RecentHistory, NothingWithoutAStoreOrWithAnEmptyOne)
{
    TempDir dir;
    const std::string plain_md = report::markdown_summary(fixture_run());
    const std::string plain_html = report::html_report(fixture_run());
    EXPECT_EQ(plain_md.find("history ("), std::string::npos);
    EXPECT_EQ(plain_html.find("data-sparkline"), std::string::npos);

    for (const fs::path& store : {dir.path / "missing", dir.path}) {
        RunReport run = fixture_run();
        EXPECT_EQ(history::attach_recent_history(run, store, dir.path).verdicts, 0u);
        EXPECT_EQ(report::markdown_summary(run), plain_md);
        EXPECT_EQ(report::html_report(run), plain_html);
    }
    EXPECT_FALSE(fs::exists(dir.path / "missing"));
}

TEST(RecentHistory, TheReportedCommitIsNotShownTwice)
{
    TempDir dir;
    const fs::path store = dir.path / "store";
    fill_store(store, 3);
    RunReport own = fixture_run(); // git_revision 3f9c2e1a7b4d
    tiled_2048(own).set_metric(metric::time_median, 500.0);
    history::HistoryStore(store).add(
        history::record_from_report(own, "3f9c2e1a7b4d" + std::string(28, '0'), "2025-05-20T10:00:00Z", ""));
    RunReport run = fixture_run();
    history::attach_recent_history(run, store, dir.path);
    EXPECT_EQ(verdict_of(run, metric::time_median).recent, (std::vector<double>{100, 101, 102}));
}

TEST(RecentHistory, ReportCommandTakesAHistoryStore)
{
    TempDir dir;
    const fs::path store = dir.path / "store";
    fill_store(store, 4);
    const fs::path results = repo_root() / "tests/fixtures/gemm_results.json";
    const fs::path with = dir.path / "with.html", without = dir.path / "without.html";
    testing::internal::CaptureStdout();
    const int with_code = cli::run_tool(
        {"report", results.string(), "-o", with.string(), "--history", store.string(), "--repo", dir.path.string()});
    const int without_code = cli::run_tool({"report", results.string(), "-o", without.string()});
    testing::internal::GetCapturedStdout();
    ASSERT_EQ(with_code, cli::exit_pass);
    ASSERT_EQ(without_code, cli::exit_pass);
    EXPECT_NE(read_file(with).find("data-sparkline=\"recent\" data-points=\"4\""), std::string::npos);
    EXPECT_EQ(read_file(without).find("data-sparkline"), std::string::npos);
}

} // namespace recent_history_test
