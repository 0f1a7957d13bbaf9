// What a run says about its baseline: "the baseline is stale: run `harness baseline update`" only
// where a baseline is stale and nothing regressed (a spill that buys occupancy is its regression's
// side, not a gain to record), and the cases a baseline holds that the suite no longer has (a variant
// removed, its params narrowed), listed and counted as removed, failing CI mode until the baseline
// drops their rows.

#include "harness/cli/commands.hxx"
#include "harness/compare/baseline_file.hxx"
#include "harness/compare/baseline_update.hxx"
#include "harness/compare/compare_run.hxx"
#include "harness/report/reporters.hxx"
#include "harness/suite/suite.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"
#include "tool_output.hxx"

#include <filesystem>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace baseline_advice_test {

using namespace harness;
using namespace harness::compare;
namespace fs = std::filesystem;

namespace {

/// A suite of two variants of the project's vector_add over N; `variants` and `sizes` narrow it.
std::string suite_text(const std::string& sizes = "[256, 512]", bool with_b = true)
{
    std::string text = "suite: advice\nparams:\n  N: " + sizes +
                       "\nreference: a\nbuffers:\n  x: {type: f32, count: N, role: out}\nvariants:\n";
    for (const std::string v : {"a", "b"}) {
        if (v == "b" && !with_b) continue;
        text += "  " + v +
                ":\n    source: ../kernels/memory/vector_add.cu\n    entry: vector_add\n    block: [256]\n"
                "    grid: [ceil_div(N, 256)]\n    args: [x, x, x, {i32: N}]\n";
    }
    return text;
}

suite::Suite suite_of(const std::string& text)
{
    return suite::parse_suite(text, repo_root() / "suites" / "advice.yaml");
}

/// A static result with the figures a spill moves: local bytes, registers, resident blocks.
CaseResult result(const std::string& variant, const std::string& params, double local_bytes, double registers,
                  double blocks)
{
    CaseResult r;
    r.suite = "advice";
    r.variant = variant;
    r.params_text = params;
    r.arch = "sm_90";
    r.status = CaseStatus::passed;
    r.set_metric("local_bytes", local_bytes);
    r.set_metric("registers", registers);
    r.set_metric("blocks_per_sm", blocks);
    r.set_metric("theoretical_occupancy", blocks / 8.0);
    return r;
}

harness::RunReport report_of(std::vector<CaseResult> results)
{
    harness::RunReport rep;
    rep.suite = "advice";
    rep.suite_file = "suites/advice.yaml";
    rep.mode = RunMode::static_tier;
    rep.arch = "sm_90";
    rep.timestamp = "2025-01-01T00:00:00Z";
    rep.results = std::move(results);
    return rep;
}

const MetricVerdict* verdict(const CaseResult& r, const std::string& metric)
{
    for (const auto& v : r.verdicts)
        if (v.metric == metric) return &v;
    return nullptr;
}

std::string console_of(const harness::RunReport& rep)
{
    std::ostringstream out;
    report::write_console_verdicts(rep, out);
    return out.str();
}

/// The baseline of every case of the two-variant suite at 40 registers, 6 blocks, no local memory.
fs::path recorded_baseline(const TempDir& dir)
{
    const auto s = suite_of(suite_text());
    update_baselines(s,
                     report_of({result("a", "N=256", 0, 40, 6), result("a", "N=512", 0, 40, 6),
                                result("b", "N=256", 0, 40, 6), result("b", "N=512", 0, 40, 6)}),
                     dir.path);
    return dir.path;
}

} // namespace

