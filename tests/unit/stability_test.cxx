// Repeated runs side by side (`harness stability`): exact figures must repeat, noisy ones are
// measured by their spread; cases that did not pass everywhere are named, not compared.

#include "harness/cli/commands.hxx"
#include "harness/cli/exit_codes.hxx"
#include "harness/compare/run_stability.hxx"
#include "harness/core/atomic_file.hxx"
#include "harness/core/error.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"

#include <filesystem>
#include <gtest/gtest.h>

namespace stability_test {

using namespace harness;
namespace fs = std::filesystem;

namespace {

harness::RunReport fixture_run()
{
    return harness::read_results_json(repo_root() / "tests" / "fixtures" / "gemm_results.json");
}

CaseResult& find(harness::RunReport& run, const std::string& variant, const std::string& params)
{
    for (auto& r : run.results)
        if (r.variant == variant && r.params_text == params) return r;
    throw std::runtime_error("no case " + variant + " " + params);
}

const compare::MetricSpread* spread_of(const compare::StabilityReport& report, const std::string& metric)
{
    for (const auto& m : report.metrics)
        if (m.metric == metric) return &m;
    return nullptr;
}

} // namespace

TEST(RunStability, IdenticalRunsRepeatEveryExactFigure)
{
    const auto run = fixture_run();
    const auto report = compare::run_stability({run, run, run}, {});
    EXPECT_TRUE(report.exact_figures_repeat());
    EXPECT_EQ(report.runs, 3u);
    EXPECT_EQ(report.cases, 8u) << "the case that failed verification is not compared";
    ASSERT_EQ(report.not_compared.size(), 1u);
    EXPECT_EQ(report.not_compared[0], "vectorized N=1024 [sm_90]: failed_verification in run 1");
    const auto* registers = spread_of(report, "registers");
    ASSERT_NE(registers, nullptr);
    EXPECT_EQ(registers->stability, Stability::exact);
    EXPECT_EQ(registers->cases, 8u);
    EXPECT_EQ(registers->differing, 0u);
    const std::string text = compare::format_stability(report);
    EXPECT_NE(text.find("identical in every run"), std::string::npos) << text;
}

TEST(RunStability, AnExactFigureThatMovesIsListedWithEveryRunsValue)
{
    const auto a = fixture_run();
    auto b = a;
    find(b, "tiled32", "N=2048")
        .set_metric("global_ld_sectors", 1.0 + *find(b, "tiled32", "N=2048").metric("global_ld_sectors"));
    const auto report = compare::run_stability({a, a, b}, {"r1.json", "r2.json", "r3.json"});
    EXPECT_FALSE(report.exact_figures_repeat());
    ASSERT_EQ(report.differences.size(), 1u);
    EXPECT_EQ(report.differences[0].case_name, "tiled32 N=2048 [sm_90]");
    EXPECT_EQ(report.differences[0].metric, "global_ld_sectors");
    ASSERT_EQ(report.differences[0].values.size(), 3u);
    EXPECT_EQ(report.differences[0].values[2], report.differences[0].values[0] + 1.0);
    EXPECT_NE(compare::format_stability(report).find("1 of "), std::string::npos);
}

// An exact figure the suite does not gate (no run gave it a verdict while judging the case's
// others) is listed when it moves but does not fail: SASS-instrumented sector counts of cp.async
// loads vary by a few sectors between processes. A gated one still fails.
TEST(RunStability, AnUngatedExactFigureThatMovesIsListedButDoesNotFail)
{
    const auto a = fixture_run();
    auto b = a;
    auto& r = find(b, "tiled32", "N=2048");
    ASSERT_FALSE(r.verdicts.empty());
    r.set_metric("global_sectors", 294880);
    auto d = b;
    find(d, "tiled32", "N=2048").set_metric("global_sectors", 294912);
    const auto report = compare::run_stability({b, d}, {"r1.json", "r2.json"});
    EXPECT_TRUE(report.exact_figures_repeat());
    ASSERT_EQ(report.differences.size(), 1u);
    EXPECT_FALSE(report.differences[0].gated);
    const std::string text = compare::format_stability(report);
    EXPECT_NE(text.find("exact, not gated (shown only; the suite's rules ignore them): 1 figures differ:\n  tiled32 "
                        "N=2048 [sm_90]  global_sectors: 294880 / 294912"),
              std::string::npos)
        << text;
    // Without any verdicts the figure cannot be told apart from a gated one: it fails.
    for (auto* run : {&b, &d}) find(*run, "tiled32", "N=2048").verdicts.clear();
    EXPECT_FALSE(compare::run_stability({b, d}, {"r1.json", "r2.json"}).exact_figures_repeat());
}

TEST(RunStability, NoisyFiguresReportTheirLargestSpreadAndPass)
{
    const auto a = fixture_run();
    auto b = a;
    auto& naive = find(b, "naive", "N=2048");
    naive.set_metric("time_median", *naive.metric("time_median") * 1.02);
    auto& tiled = find(b, "tiled32", "N=1024");
    tiled.set_metric("time_median", *tiled.metric("time_median") * 0.99);
    const auto report = compare::run_stability({a, b}, {});
    EXPECT_TRUE(report.exact_figures_repeat()) << "time is noisy: a spread is not a difference";
    const auto* time = spread_of(report, "time_median");
    ASSERT_NE(time, nullptr);
    EXPECT_EQ(time->stability, Stability::noisy);
    EXPECT_EQ(time->differing, 2u);
    EXPECT_EQ(time->worst_case, "naive N=2048 [sm_90]");
    EXPECT_NEAR(time->worst_spread, 0.02 / 1.02, 1e-9);
    EXPECT_NE(compare::format_stability(report).find("time_median"), std::string::npos);
}

TEST(RunStability, CasesMissingFromARunAreNamedNotCompared)
{
    const auto a = fixture_run();
    auto b = a;
    b.results.erase(b.results.begin());
    const auto report = compare::run_stability({a, b}, {"first.json", "second.json"});
    EXPECT_EQ(report.cases, 7u);
    ASSERT_EQ(report.not_compared.size(), 2u);
    EXPECT_EQ(report.not_compared[0], "naive N=1024 [sm_90]: absent from second.json");
}

TEST(RunStability, RefusesOneRunOrRunsOfDifferentSuitesOrGpus)
{
    const auto a = fixture_run();
    EXPECT_THROW(compare::run_stability({a}, {}), Error);
    auto other_suite = a;
    other_suite.suite = "transpose";
    EXPECT_THROW(compare::run_stability({a, other_suite}, {}), Error);
    auto other_gpu = a;
    other_gpu.device_name = "NVIDIA H100 80GB HBM3";
    try {
        compare::run_stability({a, other_gpu}, {"a.json", "b.json"});
        FAIL() << "runs on different GPUs were compared";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::bad_input);
        EXPECT_NE(std::string(e.what()).find("a.json and b.json"), std::string::npos) << e.what();
    }
}

TEST(StabilityCommand, ExitCodesFollowTheExactFigures)
{
    const TempDir scratch{"harness-stability-test"};
    const fs::path& dir = scratch.path;
    const auto a = fixture_run();
    auto b = a;
    find(b, "naive", "N=4096").set_metric("registers", 40);
    write_file_atomically(dir / "a.json", harness::results_json(a));
    write_file_atomically(dir / "a2.json", harness::results_json(a));
    write_file_atomically(dir / "b.json", harness::results_json(b));
    EXPECT_EQ(cli::dispatch({"stability", (dir / "a.json").string(), (dir / "a2.json").string()}), cli::exit_pass);
    EXPECT_EQ(cli::dispatch({"stability", (dir / "a.json").string(), (dir / "b.json").string()}), cli::exit_failure);
    EXPECT_EQ(cli::dispatch({"stability", (dir / "a.json").string()}), cli::exit_bad_input);
    EXPECT_EQ(cli::dispatch({"stability", (dir / "absent.json").string(), (dir / "a.json").string()}),
              cli::exit_bad_input);
}

} // namespace stability_test
