// The static tier's predicted access figures: each case's launch rebuilt as the runner launches it,
// the predicted_* totals per launch and summed, the worst accesses named by line, and "not
// predicted" with the reason for addresses that depend on loaded data.

#include "harness/compile/predicted_accesses.hxx"
#include "harness/compile/static_tier.hxx"
#include "harness/core/metrics.hxx"
#include "harness/suite/suite.hxx"
#include "test_paths.hxx"

#include <gtest/gtest.h>

namespace predicted_accesses_test {

using namespace harness;

namespace {

const CaseResult& find(const std::vector<CaseResult>& results, const std::string& variant)
{
    for (const auto& r : results)
        if (r.variant == variant) return r;
    throw std::runtime_error("no result for " + variant);
}

} // namespace

// The runner allocates the buffers the variant passes, in the suite's order: a variant that skips
// one of the suite's buffers has the next one at the skipped one's place.
TEST(PredictedAccesses, LaunchShapeIsTheRunnersLaunch)
{
    const auto s = suite::load_suite(repo_root() / "tests" / "suites" / "benign_accesses.yaml");
    const suite::VariantSpec& gather = *s.find_variant("gather");
    const suite::Bindings point = {{"N", 1048576}};
    const analysis::LaunchShape shape = compile::predicted_launch_shape(s, gather, 0, point);
    EXPECT_EQ(shape.grid, (std::array<std::uint32_t, 3>{4096, 1, 1}));
    EXPECT_EQ(shape.block, (std::array<std::uint32_t, 3>{256, 1, 1}));
    ASSERT_EQ(shape.args.size(), 4u);
    EXPECT_EQ(shape.args[0].value, analysis::model_buffer_address(0)); // in
    EXPECT_EQ(shape.args[1].value, analysis::model_buffer_address(1)); // index
    EXPECT_EQ(shape.args[2].value, analysis::model_buffer_address(2)); // out
    EXPECT_EQ(shape.args[3].value, 1048576u);
    const analysis::LaunchShape histogram = compile::predicted_launch_shape(s, *s.find_variant("histogram"), 0, point);
    ASSERT_EQ(histogram.args.size(), 4u);
    EXPECT_EQ(histogram.args[1].value, analysis::model_buffer_address(1)); // out: index is not allocated
    EXPECT_EQ(histogram.args[3].value, 64u);
}

// The naive transpose's store touches a sector per lane; the padded tile has no excess at all.
TEST(PredictedAccesses, TransposeFiguresAndWorstLine)
{
    auto s = suite::load_suite(repo_root() / "suites" / "transpose.yaml");
    s.params = {{"M", {1000}}, {"N", {1000}}};
    const auto results = compile::run_static_tier(s, {"sm_90"}, nullptr);
    const CaseResult& naive = find(results, "naive");
    ASSERT_TRUE(naive.not_predicted.empty()) << naive.not_predicted.front();
    EXPECT_EQ(naive.metric(metric::predicted_global_st_requests), 32000.0);
    EXPECT_EQ(naive.metric(metric::predicted_global_st_sectors), 1e6);
    EXPECT_NEAR(*naive.metric(metric::predicted_global_ld_sectors_per_request), 4.0, 0.2);
    EXPECT_GT(*naive.metric(metric::predicted_excess_global_sectors), 0.0);
    ASSERT_FALSE(naive.predicted_accesses.empty());
    const PredictedAccess& worst = naive.predicted_accesses.front();
    EXPECT_EQ(worst.access, "global store");
    EXPECT_EQ(worst.buffer, "out");
    EXPECT_EQ(worst.file, "kernels/transpose/transpose_naive.cu");
    EXPECT_NE(worst.text().find("kernels/transpose/transpose_naive.cu:"), std::string::npos) << worst.text();
    EXPECT_NE(worst.text().find("global store out[]: 31.25 sectors per request, ideal 3.906 (predicted)"),
              std::string::npos)
        << worst.text();
    const CaseResult& padded = find(results, "smem_padded");
    EXPECT_EQ(padded.metric(metric::predicted_excess_global_sectors), 0.0);
    EXPECT_EQ(padded.metric(metric::predicted_excess_shared_wavefronts), 0.0);
    EXPECT_GT(find(results, "smem").metric(metric::predicted_excess_shared_wavefronts).value_or(0), 0.0);
}

// An address that is a loaded value is not predicted: no predicted_* figure at all, the reason
// naming the line; the variants beside it are predicted.
TEST(PredictedAccesses, GatherAndHistogramAreNotPredicted)
{
    const auto s = suite::load_suite(repo_root() / "tests" / "suites" / "benign_accesses.yaml");
    const auto results = compile::run_static_tier(s, {"sm_90"}, nullptr);
    for (const std::string variant : {"gather", "histogram"}) {
        const CaseResult& r = find(results, variant);
        EXPECT_EQ(r.status, CaseStatus::passed) << r.message;
        ASSERT_FALSE(r.not_predicted.empty()) << variant;
        EXPECT_NE(r.not_predicted.front().find("depends on"), std::string::npos) << r.not_predicted.front();
        EXPECT_NE(r.not_predicted.front().find("benign_accesses.cu:"), std::string::npos) << r.not_predicted.front();
        for (const auto& m : r.metrics) EXPECT_FALSE(is_predicted(m.name)) << variant << " has " << m.name;
    }
    EXPECT_TRUE(find(results, "grid_stride").metric(metric::predicted_excess_global_sectors).has_value());
}

// A variant of several launches: each launch's figures under its label, the variant's their sum.
TEST(PredictedAccesses, SeveralLaunchesArePredictedEachAndSummed)
{
    auto s = suite::load_suite(repo_root() / "suites" / "layernorm.yaml");
    const auto results = compile::run_static_tier(s, {"sm_90"}, nullptr);
    bool seen = false;
    for (const auto& r : results) {
        if (r.launches.size() < 2 || !r.not_predicted.empty()) continue;
        double sum = 0;
        for (const auto& l : r.launches) {
            const auto v = r.metric(launch_metric_name(metric::predicted_global_ld_sectors, l.label));
            ASSERT_TRUE(v) << r.variant << " " << l.label;
            sum += *v;
        }
        EXPECT_EQ(r.metric(metric::predicted_global_ld_sectors), sum) << r.variant;
        seen = true;
    }
    EXPECT_TRUE(seen) << "no layernorm case of several launches was predicted";
}

} // namespace predicted_accesses_test