TEST(BaselineAdvice, ASpillThatBuysOccupancyDoesNotCallTheBaselineStale)
{
    TempDir dir{"harness-advice-test"};
    CompareOptions options;
    options.baseline_dir = recorded_baseline(dir);
    // Case a N=256 spills 288 bytes and so fits 8 blocks: the occupancy it bought is its regression's side.
    auto rep = report_of({result("a", "N=256", 288, 32, 8), result("a", "N=512", 0, 40, 6),
                          result("b", "N=256", 0, 40, 6), result("b", "N=512", 0, 40, 6)});
    compare_run(rep, suite_of(suite_text()), options);
    const auto* spill = verdict(rep.results[0], "local_bytes");
    ASSERT_TRUE(spill);
    EXPECT_EQ(spill->verdict, Verdict::regressed);
    const auto* occupancy = verdict(rep.results[0], "blocks_per_sm");
    ASSERT_TRUE(occupancy);
    EXPECT_EQ(occupancy->verdict, Verdict::improved);
    EXPECT_EQ(occupancy->message.find("run `harness baseline update`"), std::string::npos) << occupancy->message;
    EXPECT_NE(occupancy->message.find("it came with this case's regression (local_bytes"), std::string::npos)
        << occupancy->message;
    EXPECT_NE(occupancy->message.find("the baseline is not stale, record none"), std::string::npos);
    const std::string console = console_of(rep);
    EXPECT_EQ(console.find("the baseline is stale: run `harness baseline update`"), std::string::npos) << console;
    EXPECT_NE(console.find("improvements (not to be recorded while the run has regressions"), std::string::npos)
        << console;
}

TEST(BaselineAdvice, AGainBesideAnotherCaseRegressionSaysToMendItFirst)
{
    TempDir dir{"harness-advice-test"};
    CompareOptions options;
    options.baseline_dir = recorded_baseline(dir);
    // b N=512 got better on its own; a N=256 regressed elsewhere in the run.
    auto rep = report_of({result("a", "N=256", 288, 40, 6), result("a", "N=512", 0, 40, 6),
                          result("b", "N=256", 0, 40, 6), result("b", "N=512", 0, 32, 8)});
    compare_run(rep, suite_of(suite_text()), options);
    const auto* gain = verdict(rep.results[3], "blocks_per_sm");
    ASSERT_TRUE(gain);
    EXPECT_EQ(gain->verdict, Verdict::improved);
    EXPECT_NE(gain->message.find("`harness baseline update` would record this run's regressions too: mend them "
                                 "first"),
              std::string::npos)
        << gain->message;
}

TEST(BaselineAdvice, AGainInARunWithoutRegressionsIsAStaleBaseline)
{
    TempDir dir{"harness-advice-test"};
    CompareOptions options;
    options.baseline_dir = recorded_baseline(dir);
    auto rep = report_of({result("a", "N=256", 0, 32, 8), result("a", "N=512", 0, 40, 6),
                          result("b", "N=256", 0, 40, 6), result("b", "N=512", 0, 40, 6)});
    compare_run(rep, suite_of(suite_text()), options);
    const auto* gain = verdict(rep.results[0], "blocks_per_sm");
    ASSERT_TRUE(gain);
    EXPECT_EQ(gain->verdict, Verdict::improved);
    EXPECT_NE(gain->message.find("the baseline is stale: run `harness baseline update`"), std::string::npos)
        << gain->message;
    EXPECT_NE(console_of(rep).find("improvements (the baseline is stale: run `harness baseline update`)"),
              std::string::npos);
}

