// GPU tests: run real suites through the isolated runner. Skipped, with the reason, without a GPU.

#include "harness/compile/kernel_cache.hxx"
#include "harness/core/arch_limits.hxx"
#include "harness/core/child_process.hxx"
#include "harness/core/error.hxx"
#include "harness/core/metrics.hxx"
#include "harness/pipeline/run_suite.hxx"
#include "harness/run/gpu_session.hxx"
#include "harness/run/isolated_runner.hxx"
#include "harness/suite/sweep.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace gpu_run_test {

using namespace harness;

namespace {

std::optional<run::DeviceInfo> gpu()
{
    static std::string why;
    static const auto info = run::probe_device(0, &why);
    if (!info) std::cerr << "no GPU: " << why << "\n";
    return info;
}

#define REQUIRE_GPU()                                                                                                  \
    if (!gpu()) GTEST_SKIP() << "no usable GPU on this machine"

std::vector<CaseResult> run_suite(suite::Suite& s, double case_timeout_s, run::RunSettings options = {})
{
    options.timeout_s = case_timeout_s;
    auto results = pipeline::run_suite_gpu(s, *gpu(), run::resolve_settings(options, s), nullptr).results;
    for (const auto& r : results) EXPECT_NE(r.status, CaseStatus::compile_error) << r.variant << ": " << r.message;
    return results;
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
    s.params = {{"N", {4096}}}; // one point: each fault and hang costs a fresh worker
    s.timing.budget_s = 0.05;
    const auto results = run_suite(s, 2.0);
    ASSERT_EQ(results.size(), 5u);
    for (const std::string n : {"N=4096"}) {
        // Timed but not yet profiled when the next case faulted (a worker times a group of cases,
        // then profiles them): the next worker ran it again, counters included.
        EXPECT_EQ(find(results, "scale", n).status, CaseStatus::passed);
        EXPECT_EQ(find(results, "scale", n).metric("global_ld_sectors"), 4096.0 * 4 / 32);
        EXPECT_EQ(find(results, "scale_again", n).status, CaseStatus::passed)
            << find(results, "scale_again", n).message;
        const auto& oob = find(results, "out_of_bounds", n);
        EXPECT_EQ(oob.status, CaseStatus::fault);
        EXPECT_NE(oob.message.find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos) << oob.message;
        const auto& spin = find(results, "spin", n);
        EXPECT_EQ(spin.status, CaseStatus::timeout);
        EXPECT_NE(spin.message.find("did not finish within 2 s"), std::string::npos) << spin.message;
        const auto& wrong = find(results, "wrong", n);
        EXPECT_EQ(wrong.status, CaseStatus::failed_verification);
        EXPECT_NE(wrong.message.find("first at index"), std::string::npos) << wrong.message;
    }
    EXPECT_GE(*find(results, "scale_again", "N=4096").metric("time_samples"), 10.0);
}

// An argument the kernel's parameter does not take stops the run as bad input before any launch.
TEST(GpuRun, AnArgumentOfTheWrongSizeIsRefusedBeforeAnyLaunch)
{
    REQUIRE_GPU();
    auto s = suite::load_suite(repo_root() / "suites" / "memory.yaml");
    s.params = {{"N", {4096}}};
    s.variants[1].launches[0].args[3].scalar_type = suite::ElementType::i64; // `int n` takes 4 bytes
    try {
        pipeline::run_suite_gpu(s, *gpu(), run::resolve_settings({}, s), nullptr);
        ADD_FAILURE() << "the run went ahead";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::bad_input);
        EXPECT_NE(std::string(e.what()).find("variants.grid_stride.args[3]: {i64: N} is 8 bytes, but parameter 3 of "
                                             "kernel vector_add_grid_stride is 4 bytes"),
                  std::string::npos)
            << e.what();
    }
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
        if (!suite::runs_module_kernels(s.find_variant(r.variant)->kind)) continue; // a library call: no resources
        EXPECT_GT(r.metric("registers").value_or(0), 0.0);
        EXPECT_GT(r.metric("theoretical_occupancy").value_or(0), 0.0);
        EXPECT_LE(r.metric("theoretical_occupancy").value_or(2), 1.0);
        EXPECT_FALSE(occupancy_limiter_text(r.occupancy_limiter).empty());
        // The driver and our occupancy calculator agree (a disagreement is noted in the message).
        EXPECT_EQ(r.message.find("occupancy calculator says"), std::string::npos) << r.message;
    }
    EXPECT_EQ(find(results, "tiled32", "N=256").metric("static_shared_bytes"), 2.0 * 32 * 32 * 4);
}

