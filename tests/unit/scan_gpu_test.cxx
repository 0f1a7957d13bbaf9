// The GPU scan on a GPU: the waves suite scanned in a worker process, with a wave cliff where the
// launch model predicts it. Skipped, with the reason, without a GPU.

#include "harness/compile/compile_suite.hxx"
#include "harness/pipeline/gpu_scan.hxx"
#include "harness/run/gpu_session.hxx"
#include "harness/suite/sweep.hxx"
#include "test_paths.hxx"

#include <gtest/gtest.h>
#include <iostream>

namespace scan_gpu_test {

using namespace harness;

namespace {

std::optional<run::DeviceInfo> gpu()
{
    static std::string why;
    static const auto info = run::probe_device(0, &why);
    if (!info) std::cerr << "no GPU: " << why << "\n";
    return info;
}

} // namespace

TEST(ScanGpu, WavesSuiteStepsAtTheModelsWaveBoundaries)
{
    if (!gpu()) GTEST_SKIP() << "no usable GPU on this machine";
    const auto s = suite::load_suite(repo_root() / "suites" / "waves_scan.yaml");
    const auto modules = compile::compile_suite(s, gpu()->arch, nullptr);
    ASSERT_TRUE(modules.errors.empty()) << modules.errors.begin()->second;
    std::vector<std::string> notes;
    const auto maps = pipeline::scan_suite_gpu(s, modules, *gpu(), run::resolve_settings({}, s), notes);
    for (const auto& n : notes) std::cout << n << "\n";
    ASSERT_EQ(maps.size(), 1u);
    const CliffMap& map = maps.front();
    EXPECT_EQ(map.figure, "time");
    EXPECT_EQ(map.x.size(), s.scanned_param()->values.size());
    ASSERT_FALSE(map.cliffs.empty());

    // The model's first boundary: one block past a full wave of SMs x 8 resident blocks.
    const double per_wave = static_cast<double>(gpu()->sm_count) * 8;
    const Cliff& first = map.cliffs.front();
    std::cout << "first cliff: " << first.x_before << " -> " << first.x_after << " " << first.depth << " "
              << first.explanation << "\n";
    EXPECT_LE(first.x_before, per_wave);
    EXPECT_GE(first.x_after, per_wave + 1);
    EXPECT_LE(first.x_after - first.x_before, 32.0) << "within two points of the boundary";
    EXPECT_EQ(first.cause, CliffCause::waves) << first.explanation;
    EXPECT_GT(first.depth, 0.5) << "one wave -> two: about twice the time";
}

} // namespace scan_gpu_test
