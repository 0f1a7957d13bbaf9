#include "harness/compile/compile_suite.hxx"
#include "harness/compile/static_tier.hxx"
#include "harness/core/error.hxx"
#include "harness/suite/compile_params.hxx"
#include "harness/suite/suite.hxx"
#include "test_files.hxx"

#include <gtest/gtest.h>

namespace compile_params_test {

using namespace harness;
using suite::Bindings;

namespace {

const std::set<std::string, std::less<>> params = {"TILE", "N", "PAD"};

} // namespace

TEST(CompileParams, OnlyWholeIdentifiersThatNameParametersAreFound)
{
    EXPECT_EQ(suite::param_names_in("<TILE, 8, TILES, N>", params), (std::vector<std::string>{"TILE", "N"}));
    EXPECT_EQ(suite::param_names_in("<TILE*2, TILE>", params), (std::vector<std::string>{"TILE"}));
    // Numbers with suffixes or exponents, and quoted text, hold no names.
    EXPECT_TRUE(suite::param_names_in("1e5 0x1N 2.5f \"TILE\" 'N'", params).empty());
    EXPECT_TRUE(suite::param_names_in("float", params).empty());
}

TEST(CompileParams, SubstitutionReplacesParametersAndKeepsEverythingElse)
{
    const Bindings point = {{"TILE", 32}, {"N", -4}};
    EXPECT_EQ(suite::substitute_params("TILE * 2 + TILES", point), "32 * 2 + TILES");
    EXPECT_EQ(suite::substitute_params("(N)", point), "(-4)");
    EXPECT_EQ(suite::substitute_params("\"TILE\" 0x1N", point), "\"TILE\" 0x1N");
    // The kernel's own name is never a parameter, even when it is spelt like one.
    EXPECT_EQ(suite::resolve_entry("TILE<TILE, 8>", point), "TILE<32, 8>");
    EXPECT_EQ(suite::resolve_entry("ns::k<float, N>", point), "ns::k<float, -4>");
    EXPECT_EQ(suite::resolve_entry("plain", point), "plain");
}

namespace {

// A kernel whose shared memory depends on a template argument and a define, so the static tier
// shows which configuration each case compiled.
const char* kernel = R"(#ifndef PAD
#error PAD must be defined
#endif
template <int TILE>
__global__ void tile_copy(float* out)
{
    __shared__ float tile[TILE][TILE + PAD];
    tile[threadIdx.y][threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.y * TILE + threadIdx.x] = tile[threadIdx.x][threadIdx.y];
}
__global__ void fixed(float* out) { out[threadIdx.x] = 1.0f; }
)";

const char* suite_text = R"(suite: sweep
archs: [sm_90]
params:
  N: [64, 128]
  TILE: [8, 16]
  PAD: [0, 1]
reference: fixed
buffers:
  out: {type: f32, count: N*N, role: out}
variants:
  fixed:
    source: ../kernels/tile.cu
    defines: {PAD: "0"}
    entry: fixed
    block: [TILE]
    grid: [1]
    args: [out]
  tiled:
    source: ../kernels/tile.cu
    defines: {PAD: PAD, UNUSED: "TILES+1"}
    entry: tile_copy<TILE>
    block: [8, 8]
    grid: [1]
    args: [out]
)";

struct Project {
    TempDir dir{"harness-compile-params"};
    std::filesystem::path suite_file = dir.path / "suites" / "sweep.yaml";
    Project()
    {
        write_file(dir.path / "kernels" / "tile.cu", kernel);
        write_file(suite_file, suite_text);
    }
};

} // namespace

TEST(CompileParams, TheLoaderFindsTheParametersThatReachTheCompilerInSuiteOrder)
{
    Project p;
    const auto s = suite::load_suite(p.suite_file);
    EXPECT_TRUE(s.find_variant("fixed")->compile_params.empty());
    // TILE comes before PAD in `params:`, whatever order entry and defines name them in.
    EXPECT_EQ(s.find_variant("tiled")->compile_params, (std::vector<std::string>{"TILE", "PAD"}));
    const Bindings point = {{"N", 64}, {"TILE", 16}, {"PAD", 1}};
    EXPECT_EQ(suite::compile_key(*s.find_variant("fixed"), point), "fixed");
    EXPECT_EQ(suite::compile_key(*s.find_variant("tiled"), point), "tiled[TILE=16 PAD=1]");
    EXPECT_EQ(suite::resolve_defines(*s.find_variant("tiled"), point).at("PAD"), "1");
    EXPECT_EQ(suite::resolve_defines(*s.find_variant("tiled"), point).at("UNUSED"), "TILES+1");
}