// A sample's time is the sum of its kernels' GPU durations: no launch latency before a kernel, so
// a one-kernel case times below the CUDA-event time of the same launch. Every kernel of a sample is
// found (a variant of two kernels is not timed as one), under --hot too.
TEST(GpuRun, AWorkerConfinedToItsGpuSeesThatGpuAlone)
{
    REQUIRE_GPU();
    const auto open = [](const std::string& bus_id) {
        return nlohmann::json::parse(run_in_child("confined session", [&] {
            try {
                const run::GpuSession session(gpu()->ordinal, bus_id);
                return nlohmann::json{{"count", session.info().device_count},
                                      {"ordinal", session.info().ordinal},
                                      {"bus", session.info().pci_bus_id}}
                    .dump();
            } catch (const std::exception& e) {
                return nlohmann::json{{"error", e.what()}}.dump();
            }
        }));
    };
    const auto confined = open(gpu()->pci_bus_id);
    ASSERT_FALSE(confined.contains("error")) << confined.dump();
    EXPECT_EQ(confined.at("count"), 1);
    EXPECT_EQ(confined.at("ordinal"), 0);
    EXPECT_EQ(confined.at("bus"), gpu()->pci_bus_id);
    EXPECT_FALSE(gpu()->pci_bus_id.empty());
    // Another GPU than the one probed is refused, naming both.
    const auto wrong = open("0000:FE:1F.7");
    ASSERT_TRUE(wrong.contains("error")) << wrong.dump();
    EXPECT_NE(wrong.at("error").get<std::string>().find("not at 0000:FE:1F.7"), std::string::npos) << wrong.dump();
}

TEST(GpuRun, KernelDurationsLeaveOutTheGapsThatEventsCount)
{
    REQUIRE_GPU();
    auto s = suite::load_suite(repo_root() / "suites" / "reduce.yaml");
    s.params = {{"N", {1000, 1000003}}};
    s.timing.budget_s = 0.05;
    run::RunSettings events;
    events.time_source = run::TimeSource::events;
    events.profile = false;
    run::RunSettings kernels;
    kernels.profile = false;
    const auto by_events = run_suite(s, 30.0, events);
    const auto by_kernels = run_suite(s, 30.0, kernels);
    kernels.hot = true;
    const auto hot = run_suite(s, 30.0, kernels);
    ASSERT_EQ(by_events.size(), by_kernels.size());
    for (std::size_t i = 0; i < by_kernels.size(); ++i) {
        const auto& k = by_kernels[i];
        const auto& e = find(by_events, k.variant, k.params_text);
        ASSERT_EQ(k.status, CaseStatus::passed) << k.variant << " " << k.params_text << ": " << k.message;
        const double kernel_us = k.metric("time_median").value_or(0);
        const double event_us = e.metric("time_median").value_or(0);
        EXPECT_GT(kernel_us, 0.5) << k.variant << " " << k.params_text;
        // Two-kernel variants are not compared: each of their kernels starts with a cold L2 here
        // (as under Nsight Compute), the second one's input is in the L2 under events.
        if (s.find_variant(k.variant)->launches.size() == 1) {
            EXPECT_LT(kernel_us, event_us) << k.variant << " " << k.params_text;
        }
        EXPECT_GE(k.metric("time_samples").value_or(0), 10.0);
        EXPECT_EQ(k.message.find("timed with CUDA events"), std::string::npos) << k.message;
        const auto& h = find(hot, k.variant, k.params_text);
        EXPECT_GE(h.metric("time_samples").value_or(0), 10.0);
        EXPECT_GT(h.metric("time_median").value_or(0), 0.5) << h.variant << " " << h.params_text;
    }
    // At a million elements the cold two-kernel reduction costs more than the one-element kernel
    // at N = 1000: durations follow the work.
    EXPECT_GT(find(by_kernels, "sequential", "N=1000003").metric("time_median").value_or(0),
              find(by_kernels, "sequential", "N=1000").metric("time_median").value_or(0));
}

