// Variants of several launches: each launch's own figures, named by its label, judged like a single
// kernel's, and every result naming its kernels and their file.
#include "harness/compare/baseline_file.hxx"
#include "harness/compare/compare_run.hxx"
#include "harness/compile/static_tier.hxx"
#include "harness/core/error.hxx"
#include "harness/core/metrics.hxx"
#include "harness/core/run_report.hxx"
#include "harness/report/reporters.hxx"
#include "harness/suite/compile_params.hxx"
#include "harness/suite/suite.hxx"
#include "test_files.hxx"

#include <algorithm>
#include <gtest/gtest.h>
#include <sstream>

namespace multi_launch_test {

using namespace harness;

namespace {

// Three kernels whose static shared memory differs, so that each launch's figures are told apart:
// `stage` uses none, `tile` 16 KiB, `wide` 32 KiB.
const char* kernels = R"(
extern "C" __global__ void stage(const float* in, float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * 2.0f;
}
extern "C" __global__ void tile(const float* in, float* out, int n)
{
    __shared__ float buffer[4096];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    buffer[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    if (i < n) out[i] = buffer[blockDim.x - 1 - threadIdx.x];
}
extern "C" __global__ void wide(const float* in, float* out, int n)
{
    __shared__ float buffer[8192];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    buffer[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    if (i < n) out[i] = buffer[threadIdx.x] + 1.0f;
}
)";

std::string suite_text(const std::string& last_launch_shared)
{
    return R"yaml(suite: passes
archs: [sm_90]
params:
  N: [4096]
reference: three
tolerance: {rel: 0, abs: 0}
buffers:
  a: {type: f32, count: N, init: uniform, seed: 1, min: -1, max: 1, role: in}
  b: {type: f32, count: N, init: zeros, role: out}
  c: {type: f32, count: N, init: zeros, role: out}
variants:
  three:
    source: ../kernels/passes.cu
    launches:
      - {entry: stage, block: [256], grid: ["ceil_div(N, 256)"], args: [a, b, {i32: N}]}
      - {entry: tile, block: [256], grid: ["ceil_div(N, 256)"], args: [b, c, {i32: N}]}
      - {entry: wide, block: [256], grid: ["ceil_div(N, 256)"], shared_bytes: )yaml" +
           last_launch_shared + R"yaml(, args: [c, b, {i32: N}]}
  twice:
    source: ../kernels/passes.cu
    launches:
      - {entry: stage, block: [256], grid: ["ceil_div(N, 256)"], args: [a, b, {i32: N}]}
      - {entry: stage, block: [256], grid: ["ceil_div(N, 256)"], args: [b, c, {i32: N}]}
)yaml";
}

struct Project {
    TempDir dir{"harness-multi-launch"};
    std::filesystem::path suite_file;
    explicit Project(const std::string& last_launch_shared = "0")
    {
        write_file(dir.path / "kernels" / "passes.cu", kernels);
        suite_file = dir.path / "suites" / "passes.yaml";
        write_file(suite_file, suite_text(last_launch_shared));
    }
};

const CaseResult& result_of(const std::vector<CaseResult>& results, const std::string& variant)
{
    for (const auto& r : results)
        if (r.variant == variant) return r;
    throw std::runtime_error("no result for " + variant);
}

} // namespace

TEST(MultiLaunch, LaunchFiguresAreNamedByMetricAndLabel)
{
    EXPECT_EQ(launch_metric_name("registers", "rstd_kernel"), "registers@rstd_kernel");
    EXPECT_EQ(split_launch_metric("registers@rstd_kernel").first, "registers");
    EXPECT_EQ(split_launch_metric("registers@rstd_kernel").second, "rstd_kernel");
    EXPECT_EQ(split_launch_metric("registers").second, "");
    // A launch's figure is its metric's: unit, direction, stability and default rule.
    ASSERT_TRUE(find_metric("theoretical_occupancy@gemm<32, 4>#2"));
    EXPECT_EQ(find_metric("theoretical_occupancy@gemm<32, 4>#2")->name, "theoretical_occupancy");
    EXPECT_FALSE(find_metric("no_such_metric@stage"));
}

TEST(MultiLaunch, LabelsAreEntriesAndRepeatsAreNumbered)
{
    Project project;
    const auto s = suite::load_suite(project.suite_file);
    const auto& three = *s.find_variant("three");
    const auto& twice = *s.find_variant("twice");
    const suite::Bindings point{{"N", 4096}};
    EXPECT_EQ(suite::launch_labels(three, point), (std::vector<std::string>{"stage", "tile", "wide"}));
    EXPECT_EQ(suite::launch_labels(twice, point), (std::vector<std::string>{"stage#1", "stage#2"}));
    const auto launches = suite::case_launches(s, three, point);
    ASSERT_EQ(launches.size(), 3u);
    EXPECT_EQ(launches[1].entry, "tile");
    EXPECT_EQ(launches[1].file, "kernels/passes.cu");
}

TEST(MultiLaunch, StaticTierGivesEachLaunchItsOwnFigures)
{
    Project project;
    const auto s = suite::load_suite(project.suite_file);
    const auto results = compile::run_static_tier(s, {"sm_90"}, nullptr);
    const CaseResult& three = result_of(results, "three");
    ASSERT_EQ(three.status, CaseStatus::passed) << three.message;
    EXPECT_EQ(three.metric("static_shared_bytes@stage"), 0.0);
    EXPECT_EQ(three.metric("static_shared_bytes@tile"), 16384.0);
    EXPECT_EQ(three.metric("static_shared_bytes@wide"), 32768.0);
    // The variant's own figure is still its most demanding launch's.
    EXPECT_EQ(three.metric("static_shared_bytes"), 32768.0);
    ASSERT_TRUE(three.metric("theoretical_occupancy@stage"));
    ASSERT_TRUE(three.metric("theoretical_occupancy@wide"));
    EXPECT_GT(*three.metric("theoretical_occupancy@stage"), *three.metric("theoretical_occupancy@wide"));
    EXPECT_EQ(three.metric("theoretical_occupancy"), three.metric("theoretical_occupancy@wide"));
    ASSERT_EQ(three.launches.size(), 3u);
    EXPECT_EQ(three.launches[2].file, "kernels/passes.cu");
    EXPECT_FALSE(occupancy_limiter_text(three.launches[2].occupancy_limiter).empty());

    const CaseResult& twice = result_of(results, "twice");
    EXPECT_TRUE(twice.metric("registers@stage#1"));
    EXPECT_TRUE(twice.metric("registers@stage#2"));
}

TEST(MultiLaunch, AnOccupancyDropInOneLaunchIsARegressionNamingItsKernel)
{
    // The baseline: the third launch with no dynamic shared memory.
    Project before;
    const auto s_before = suite::load_suite(before.suite_file);
    const auto baseline_results = compile::run_static_tier(s_before, {"sm_90"}, nullptr);
    compare::BaselineFile baseline;
    for (const auto& r : baseline_results)
        for (const auto& m : r.metrics)
            baseline.rows.push_back({r.variant, r.params_text, m.name, m.value, {}, "static"});

    // The change: the third launch asks for 160 KiB of dynamic shared memory, one block per SM.
    Project after("163840");
    const auto s_after = suite::load_suite(after.suite_file);
    auto results = compile::run_static_tier(s_after, {"sm_90"}, nullptr);
    CaseResult& three = const_cast<CaseResult&>(result_of(results, "three"));
    ASSERT_EQ(three.status, CaseStatus::passed) << three.message;
    compare::compare_case(three, s_after, &baseline, nullptr, "");

    const MetricVerdict* launch_verdict = nullptr;
    for (const auto& v : three.verdicts)
        if (v.metric == "theoretical_occupancy@wide") launch_verdict = &v;
    ASSERT_NE(launch_verdict, nullptr);
    EXPECT_EQ(launch_verdict->verdict, Verdict::regressed);
    EXPECT_NE(launch_verdict->message.find("kernel wide, launch 3 of 3 (kernels/passes.cu)"), std::string::npos)
        << launch_verdict->message;
    EXPECT_NE(launch_verdict->message.find("occupancy cliff"), std::string::npos) << launch_verdict->message;
    // The other launches did not move.
    for (const auto& v : three.verdicts)
        if (v.metric == "theoretical_occupancy@stage" || v.metric == "theoretical_occupancy@tile") {
            EXPECT_EQ(v.verdict, Verdict::passed) << v.metric << ": " << v.message;
        }
}

TEST(MultiLaunch, ALaunchsNoisyFigureIsKeptButNotGated)
{
    Project project;
    const auto s = suite::load_suite(project.suite_file);
    const auto& three = *s.find_variant("three");
    EXPECT_EQ(s.rule_for(three, "time_median@tile").kind, suite::RuleKind::ignore);
    EXPECT_EQ(s.rule_for(three, "dram_bytes@tile").kind, suite::RuleKind::ignore);
    EXPECT_EQ(s.rule_for(three, "global_ld_sectors@tile").kind, s.rule_for(three, "global_ld_sectors").kind);
    EXPECT_EQ(s.rule_for(three, "theoretical_occupancy@tile").kind, suite::RuleKind::exact);
}

TEST(MultiLaunch, AFailedCaseNamesItsKernelsAndTheirFile)
{
    CaseResult r;
    r.suite = "layernorm";
    r.variant = "three_pass";
    r.params_text = "ROWS=8 COLS=32";
    r.status = CaseStatus::fault;
    r.message = "kernel fault: an illegal memory access was encountered";
    for (const std::string entry : {"row_mean", "row_rstd", "normalize"})
        r.launches.push_back({entry, entry, "kernels/layernorm/layernorm.cu", std::nullopt});
    EXPECT_EQ(report::kernels_text(r), "kernels row_mean, row_rstd and normalize in kernels/layernorm/layernorm.cu");

    RunReport run;
    run.suite = "layernorm";
    run.results = {r};
    std::ostringstream console;
    report::write_console_table(run, console);
    EXPECT_NE(console.str().find("three_pass ROWS=8 COLS=32 [fault] (kernels row_mean, row_rstd and normalize in "
                                 "kernels/layernorm/layernorm.cu): kernel fault"),
              std::string::npos)
        << console.str();
    EXPECT_NE(
        report::junit_xml(run).find("(kernels row_mean, row_rstd and normalize in kernels/layernorm/layernorm.cu)"),
        std::string::npos);

    CaseResult single = r;
    single.launches.resize(1);
    single.launches[0].label.clear();
    EXPECT_EQ(report::kernels_text(single), "kernel row_mean in kernels/layernorm/layernorm.cu");
}

TEST(MultiLaunch, TheSuiteChoosesWhenTheL2IsEmptied)
{
    Project project;
    EXPECT_EQ(suite::load_suite(project.suite_file).timing.l2_flush, suite::L2Flush::each_launch);
    const std::string text = read_file(project.suite_file);
    write_file(project.suite_file, text + "timing: {l2_flush: variant}\n");
    EXPECT_EQ(suite::load_suite(project.suite_file).timing.l2_flush, suite::L2Flush::each_variant);
    write_file(project.suite_file, text + "timing: {l2_flush: sometimes}\n");
    try {
        suite::load_suite(project.suite_file);
        FAIL() << "an unknown l2_flush loaded";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("timing.l2_flush: 'sometimes' is neither `launch`"), std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("passes.yaml:"), std::string::npos) << e.what();
    }
}