TEST(CompileParams, EachConfigurationIsCompiledOnceAndCasesUseTheirOwn)
{
    Project p;
    const auto s = suite::load_suite(p.suite_file);
    const auto units = compile::compile_units(s);
    // fixed once; tiled once per (TILE, PAD), not once per N.
    ASSERT_EQ(units.size(), 5u);
    EXPECT_EQ(units[0].key, "fixed");

    const auto compiled = compile::compile_suite(s, "sm_90", nullptr, 2);
    EXPECT_TRUE(compiled.errors.empty());
    ASSERT_EQ(compiled.modules.size(), 5u);
    const auto* m = compiled.find(*s.find_variant("tiled"), {{"N", 128}, {"TILE", 16}, {"PAD", 1}});
    ASSERT_NE(m, nullptr);
    EXPECT_TRUE(m->lowered_names.contains("tile_copy<16>"));

    // The static tier reads each case's own module: shared memory is TILE x (TILE + PAD) floats.
    const auto results = compile::run_static_tier(s, {"sm_90"}, nullptr);
    int checked = 0;
    for (const auto& r : results) {
        if (r.variant != "tiled") continue;
        ASSERT_EQ(r.status, CaseStatus::passed) << r.message;
        const double tile = r.params.at("TILE"), pad = r.params.at("PAD");
        EXPECT_EQ(r.metric("static_shared_bytes"), 4 * tile * (tile + pad)) << r.params_text;
        ++checked;
    }
    EXPECT_EQ(checked, 8);
}

TEST(CompileParams, AConfigurationThatFailsFailsOnlyItsOwnCases)
{
    Project p;
    std::string text = suite_text;
    text.replace(text.find("TILE: [8, 16]"), 13, "TILE: [8, 128]"); // 128 x 129 floats: over 48 KiB
    write_file(p.suite_file, text);
    const auto s = suite::load_suite(p.suite_file);
    const auto compiled = compile::compile_suite(s, "sm_90", nullptr);
    EXPECT_EQ(compiled.modules.size(), 3u);
    ASSERT_EQ(compiled.errors.size(), 2u);
    EXPECT_TRUE(compiled.errors.contains("tiled[TILE=128 PAD=0]"));
    EXPECT_NE(compiled.error(*s.find_variant("tiled"), {{"N", 64}, {"TILE", 128}, {"PAD", 1}}), nullptr);
    EXPECT_EQ(compiled.error(*s.find_variant("tiled"), {{"N", 64}, {"TILE", 8}, {"PAD", 1}}), nullptr);
}