// f16 and bf16 variants read exactly the reference's inputs (round_to) and write its f32 result
// rounded once to their type: each passes within its type's floor, and the largest error is at
// most half a unit in the last place of values below 2 (|alpha x + y| <= 1.75).
TEST(GpuRun, HalfPrecisionVariantsVerifyAgainstAnF32Reference)
{
    REQUIRE_GPU();
    auto s = suite::load_suite(repo_root() / "tests" / "suites" / "half_types.yaml");
    s.timing.budget_s = 0.02;
    const auto results = run_suite(s, 30.0);
    ASSERT_EQ(results.size(), 6u);
    for (const auto& r : results)
        EXPECT_EQ(r.status, CaseStatus::passed) << r.variant << " " << r.params_text << ": " << r.message;
    for (const std::string n : {"N=1000", "N=65536"}) {
        EXPECT_LE(find(results, "f16", n).metric("verify_max_abs_error").value_or(1), 0x1p-11) << n;
        EXPECT_LE(find(results, "bf16", n).metric("verify_max_abs_error").value_or(1), 0x1p-8) << n;
        // Rounding happened: the narrow outputs are not the f32 ones.
        EXPECT_GT(find(results, "f16", n).metric("verify_max_abs_error").value_or(0), 0.0) << n;
        EXPECT_GT(find(results, "bf16", n).metric("verify_max_abs_error").value_or(0), 0.0) << n;
    }
}

// The same with FP8 (the suite lists sm_89 and sm_90): half a unit in the last place below 2 is
// 2^-4 for e4m3 and 2^-3 for e5m2.
TEST(GpuRun, Fp8VariantsVerifyAgainstAnF32Reference)
{
    REQUIRE_GPU();
    if (const ArchLimits* limits = find_arch_limits(gpu()->arch); limits && limits->sm_version < 89)
        GTEST_SKIP() << gpu()->arch << " has no FP8";
    auto s = suite::load_suite(repo_root() / "tests" / "suites" / "fp8_types.yaml");
    s.timing.budget_s = 0.02;
    const auto results = run_suite(s, 30.0);
    ASSERT_EQ(results.size(), 6u);
    for (const auto& r : results)
        EXPECT_EQ(r.status, CaseStatus::passed) << r.variant << " " << r.params_text << ": " << r.message;
    for (const std::string n : {"N=1000", "N=65536"}) {
        EXPECT_LE(find(results, "e4m3", n).metric("verify_max_abs_error").value_or(1), 0x1p-4) << n;
        EXPECT_LE(find(results, "e5m2", n).metric("verify_max_abs_error").value_or(1), 0x1p-3) << n;
        EXPECT_GT(find(results, "e4m3", n).metric("verify_max_abs_error").value_or(0), 0.0) << n;
        EXPECT_GT(find(results, "e5m2", n).metric("verify_max_abs_error").value_or(0), 0.0) << n;
    }
}

