// GPU tests: run real suites through the isolated runner. Skipped, with the reason, without a GPU.

#include "harness/compile/compile_suite.hxx"
#include "harness/run/gpu_session.hxx"
#include "harness/run/isolated_runner.hxx"
#include "harness/suite/sweep.hxx"
#include "test_paths.hxx"

#include <gtest/gtest.h>

using namespace harness;

namespace {

std::optional<run::DeviceInfo> gpu()
{
    static std::string why;
    static const auto info = run::probe_device(0, &why);
    if (!info) std::cerr << "no GPU: " << why << "\n";
    return info;
}

#define REQUIRE_GPU()                                                                                         \
    if (!gpu()) GTEST_SKIP() << "no usable GPU on this machine"

std::vector<CaseResult> run_suite(suite::Suite& s, double case_timeout_s)
{
    const auto compiled = compile::compile_suite_in_child(s, gpu()->arch, nullptr);
    EXPECT_TRUE(compiled.errors.empty());
    run::IsolatedRunConfig config;
    config.case_timeout_s = case_timeout_s;
    return run::run_isolated(s, suite::expand_cases(s), compiled.modules, config, {});
}

const CaseResult& find(const std::vector<CaseResult>& results, const std::string& variant, const std::string& params)
{
    for (const auto& r : results)
        if (r.variant == variant && r.params_text == params) return r;
    throw std::runtime_error("no case " + variant + " " + params);
}

} // namespace

TEST(GpuRun, PlantedFaultsFailOnlyTheirOwnCases)
{
    REQUIRE_GPU();
    auto s = suite::load_suite(repo_root() / "tests" / "suites" / "planted_faults.yaml");
    s.timing.budget_s = 0.05;
    const auto results = run_suite(s, 5.0);
    ASSERT_EQ(results.size(), 10u);
    for (const std::string n : {"N=1000", "N=4096"}) {
        EXPECT_EQ(find(results, "scale", n).status, CaseStatus::passed);
        EXPECT_EQ(find(results, "scale_again", n).status, CaseStatus::passed) << find(results, "scale_again", n).message;
        const auto& oob = find(results, "out_of_bounds", n);
        EXPECT_EQ(oob.status, CaseStatus::fault);
        EXPECT_NE(oob.message.find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos) << oob.message;
        const auto& spin = find(results, "spin", n);
        EXPECT_EQ(spin.status, CaseStatus::timeout);
        EXPECT_NE(spin.message.find("did not finish within 5 s"), std::string::npos) << spin.message;
        const auto& wrong = find(results, "wrong", n);
        EXPECT_EQ(wrong.status, CaseStatus::failed_verification);
        EXPECT_NE(wrong.message.find("first at index"), std::string::npos) << wrong.message;
    }
    EXPECT_GE(*find(results, "scale_again", "N=4096").metric("time_samples"), 10.0);
}

TEST(GpuRun, GemmVariantsVerifyAndReportResources)
{
    REQUIRE_GPU();
    auto s = suite::load_suite(repo_root() / "suites" / "gemm.yaml");
    s.params = {{"N", {100, 256}}};
    s.timing.budget_s = 0.05;
    const auto results = run_suite(s, 30.0);
    for (const auto& r : results) {
        EXPECT_EQ(r.status, CaseStatus::passed) << r.variant << " " << r.params_text << ": " << r.message;
        EXPECT_GT(r.metric("time_median").value_or(0), 0.0);
        if (s.find_variant(r.variant)->is_builtin()) continue;  // a library call has no kernel resources
        EXPECT_GT(r.metric("registers").value_or(0), 0.0);
        EXPECT_GT(r.metric("theoretical_occupancy").value_or(0), 0.0);
        EXPECT_LE(r.metric("theoretical_occupancy").value_or(2), 1.0);
        EXPECT_FALSE(r.occupancy_limiter.empty());
        // The driver and our occupancy calculator agree (a disagreement is noted in the message).
        EXPECT_EQ(r.message.find("occupancy calculator says"), std::string::npos) << r.message;
    }
    EXPECT_EQ(find(results, "tiled32", "N=256").metric("static_shared_bytes"), 2.0 * 32 * 32 * 4);
}