TEST(RemovedCases, AVariantRemovedFromTheSuiteIsListedCountedAndFailsCiMode)
{
    TempDir dir{"harness-advice-test"};
    CompareOptions options;
    options.baseline_dir = recorded_baseline(dir);
    options.ci = true;
    const auto without_b = suite_of(suite_text("[256, 512]", false));
    auto rep = report_of({result("a", "N=256", 0, 40, 6), result("a", "N=512", 0, 40, 6)});
    compare_run(rep, without_b, options);
    ASSERT_EQ(rep.removed.size(), 2u);
    EXPECT_EQ(rep.removed[0].variant, "b");
    EXPECT_EQ(rep.removed[0].params_text, "N=256");
    EXPECT_EQ(rep.removed[0].rows, 4u); // local_bytes, registers, blocks_per_sm, theoretical_occupancy
    EXPECT_TRUE(rep.removed[0].fails);
    const auto t = totals(rep);
    EXPECT_EQ(t.passed, 2u);
    EXPECT_EQ(t.removed, 2u);
    EXPECT_EQ(t.removed_failing, 2u);
    EXPECT_TRUE(t.failing());
    const std::string console = console_of(rep);
    EXPECT_NE(console.find("0 skipped, 2 removed;"), std::string::npos) << console;
    EXPECT_NE(console.find("\nremoved (cases the baseline holds and the suite no longer has: CI mode fails them"),
              std::string::npos)
        << console;
    EXPECT_NE(console.find("  b N=256, N=512 (2 cases): 8 rows in "), std::string::npos) << console;
    // Kept through results.json, as `harness report` and `harness merge` read it.
    const auto back = nlohmann::json::parse(results_json(rep));
    ASSERT_TRUE(back.contains("removed"));
    EXPECT_EQ(back["removed"].size(), 2u);
    EXPECT_EQ(back["removed"][1]["params"], "N=512");

    // Outside CI mode: listed and counted, not failing.
    options.ci = false;
    compare_run(rep, without_b, options);
    EXPECT_EQ(totals(rep).removed, 2u);
    EXPECT_FALSE(totals(rep).failing());

    // The baseline updated in the same change (its rows of b dropped): nothing is removed, CI mode passes.
    update_baselines(without_b, rep, dir.path);
    options.ci = true;
    compare_run(rep, without_b, options);
    EXPECT_TRUE(rep.removed.empty());
    EXPECT_FALSE(totals(rep).failing());
}

TEST(RemovedCases, NarrowedParamsRemoveTheirPointsAndTheCommandFailsInCiMode)
{
    // The project's layout: a suite and its kernel, baselines recorded with N in [256, 512].
    TempDir dir{"harness-advice-test"};
    fs::create_directories(dir.path / "kernels" / "memory");
    fs::create_directories(dir.path / ".git");
    fs::copy_file(repo_root() / "kernels/memory/vector_add.cu", dir.path / "kernels/memory/vector_add.cu");
    const fs::path suite = dir.path / "suites" / "advice.yaml";
    write_file(suite, suite_text());
    auto o = run_tool_captured({"baseline", "update", "--static", "--no-ci", "--arch", "sm_90", "--cache-dir",
                                (dir.path / "cache").string(), suite.string()});
    ASSERT_EQ(o.code, 0) << o.out << o.err;

    // N narrowed to [256]: the N=512 rows of both variants gate nothing.
    write_file(suite, suite_text("[256]"));
    const std::vector<std::string> run = {"run",         "--static",
                                          "--arch",      "sm_90",
                                          "--cache-dir", (dir.path / "cache").string(),
                                          "--out",       (dir.path / "reports").string(),
                                          suite.string()};
    auto ci = run;
    ci.insert(ci.begin() + 1, "--ci");
    o = run_tool_captured(ci);
    EXPECT_EQ(o.code, 1) << o.out << o.err;
    EXPECT_NE(o.out.find("2 removed;"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("  a N=512: "), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("  b N=512: "), std::string::npos) << o.out;
    auto plain = run;
    plain.insert(plain.begin() + 1, "--no-ci");
    o = run_tool_captured(plain);
    EXPECT_EQ(o.code, 0) << o.out << o.err;
    EXPECT_NE(o.out.find("2 removed;"), std::string::npos) << o.out;

    // `harness baseline update` drops the rows: CI mode passes.
    o = run_tool_captured({"baseline", "update", "--static", "--no-ci", "--arch", "sm_90", "--cache-dir",
                           (dir.path / "cache").string(), suite.string()});
    ASSERT_EQ(o.code, 0) << o.out << o.err;
    o = run_tool_captured(ci);
    EXPECT_EQ(o.code, 0) << o.out << o.err;
    EXPECT_NE(o.out.find("0 removed;"), std::string::npos) << o.out;
}

} // namespace baseline_advice_test