// The figures that gate a build, on a size where they follow from the access pattern alone
// (1024 x 1024 fp32, 32 x 8 blocks): one store request per warp row, 32 sectors for a column of
// the naive transpose where 4 would do, and 32 wavefronts for a column read of the unpadded tile.
// Counters must repeat exactly from one run to the next, and excess must name the line behind it.
TEST(GpuProfile, TransposeCountersAreExactRepeatAndNameTheirSourceLines)
{
    REQUIRE_GPU();
    auto s = suite::load_suite(repo_root() / "suites" / "transpose.yaml");
    s.params = {{"M", {1024}}, {"N", {1024}}};
    s.timing.budget_s = 0.02;
    const auto first = run_suite(s, 30.0);
    const auto second = run_suite(s, 30.0);

    constexpr double warp_rows = 1024.0 * 1024.0 / 32.0; // requests / instructions per access
    const auto top_hotspot = [](const CaseResult& r, const std::string& metric) -> const Hotspot* {
        for (const auto& h : r.hotspots)
            if (h.metric == metric) return &h;
        return nullptr;
    };

    const auto& naive = find(first, "naive", "M=1024 N=1024");
    ASSERT_EQ(naive.status, CaseStatus::passed) << naive.message;
    EXPECT_EQ(naive.metric("global_st_requests"), warp_rows);
    EXPECT_EQ(naive.metric("global_st_sectors"), 32 * warp_rows);
    EXPECT_EQ(naive.metric("global_ld_sectors"), 4 * warp_rows);
    EXPECT_EQ(naive.metric("excess_global_sectors"), 28 * warp_rows);
    const auto* store = top_hotspot(naive, "excess_global_sectors");
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->access, "global store");
    EXPECT_NE(store->file.find("transpose_naive.cu"), std::string::npos) << store->file;
    EXPECT_EQ(store->line, 18) << "the line that writes out[]";
    EXPECT_EQ(store->excess, 28 * warp_rows);

    const auto& smem = find(first, "smem", "M=1024 N=1024");
    ASSERT_EQ(smem.status, CaseStatus::passed) << smem.message;
    EXPECT_EQ(smem.metric("shared_wavefronts_ideal"), 2 * warp_rows);
    EXPECT_EQ(smem.metric("shared_wavefronts"), 33 * warp_rows) << "32 per column read, 1 per row write";
    EXPECT_EQ(smem.metric("excess_shared_wavefronts"), 31 * warp_rows);
    EXPECT_EQ(smem.metric("excess_global_sectors"), 0.0);
    const auto* conflict = top_hotspot(smem, "excess_shared_wavefronts");
    ASSERT_NE(conflict, nullptr);
    EXPECT_EQ(conflict->access, "shared load");
    EXPECT_NE(conflict->file.find("transpose_smem.cu"), std::string::npos) << conflict->file;
    EXPECT_EQ(conflict->line, 28) << "the line that reads a column of the tile";

    const auto& padded = find(first, "smem_padded", "M=1024 N=1024");
    ASSERT_EQ(padded.status, CaseStatus::passed) << padded.message;
    EXPECT_EQ(padded.metric("excess_shared_wavefronts"), 0.0);
    EXPECT_EQ(padded.metric("excess_global_sectors"), 0.0);
    EXPECT_EQ(padded.metric("shared_wavefronts"), 2 * warp_rows);
    EXPECT_EQ(top_hotspot(padded, "excess_shared_wavefronts"), nullptr);
    // Achieved occupancy is measured, not counted: present and plausible, not exact.
    EXPECT_GT(padded.metric("achieved_occupancy").value_or(0), 0.2);
    EXPECT_LE(padded.metric("achieved_occupancy").value_or(2), 1.0);

    for (const auto& a : first) {
        const auto& b = find(second, a.variant, a.params_text);
        for (const auto& m : metric_table()) {
            if (m.stability != Stability::exact) continue;
            EXPECT_EQ(a.metric(std::string(m.name)), b.metric(std::string(m.name)))
                << a.variant << " " << a.params_text << " " << m.name << " differs between two runs";
        }
    }
}