TEST(MultiLaunch, ABaselineLaunchTheRunLacksIsNotAFailureButAMissingFigureOfALaunchItHasIs)
{
    Project project;
    const auto s = suite::load_suite(project.suite_file);
    auto results = compile::run_static_tier(s, {"sm_90"}, nullptr);
    CaseResult& three = const_cast<CaseResult&>(result_of(results, "three"));
    compare::BaselineFile baseline;
    for (const auto& m : three.metrics)
        baseline.rows.push_back({three.variant, three.params_text, m.name, m.value, {}, "static"});
    // A launch renamed since the baseline: its old rows stand for nothing the run has.
    baseline.rows.push_back({three.variant, three.params_text, "registers@renamed_kernel", 30, {}, "static"});
    compare::compare_case(three, s, &baseline, nullptr, "");
    for (const auto& v : three.verdicts) EXPECT_FALSE(verdict_fails(v.verdict)) << v.metric << ": " << v.message;

    // A figure of a launch the run has, missing from the run, is lost and fails.
    three.metrics.erase(std::remove_if(three.metrics.begin(), three.metrics.end(),
                                       [](const MetricValue& m) { return m.name == "registers@tile"; }),
                        three.metrics.end());
    compare::compare_case(three, s, &baseline, nullptr, "");
    const auto lost = std::find_if(three.verdicts.begin(), three.verdicts.end(),
                                   [](const MetricVerdict& v) { return v.metric == "registers@tile"; });
    ASSERT_NE(lost, three.verdicts.end());
    EXPECT_EQ(lost->verdict, Verdict::not_measured);
}

} // namespace multi_launch_test
