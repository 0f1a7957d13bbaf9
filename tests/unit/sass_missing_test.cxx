// Without nvdisasm (docs/sass.md): a case's SASS figures are not measured, never zero, with the
// reason; where its baseline holds SASS figures one verdict says so: skipped outside CI mode (the
// run passes, nothing counted as gated), not measured in CI mode (the run fails with exit 1 and
// says the gate fails). No SASS code file is written or diffed.
#include "harness/cli/commands.hxx"
#include "harness/compile/sass_disassembly.hxx"
#include "harness/core/metrics.hxx"
#include "harness/core/run_report.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"

#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <gtest/gtest.h>

namespace sass_missing_test {

using namespace harness;
namespace fs = std::filesystem;

namespace {

// nvdisasm is looked up once per process: this program never finds one.
const bool no_nvdisasm = [] {
    setenv("HARNESS_NVDISASM", "/nonexistent/nvdisasm", 1);
    return true;
}();

/// A scratch copy of the project whose transpose suite runs in the static tier for sm_90.
struct StaticRun {
    TempDir scratch{"harness-sass-missing"};
    int code = -1;
    std::string console;
    RunReport results;

    explicit StaticRun(const std::string& mode)
    {
        for (const char* dir : {"suites", "kernels", "baselines"})
            fs::copy(repo_root() / dir, scratch.path / dir, fs::copy_options::recursive);
        const fs::path cwd = fs::current_path();
        fs::current_path(scratch.path);
        unsetenv("CI");
        testing::internal::CaptureStdout();
        code = cli::run_tool({"run", "--static", mode, "--no-cache", "suites/transpose.yaml", "--arch", "sm_90"});
        console = testing::internal::GetCapturedStdout();
        fs::current_path(cwd);
        results = read_results_json(scratch.path / "reports/transpose/results.json");
    }
};

} // namespace

TEST(SassMissing, FiguresAreNotMeasuredWithTheReasonNeverZero)
{
    ASSERT_TRUE(no_nvdisasm);
    ASSERT_TRUE(compile::find_nvdisasm().program.empty());
    EXPECT_NE(compile::find_nvdisasm().not_found_reason.find("$HARNESS_NVDISASM names /nonexistent/nvdisasm"),
              std::string::npos);
    const StaticRun run("--no-ci");
    EXPECT_EQ(run.code, 0) << run.console;
    ASSERT_FALSE(run.results.results.empty());
    for (const auto& r : run.results.results) {
        EXPECT_EQ(r.status, CaseStatus::passed) << r.variant << " " << r.params_text;
        EXPECT_NE(r.sass_not_measured.find("/nonexistent/nvdisasm"), std::string::npos);
        for (const auto& m : r.metrics) EXPECT_FALSE(m.name.starts_with("sass_")) << m.name << " = " << m.value;
        EXPECT_TRUE(r.sass_lines.empty());
        EXPECT_TRUE(r.sass_diff.empty());
        // The baseline holds SASS figures: one verdict says they were not measured, none compares one.
        std::size_t said = 0;
        for (const auto& v : r.verdicts) {
            if (!v.metric.starts_with("sass_")) continue;
            EXPECT_EQ(v.verdict, Verdict::skipped) << v.metric;
            EXPECT_EQ(v.message.find("sass_instructions: SASS figures not measured: $HARNESS_NVDISASM names "
                                     "/nonexistent/nvdisasm"),
                      0u)
                << v.message;
            ++said;
        }
        EXPECT_EQ(said, 1u);
    }
    // The console says which figures went uncompared, and why.
    EXPECT_NE(
        run.console.find(fmt::format("not compared ({}x): SASS figures not measured: ", run.results.results.size())),
        std::string::npos)
        << run.console;
    EXPECT_FALSE(fs::exists(run.scratch.path / "reports/transpose/sass-sm_90.gz"));
    // Nothing of the SASS is counted as gated: not compared, not reported, under not gated.
    const GateCounts g = gate_counts(run.results);
    std::size_t sass_gated = 0;
    for (const auto& r : run.results.results)
        for (const auto& v : r.verdicts)
            if (v.metric.starts_with("sass_") && v.verdict != Verdict::skipped) ++sass_gated;
    EXPECT_EQ(sass_gated, 0u);
    EXPECT_GE(g.not_gated, run.results.results.size());
    EXPECT_NE(run.console.find(fmt::format("{} not gated", g.not_gated)), std::string::npos) << run.console;
}

TEST(SassMissing, CiModeFailsSayingTheGateFailsAndCountsThemNotMeasured)
{
    const StaticRun run("--ci");
    EXPECT_EQ(run.code, 1) << run.console;
    std::size_t not_measured = 0;
    for (const auto& r : run.results.results)
        for (const auto& v : r.verdicts)
            if (v.metric.starts_with("sass_")) {
                EXPECT_EQ(v.verdict, Verdict::not_measured);
                EXPECT_NE(v.message.find("(CI mode: the gate fails)"), std::string::npos) << v.message;
                ++not_measured;
            }
    EXPECT_EQ(not_measured, run.results.results.size());
    const GateCounts g = gate_counts(run.results);
    EXPECT_EQ(g.not_measured, not_measured);
    const Totals t = totals(run.results);
    EXPECT_EQ(t.not_gated, run.results.results.size());
    EXPECT_EQ(t.passed, 0u);
    EXPECT_NE(run.console.find(std::to_string(not_measured) + " not measured"), std::string::npos) << run.console;
    // The console names the figure once, the reason after it.
    EXPECT_NE(run.console.find("[sm_90] sass_instructions: SASS figures not measured (CI mode: the gate fails): "
                               "$HARNESS_NVDISASM names /nonexistent/nvdisasm"),
              std::string::npos)
        << run.console;
    EXPECT_EQ(run.console.find("sass_instructions: sass_instructions"), std::string::npos) << run.console;
}

} // namespace sass_missing_test