// With the counter cache warm, the cases' noisy counters are measured together, each case's buffers
// made and freed in its turn: the figures must be what each case measured alone, within the gate's
// own tolerances, so the buffers' upload and the L2 emptying stay out of every case's ranges.
TEST(GpuProfile, CasesWithCachedCountersMeasureTheirNoisyOnesTogetherAsAlone)
{
    REQUIRE_GPU();
    TempDir dir;
    const compile::CompileCache cache(dir.path / "cache");
    auto s = suite::load_suite(repo_root() / "suites" / "transpose.yaml");
    s.params = {{"M", {1024, 2048}}, {"N", {2048}}};
    s.timing.budget_s = 0.02;
    run::RunSettings options;
    options.timeout_s = 30.0;
    options.counter_cache = true;
    const auto alone = pipeline::run_suite_gpu(s, *gpu(), run::resolve_settings(options, s), &cache).results;
    const auto together = pipeline::run_suite_gpu(s, *gpu(), run::resolve_settings(options, s), &cache).results;
    ASSERT_EQ(alone.size(), 6u);
    ASSERT_EQ(together.size(), alone.size());

    std::size_t batches = 0;
    for (const auto& a : alone) {
        ASSERT_EQ(a.status, CaseStatus::passed) << a.variant << " " << a.params_text << ": " << a.message;
        EXPECT_EQ(a.cost.profile.batched, 0u) << "nothing was cached for " << a.variant << " " << a.params_text;
        const auto& b = find(together, a.variant, a.params_text);
        ASSERT_EQ(b.status, CaseStatus::passed) << b.message;
        EXPECT_FALSE(b.reused_metrics.empty()) << b.variant << " " << b.params_text;
        EXPECT_EQ(b.cost.profile.batched, 1u) << b.variant << " " << b.params_text << " was measured alone";
        batches += b.cost.profile.batches;
        for (const auto& m : metric_table()) {
            if (m.stability != Stability::exact) continue;
            EXPECT_EQ(a.metric(std::string(m.name)), b.metric(std::string(m.name)))
                << a.variant << " " << a.params_text << " " << m.name;
        }
        const auto within = [&](const char* metric, double rel, double floor) {
            const auto x = a.metric(metric), y = b.metric(metric);
            ASSERT_TRUE(x && y) << metric << " missing for " << a.variant << " " << a.params_text;
            EXPECT_LE(std::abs(*y - *x), std::max(rel * *x, floor))
                << a.variant << " " << a.params_text << " " << metric << ": " << *x << " alone, " << *y << " together";
        };
        within("dram_read_bytes", 0.05, 1048576);
        within("dram_write_bytes", 0.10, 2097152);
        within("achieved_occupancy", 0.0, 0.1);
    }
    EXPECT_EQ(batches, 1u) << "six cases of one suite, one group: one measurement";
}

// Kernels built by nvcc (tests/kernels/module_kernels.cu, into <build>/test-modules by CMake) run
// from two fatbins, a cubin and PTX, verify against NVRTC's build of the same source, and a module's
// line table names the source line of its hotspot.
TEST(GpuRun, NvccModulesVerifyAndNameTheirSourceLines)
{
    REQUIRE_GPU();
    if (gpu()->arch != "sm_90")
        GTEST_SKIP() << "the cubin and PTX fixtures are built for sm_90; this GPU is " << gpu()->arch;
    ::setenv("HARNESS_TEST_MODULE_DIR", HARNESS_TEST_MODULE_DIR, 0); // a copied build may point elsewhere
    auto s = suite::load_suite(repo_root() / "tests" / "suites" / "nvcc_modules.yaml");
    s.timing.budget_s = 0.05;
    const auto results = run_suite(s, 30.0);
    ASSERT_EQ(results.size(), 24u);
    for (const auto& r : results)
        EXPECT_EQ(r.status, CaseStatus::passed) << r.variant << " " << r.params_text << ": " << r.message;
    const auto& scattered = find(results, "scattered", "N=65536 BLOCK=256");
    ASSERT_EQ(scattered.status, CaseStatus::passed) << scattered.message;
    EXPECT_GT(scattered.metric("excess_global_sectors").value_or(0), 0.0);
    const Hotspot* hotspot = nullptr;
    for (const auto& h : scattered.hotspots)
        if (h.metric == "excess_global_sectors" && !hotspot) hotspot = &h;
    ASSERT_NE(hotspot, nullptr);
    // nvcc recorded the absolute path; reports show it relative to the suite's project (tests/).
    EXPECT_EQ(hotspot->file, "kernels/module_kernels.cu");
    EXPECT_EQ(hotspot->line, 35) << "the line that reads and writes element j";
    EXPECT_FALSE(hotspot->snippet.empty());
    for (const std::string variant : {"fatbin", "fatbin_ptx", "ptx"})
        EXPECT_EQ(find(results, variant, "N=65536 BLOCK=256").metric("excess_global_sectors"), 0.0) << variant;
}

} // namespace gpu_run_test
