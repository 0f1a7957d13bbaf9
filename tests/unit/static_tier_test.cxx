#include "harness/compile/static_tier.hxx"
#include "harness/suite/suite.hxx"
#include "test_paths.hxx"

#include <gtest/gtest.h>

namespace static_tier_test {

using namespace harness;

namespace {

const CaseResult& find(const std::vector<CaseResult>& results, const std::string& variant, const std::string& arch)
{
    for (const auto& r : results)
        if (r.variant == variant && r.arch == arch) return r;
    throw std::runtime_error("no result for " + variant + " " + arch);
}

} // namespace

TEST(StaticTier, GemmResourcesAndOccupancyForEachArchitecture)
{
    auto s = suite::load_suite(repo_root() / "suites" / "gemm.yaml");
    s.params = {{"N", {1000}}};
    const auto results = compile::run_static_tier(s, {"sm_80", "sm_90"}, nullptr);
    ASSERT_EQ(results.size(), 2 * s.variants.size());
    for (const std::string arch : {"sm_80", "sm_90"}) {
        const auto& tiled32 = find(results, "tiled32", arch);
        EXPECT_EQ(tiled32.status, CaseStatus::passed) << tiled32.message;
        EXPECT_EQ(tiled32.metric("static_shared_bytes"), 2.0 * 32 * 32 * 4);
        EXPECT_GE(tiled32.metric("barriers").value_or(0), 1.0);
        EXPECT_GT(tiled32.metric("registers").value_or(0), 8.0);
        // 1024-thread blocks: two fit in 64 warp slots at most.
        EXPECT_LE(tiled32.metric("blocks_per_sm").value_or(99), 2.0);
        const auto& naive = find(results, "naive", arch);
        EXPECT_EQ(naive.metric("static_shared_bytes"), 0.0);
        EXPECT_EQ(naive.metric("spill_store_bytes"), 0.0);
        EXPECT_GT(naive.metric("theoretical_occupancy").value_or(0), 0.0);
        EXPECT_FALSE(occupancy_limiter_text(naive.occupancy_limiter).empty());
    }
}

TEST(StaticTier, UnknownArchitectureIsBadInput)
{
    auto s = suite::load_suite(repo_root() / "suites" / "gemm.yaml");
    EXPECT_THROW(compile::run_static_tier(s, {"sm_42"}, nullptr), Error);
}

} // namespace static_tier_test