TEST(CompileParams, KernelsIncludeTheToolkitsHeadersWithoutAnIncludePath)
{
    TempDir dir{"harness-toolkit-headers"};
    write_file(dir.path / "k.cu", R"(#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <mma.h>
#include <cooperative_groups.h>
#include <cub/block/block_reduce.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cuda/std/cstdint>
#include <cuda/barrier>
template <int BLOCK>
__global__ void block_sum(const __nv_bfloat16* in, float* out)
{
    using Reduce = cub::BlockReduce<float, BLOCK>;
    __shared__ typename Reduce::TempStorage storage;
    const float total = Reduce(storage).Sum(__bfloat162float(in[threadIdx.x]));
    if (threadIdx.x == 0) *out = total + __half2float(__float2half(0.0f));
}
)");
    compile::CompileRequest request;
    request.source = dir.path / "k.cu";
    request.arch = "sm_90";
    request.entries = {"block_sum<128>"};
    ASSERT_FALSE(compile::toolkit_include_dirs().empty());
    const auto module = compile::compile(request);
    EXPECT_TRUE(module.lowered_names.contains("block_sum<128>"));

    // A header with host code says what to do instead.
    write_file(dir.path / "k.cu", "#include <cub/cub.cuh>\n__global__ void k() {}\n");
    request.entries = {"k"};
    try {
        compile::compile(request);
        ADD_FAILURE() << "<cub/cub.cuh> compiled under NVRTC";
    } catch (const compile::CompileError& e) {
        EXPECT_NE(std::string(e.what()).find("NVRTC cannot compile"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("<cub/block/block_reduce.cuh>"), std::string::npos);
    }
}

TEST(CompileParams, ADefineThatIsAnExpressionOfParametersIsPassedAsItsNumber)
{
    const Bindings point = {{"TILE", 32}, {"N", 1000}};
    // As text, BLOCK_ROWS would be `32 / 4`, and `256 / BLOCK_ROWS` in a kernel 256 / 32 / 4 = 2.
    EXPECT_EQ(suite::resolve_define("TILE / 4", point), "8");
    EXPECT_EQ(suite::resolve_define("ceil_div(N, TILE) * 2 - 1", point), "63");
    EXPECT_EQ(suite::resolve_define("-TILE", point), "-32");
    EXPECT_EQ(suite::resolve_define("64 / 4", point), "16");
    // Other text reaches the compiler as written, parameters substituted.
    EXPECT_EQ(suite::resolve_define("float", point), "float");
    EXPECT_EQ(suite::resolve_define("TILES+1", point), "TILES+1");
    EXPECT_EQ(suite::resolve_define("TILE * sizeof(float)", point), "32 * sizeof(float)");
    EXPECT_EQ(suite::resolve_define("1e5", point), "1e5");
    EXPECT_EQ(suite::resolve_define("0x1F", point), "0x1F");
    EXPECT_EQ(suite::resolve_define("010", point), "010"); // C's octal 8, not ten
    EXPECT_EQ(suite::resolve_define("\"TILE / 4\"", point), "\"TILE / 4\"");
    EXPECT_FALSE(suite::define_expression("float", params));
    ASSERT_TRUE(suite::define_expression("TILE / 4", params));
    EXPECT_EQ(suite::define_expression("TILE / 4", params)->text(), "TILE / 4");
}

TEST(CompileParams, TheKernelSeesAnEvaluatedDefine)
{
    TempDir dir{"harness-define-expression"};
    // The shared array holds 256 / BLOCK_ROWS floats: 32 of them (128 bytes) at TILE = 32.
    write_file(dir.path / "kernels" / "rows.cu", R"(__global__ void rows(float* out)
{
    __shared__ float partial[256 / BLOCK_ROWS];
    partial[threadIdx.x % (256 / BLOCK_ROWS)] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = partial[(threadIdx.x + 1) % (256 / BLOCK_ROWS)];
}
)");
    const std::string text = R"(suite: rows
archs: [sm_90]
params:
  TILE: [32, 64]
reference: rows
buffers:
  out: {type: f32, count: 256, role: out}
variants:
  rows:
    source: ../kernels/rows.cu
    entry: rows
    defines: {BLOCK_ROWS: TILE / 4}
    block: [256]
    grid: [1]
    args: [out]
)";
    write_file(dir.path / "suites" / "rows.yaml", text);
    const auto s = suite::load_suite(dir.path / "suites" / "rows.yaml");
    EXPECT_EQ(suite::resolve_defines(s.variants[0], {{"TILE", 32}}).at("BLOCK_ROWS"), "8");
    const auto results = compile::run_static_tier(s, {"sm_90"}, nullptr);
    ASSERT_EQ(results.size(), 2u);
    for (const auto& r : results) {
        ASSERT_EQ(r.status, CaseStatus::passed) << r.message;
        EXPECT_EQ(r.metric("static_shared_bytes"), 4.0 * 256 / (r.params.at("TILE") / 4)) << r.params_text;
    }

    // An expression must have a value at every sweep point.
    std::string bad = text;
    bad.replace(bad.find("TILE / 4"), 8, "64 / (TILE - 64)");
    try {
        suite::parse_suite(bad, dir.path / "suites" / "rows.yaml");
        ADD_FAILURE() << "a define dividing by zero at TILE=64 loaded";
    } catch (const InputError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("rows.yaml:12:27: variants.rows.defines.BLOCK_ROWS: division by zero"), std::string::npos)
            << what;
        EXPECT_NE(what.find("TILE=64"), std::string::npos) << what;
    }
}

} // namespace compile_params_test
