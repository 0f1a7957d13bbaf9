// The access model against figures derived by hand from the kernels' indexing: project kernels
// compiled by NVRTC to PTX here, evaluated at a launch; and hostile PTX, which must stay bounded.

#include "harness/analysis/access_model.hxx"
#include "harness/compile/nvrtc_compiler.hxx"
#include "harness/core/error.hxx"
#include "test_paths.hxx"

#include <chrono>
#include <fstream>
#include <gtest/gtest.h>
#include <memory>
#include <nvrtc.h>
#include <sstream>

namespace access_model_test {

using namespace harness;
using namespace harness::analysis;

namespace {

struct Ptx {
    std::string text;
    std::string lowered;
};

/// `source` (a file of the project, or the text itself) compiled by NVRTC for sm_90 with line
/// information, as the harness compiles; the PTX and the entry's lowered name.
Ptx compile_ptx(const std::string& source, const std::string& entry, bool is_text = false)
{
    std::string text = source, name = "inline.cu";
    if (!is_text) {
        std::ifstream in(repo_root() / source);
        std::stringstream ss;
        ss << in.rdbuf();
        text = ss.str();
        name = (repo_root() / source).string();
    }
    nvrtcProgram program = nullptr;
    EXPECT_EQ(nvrtcCreateProgram(&program, text.c_str(), name.c_str(), 0, nullptr, nullptr), NVRTC_SUCCESS);
    const std::unique_ptr<nvrtcProgram, void (*)(nvrtcProgram*)> guard(&program,
                                                                       [](nvrtcProgram* p) { nvrtcDestroyProgram(p); });
    nvrtcAddNameExpression(program, entry.c_str());
    std::vector<std::string> options = {"--gpu-architecture=sm_90", "-lineinfo", "-std=c++17",
                                        "--include-path=" + (repo_root() / "kernels").string()};
    for (const auto& dir : compile::toolkit_include_dirs()) options.push_back("--include-path=" + dir.string());
    std::vector<const char*> argv;
    for (const auto& o : options) argv.push_back(o.c_str());
    const nvrtcResult r = nvrtcCompileProgram(program, static_cast<int>(argv.size()), argv.data());
    std::size_t size = 0;
    nvrtcGetProgramLogSize(program, &size);
    std::string log(size, '\0');
    nvrtcGetProgramLog(program, log.data());
    EXPECT_EQ(r, NVRTC_SUCCESS) << log;
    Ptx ptx;
    nvrtcGetPTXSize(program, &size);
    ptx.text.resize(size);
    nvrtcGetPTX(program, ptx.text.data());
    while (!ptx.text.empty() && ptx.text.back() == '\0') ptx.text.pop_back();
    const char* lowered = nullptr;
    nvrtcGetLoweredName(program, entry.c_str(), &lowered);
    ptx.lowered = lowered ? lowered : entry;
    return ptx;
}

KernelArgument buffer(const std::string& name, std::size_t index)
{
    return {KernelArgument::Kind::buffer, name, model_buffer_address(index)};
}
KernelArgument i32(std::int32_t v)
{
    return {KernelArgument::Kind::scalar, std::to_string(v), static_cast<std::uint32_t>(v)};
}

KernelPrediction predict(const std::string& source, const std::string& entry, const LaunchShape& launch,
                         bool is_text = false)
{
    const Ptx ptx = compile_ptx(source, entry, is_text);
    const PtxModule module = parse_ptx(ptx.text, source);
    const PtxKernel* kernel = module.find(ptx.lowered);
    if (!kernel) throw std::runtime_error("no kernel " + ptx.lowered);
    return predict_accesses(module, *kernel, launch);
}

LaunchShape launch_of(std::array<std::uint32_t, 3> grid, std::array<std::uint32_t, 3> block,
                      std::vector<KernelArgument> args)
{
    LaunchShape l;
    l.grid = grid;
    l.block = block;
    l.args = std::move(args);
    return l;
}

const AccessPrediction& access(const KernelPrediction& p, AccessKind kind, const std::string& buffer, int order = 0)
{
    for (const auto& a : p.accesses)
        if (a.kind == kind && a.buffer == buffer && a.order == order) return a;
    throw std::runtime_error("no " + std::string(to_string(kind)) + " of " + buffer);
}

std::string reasons(const KernelPrediction& p)
{
    std::string s;
    for (const auto& r : p.reasons) s += r + "\n";
    return s;
}

} // namespace

// c[i] = a[i] + b[i] over N = 1000003: ceil(N / 32) = 31251 warps with lanes in range, one request
// each per access; ceil(4N / 32) = 125001 sectors; every sector one the bytes need.
TEST(AccessModel, VectorAddIsCoalescedAtFourSectorsPerRequest)
{
    const int n = 1000003;
    const auto p = predict(
        "kernels/memory/vector_add.cu", "vector_add",
        launch_of({(n + 255) / 256, 1, 1}, {256, 1, 1}, {buffer("a", 0), buffer("b", 1), buffer("c", 2), i32(n)}));
    ASSERT_TRUE(p.complete) << reasons(p);
    EXPECT_TRUE(p.exact) << p.sampling;
    EXPECT_EQ(p.totals.global_ld_requests, 62502);
    EXPECT_EQ(p.totals.global_ld_sectors, 250002);
    EXPECT_EQ(p.totals.global_st_requests, 31251);
    EXPECT_EQ(p.totals.global_st_sectors, 125001);
    EXPECT_EQ(p.totals.global_sectors, p.totals.global_sectors_ideal);
    const auto& store = access(p, AccessKind::global_store, "c");
    EXPECT_EQ(store.line, 9);
    EXPECT_NE(store.file.find("vector_add.cu"), std::string::npos);
    EXPECT_EQ(access(p, AccessKind::global_load, "a").requests, 31251);
    EXPECT_EQ(access(p, AccessKind::global_load, "b").sectors, 125001);
}

// The naive transpose at M = N = 1000, block 32 x 8, 4 rows per thread: each store's 32 lanes
// write a column, 32 sectors per full request; every element its own sector: 10^6 store sectors
// for 32000 requests (blocks of the last row run one of their four rows).
TEST(AccessModel, NaiveTransposeStoresAColumnAt32SectorsPerRequest)
{
    const int m = 1000, n = 1000;
    const auto p = predict("kernels/transpose/transpose_naive.cu", "transpose_naive<32, 8>",
                           launch_of({32, 32, 1}, {32, 8, 1}, {buffer("in", 0), buffer("out", 1), i32(m), i32(n)}));
    ASSERT_TRUE(p.complete) << reasons(p);
    EXPECT_TRUE(p.exact) << p.sampling;
    EXPECT_EQ(p.totals.global_ld_requests, 32000);
    EXPECT_EQ(p.totals.global_ld_sectors, 125000);
    EXPECT_EQ(p.totals.global_st_requests, 32000);
    EXPECT_EQ(p.totals.global_st_sectors, 1000000);
    EXPECT_EQ(p.totals.global_sectors_ideal, 250000);
    EXPECT_EQ(p.totals.shared_wavefronts, 0);
    // The loop over four rows is unrolled: four stores, in order, at the line of the loop's body.
    double ideal = 0;
    for (int order = 0; order < 4; ++order) {
        const auto& store = access(p, AccessKind::global_store, "out", order);
        EXPECT_EQ(store.line, 18);
        // Rows ty + j of each 32-row tile: 32 tiles of 8 rows for j = 0, 31 for the others (rows 1000 on are out).
        EXPECT_EQ(store.sectors, (order == 0 ? 256 : 248) * 1000);
        ideal += store.ideal_sectors;
    }
    EXPECT_EQ(ideal, 125000);
}

// Through a 32 x 32 tile of floats: a warp reads a column, all 32 lanes in one bank, so each load
// takes as many wavefronts as lanes: 10^6 over 32000 requests, against one each without conflicts.
TEST(AccessModel, UnpaddedTileColumnReadIsA32WayConflictAndPaddingRemovesIt)
{
    const int m = 1000, n = 1000;
    const auto args = std::vector{buffer("in", 0), buffer("out", 1), i32(m), i32(n)};
    const auto p = predict("kernels/transpose/transpose_smem.cu", "transpose_smem<32, 8>",
                           launch_of({32, 32, 1}, {32, 8, 1}, args));
    ASSERT_TRUE(p.complete) << reasons(p);
    EXPECT_EQ(p.totals.shared_wavefronts, 1032000);
    EXPECT_EQ(p.totals.shared_wavefronts_ideal, 64000);
    EXPECT_EQ(p.totals.global_st_sectors, 125000);
    // The first full-warp read: 32 ways.
    int full = 0;
    for (const auto& a : p.accesses)
        if (a.kind == AccessKind::shared_load && a.requests > 0) {
            EXPECT_GT(a.wavefronts / a.requests, 31.0) << a.line;
            ++full;
        }
    EXPECT_EQ(full, 4);

    const auto padded = predict("kernels/transpose/transpose_smem_padded.cu", "transpose_smem_padded<32, 8>",
                                launch_of({32, 32, 1}, {32, 8, 1}, args));
    ASSERT_TRUE(padded.complete) << reasons(padded);
    EXPECT_EQ(padded.totals.shared_wavefronts, 64000);
    EXPECT_EQ(padded.totals.shared_wavefronts_ideal, 64000);
}

// One float4 per thread: 512 bytes a warp, 16 sectors in one request; 250000 vectors over
// ceil(250000 / 32) = 7813 requests, plus the scalar tail's one request of one sector.
TEST(AccessModel, Float4CopyTakesSixteenSectorsInOneRequest)
{
    const int n = 1000003;
    const auto p =
        predict("kernels/memory/copy_float4.cu", "copy_float4",
                launch_of({(250001 + 255) / 256, 1, 1}, {256, 1, 1}, {buffer("in", 0), buffer("out", 1), i32(n)}));
    ASSERT_TRUE(p.complete) << reasons(p);
    EXPECT_EQ(p.totals.global_ld_requests, 7814);
    EXPECT_EQ(p.totals.global_ld_sectors, 125001);
    const auto& vector = access(p, AccessKind::global_load, "in");
    EXPECT_EQ(vector.bytes_per_lane, 16u);
    EXPECT_EQ(vector.requests, 7813);
    EXPECT_EQ(vector.sectors, 125000);
}

// A misaligned copy: in + 1 element, so each warp's 128 bytes straddle five sectors.
TEST(AccessModel, OneElementOffAddsASectorPerRequest)
{
    const int n = 4194304;
    const auto p =
        predict("kernels/memory/copy_offset.cu", "copy_offset",
                launch_of({n / 256, 1, 1}, {256, 1, 1}, {buffer("in", 0), buffer("out", 1), i32(n), i32(1)}));
    ASSERT_TRUE(p.complete) << reasons(p);
    EXPECT_EQ(p.totals.global_ld_requests, 131072);
    EXPECT_EQ(p.totals.global_ld_sectors, 655360);
    EXPECT_EQ(p.totals.global_sectors - p.totals.global_sectors_ideal, 131072);
}

// A gather through an index buffer and a histogram's atomics: their addresses depend on loaded
// data, so they are not predicted, saying so; the index load itself is.
TEST(AccessModel, DataDependentAddressesAreNotPredictedAndSayWhy)
{
    const std::string source = R"(
extern "C" __global__ void gather(const int* idx, const float* in, float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[idx[i]];
}
extern "C" __global__ void histogram(const int* data, unsigned* bins, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[data[i] & 255], 1u);
}
)";
    const auto g = predict(
        source, "gather",
        launch_of({4, 1, 1}, {256, 1, 1}, {buffer("idx", 0), buffer("in", 1), buffer("out", 2), i32(1024)}), true);
    EXPECT_FALSE(g.complete);
    const auto& index_load = access(g, AccessKind::global_load, "idx");
    EXPECT_TRUE(index_load.predicted);
    EXPECT_EQ(index_load.sectors, 128);
    bool found = false;
    for (const auto& a : g.accesses)
        if (!a.predicted) {
            found = true;
            EXPECT_NE(a.reason.find("ld.global"), std::string::npos) << a.reason;
        }
    EXPECT_TRUE(found);
    EXPECT_TRUE(access(g, AccessKind::global_store, "out").predicted);

    const auto h = predict(source, "histogram",
                           launch_of({4, 1, 1}, {256, 1, 1}, {buffer("data", 0), buffer("bins", 1), i32(1024)}), true);
    EXPECT_FALSE(h.complete);
    bool atomic = false;
    for (const auto& a : h.accesses)
        if (a.opcode.starts_with("atom") || a.opcode.starts_with("red")) {
            atomic = true;
            EXPECT_FALSE(a.predicted);
            EXPECT_NE(a.reason.find("depends on"), std::string::npos) << a.reason;
        }
    EXPECT_TRUE(atomic);
}

// Shared-memory rules: 32-bit all lanes in distinct banks, 1; stride 2 words, 2 ways; all lanes on
// one word, a broadcast, 1; 64-bit contiguous, two half-warps; 128-bit contiguous, four quarters.
TEST(AccessModel, SharedWavefrontRulesFollowTheHardware)
{
    std::array<std::uint64_t, 32> a{};
    const std::uint32_t all = ~0u;
    for (int l = 0; l < 32; ++l) a[l] = 4u * l;
    EXPECT_EQ(shared_wavefronts(a, all, 4).actual, 1u);
    for (int l = 0; l < 32; ++l) a[l] = 8u * l;
    EXPECT_EQ(shared_wavefronts(a, all, 4).actual, 2u);
    EXPECT_EQ(shared_wavefronts(a, all, 8).actual, 2u);
    EXPECT_EQ(shared_wavefronts(a, all, 8).ideal, 2u);
    for (int l = 0; l < 32; ++l) a[l] = 128u * l;
    EXPECT_EQ(shared_wavefronts(a, all, 4).actual, 32u);
    EXPECT_EQ(shared_wavefronts(a, 1u, 4).actual, 1u);
    a.fill(64);
    EXPECT_EQ(shared_wavefronts(a, all, 4).actual, 1u);
    for (int l = 0; l < 32; ++l) a[l] = 16u * l;
    EXPECT_EQ(shared_wavefronts(a, all, 16).actual, 4u);
    EXPECT_EQ(shared_wavefronts(a, all, 16).ideal, 4u);

    for (int l = 0; l < 32; ++l) a[l] = 4096u + 4u * l;
    EXPECT_EQ(global_sectors(a, all, 4).actual, 4u);
    for (int l = 0; l < 32; ++l) a[l] = 4100u + 4u * l;
    EXPECT_EQ(global_sectors(a, all, 4).actual, 5u);
    EXPECT_EQ(global_sectors(a, all, 4).ideal, 4u);
    // Two rows of a 16 x 16 block reading one element each: two sectors, and no excess.
    for (int l = 0; l < 32; ++l) a[l] = l < 16 ? 4096u : 8192u;
    EXPECT_EQ(global_sectors(a, all, 4).actual, 2u);
    EXPECT_EQ(global_sectors(a, all, 4).ideal, 2u);
}

// gemm through 32 x 32 shared tiles at N = 256: every warp loads one tile row of A and of B per
// step, 128 contiguous bytes, 4 sectors; 64 blocks x 32 warps x 8 steps x 2 = 32768 requests.
// Shared reads of A's row are broadcasts and of B's row conflict-free: no excess anywhere.
TEST(AccessModel, TiledGemmIsCoalescedAndConflictFree)
{
    const int n = 256;
    const auto p = predict(
        "kernels/gemm/gemm_smem_tiled.cu", "gemm_smem_tiled<32>",
        launch_of({8, 8, 1}, {32, 32, 1}, {buffer("A", 0), buffer("B", 1), buffer("C", 2), i32(n), i32(n), i32(n)}));
    ASSERT_TRUE(p.complete) << reasons(p);
    EXPECT_EQ(p.totals.global_ld_requests, 32768);
    EXPECT_EQ(p.totals.global_ld_sectors, 131072);
    EXPECT_EQ(p.totals.global_st_sectors, 8192);
    EXPECT_EQ(p.totals.global_sectors, p.totals.global_sectors_ideal);
    EXPECT_GT(p.totals.shared_wavefronts, 0);
    EXPECT_EQ(p.totals.shared_wavefronts, p.totals.shared_wavefronts_ideal);

    // The naive kernel's warp is two rows of 16 threads: A's element is two sectors, B's row two.
    const auto naive = predict(
        "kernels/gemm/gemm_naive.cu", "gemm_naive",
        launch_of({16, 16, 1}, {16, 16, 1}, {buffer("A", 0), buffer("B", 1), buffer("C", 2), i32(n), i32(n), i32(n)}));
    ASSERT_TRUE(naive.complete) << reasons(naive);
    EXPECT_EQ(naive.totals.global_ld_requests, 1048576);
    EXPECT_EQ(naive.totals.global_ld_sectors, 2097152);
    EXPECT_EQ(naive.totals.global_sectors, naive.totals.global_sectors_ideal);
}

namespace {

const char* header = ".version 9.0\n.target sm_90\n.address_size 64\n";

std::string parse_error(const std::string& text)
{
    try {
        parse_ptx(text, "hostile.ptx");
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::bad_input);
        return e.what();
    }
    return "";
}

} // namespace

// Interleaved addressing, index = 2 * stride * tid over 256 threads: at stride s the active lanes
// hit one bank in 32 / (2s) ways, so per access of the tree (two loads and a store, at s = 1 ..
// 128) the warps take 8+8+8+8+8+4+2+1 = 47 wavefronts against 4+2+1+1+1+1+1+1 = 12: 3 x 35 = 105
// excess per block, 26880 over the 256 blocks of N = 65536 (the GPU's figure for this launch).
TEST(AccessModel, InterleavedReductionHasBankConflictsOfTheTree)
{
    const int n = 65536;
    const auto p = predict("kernels/reduce/reduce_interleaved_strided.cu", "reduce_interleaved_strided<256>",
                           launch_of({256, 1, 1}, {256, 1, 1}, {buffer("in", 0), buffer("partials", 1), i32(n)}));
    ASSERT_TRUE(p.complete) << reasons(p);
    EXPECT_TRUE(p.exact) << p.sampling;
    EXPECT_EQ(p.totals.shared_wavefronts - p.totals.shared_wavefronts_ideal, 26880);
    EXPECT_EQ(p.totals.global_ld_requests, 2048);
    EXPECT_EQ(p.totals.global_ld_sectors, 8192);
}

TEST(AccessModel, MalformedPtxIsBadInputNamingFileAndLine)
{
    EXPECT_NE(
        parse_error(std::string(header) + ".visible .entry k(\n.param .u64 p\n)\n{\nld.global.f32 %f1, [%rd1;\n}\n")
            .find("hostile.ptx:8:"),
        std::string::npos);
    EXPECT_NE(parse_error(std::string(header) + ".visible .entry k()\n{\nbra $L_nowhere;\n}\n").find("hostile.ptx:6:"),
              std::string::npos);
    EXPECT_NE(parse_error(std::string(header) + ".visible .entry k()\n{\nret;\n").find("never closed"),
              std::string::npos);
    EXPECT_NE(parse_error(std::string(header) + "/* open").find("hostile.ptx:4:"), std::string::npos);
    EXPECT_NE(parse_error(std::string("\x01garbage")).find("hostile.ptx:1:"), std::string::npos);
    EXPECT_NE(parse_error(std::string(header) + ".visible .entry k(.param .u64 p[99999999999])\n{\nret;\n}\n")
                  .find("hostile.ptx:4:"),
              std::string::npos);
}

// ptxas writes a negative offset as "+-": [%rd88+-256] (layernorm's row loops); "-" alone too.
TEST(AccessModel, NegativeAddressOffsetsParse)
{
    const std::string text = std::string(header) +
                             ".visible .entry k(\n.param .u64 p\n)\n{\n.reg .b64 %rd<3>;\n.reg .f32 %f<3>;\n"
                             "ld.global.f32 %f1, [%rd1+-256];\nld.global.f32 %f2, [%rd2-8];\nret;\n}\n";
    const analysis::PtxModule m = analysis::parse_ptx(text, "negative.ptx");
    ASSERT_EQ(m.kernels.size(), 1u);
    std::vector<std::int64_t> offsets;
    for (const auto& i : m.kernels[0].instructions)
        for (const auto& o : i.operands)
            if (o.kind == analysis::OperandKind::address) offsets.push_back(o.value);
    EXPECT_EQ(offsets, (std::vector<std::int64_t>{-256, -8}));
}

TEST(AccessModel, HugePtxIsRefusedBeforeItIsRead)
{
    PtxLimits limits;
    limits.max_bytes = 1 << 20;
    const std::string text(2 << 20, ' ');
    EXPECT_THROW(parse_ptx(text, "huge.ptx", limits), Error);
    limits.max_bytes = 64u << 20;
    limits.max_instructions = 1000;
    std::string body = std::string(header) + ".visible .entry k()\n{\n";
    for (int i = 0; i < 2000; ++i) body += "add.s32 %r1, %r1, 1;\n";
    body += "}\n";
    try {
        parse_ptx(body, "huge.ptx", limits);
        FAIL() << "accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("more than 1000 instructions"), std::string::npos) << e.what();
    }
}

// A branch to itself, and a loop whose exit is never taken: the budget ends the warp, the kernel
// is not predicted and says why, in bounded time.
TEST(AccessModel, SelfBranchingLoopsEndOnTheBudget)
{
    const std::string text = std::string(header) + R"(
.visible .entry spin(.param .u64 p)
{
    ld.param.u64 %rd1, [p];
    cvta.to.global.u64 %rd2, %rd1;
$L_self:
    st.global.u32 [%rd2], 0;
    bra.uni $L_self;
}
)";
    const PtxModule module = parse_ptx(text, "spin.ptx");
    EvaluationBudget budget;
    budget.instructions_per_warp = 100000;
    const auto start = std::chrono::steady_clock::now();
    const auto p = predict_accesses(module, module.kernels.at(0),
                                    launch_of({1000, 1000, 1}, {1024, 1, 1}, {buffer("p", 0)}), budget);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
    EXPECT_FALSE(p.complete);
    ASSERT_FALSE(p.reasons.empty());
    EXPECT_NE(p.reasons[0].find("budget"), std::string::npos) << p.reasons[0];
    EXPECT_EQ(p.warps_evaluated, 1u);
}

// The harness's own compilation keeps NVRTC's PTX beside the cubin, with the lines the model reads.
TEST(AccessModel, CompiledModulesKeepTheirPtx)
{
    compile::CompileRequest request;
    request.source = repo_root() / "kernels/memory/vector_add.cu";
    request.entries = {"vector_add"};
    const auto module = compile::compile(request);
    const PtxModule ptx = parse_ptx(module.ptx, request.source.string());
    const PtxKernel* kernel = ptx.find(module.lowered_names.at("vector_add"));
    ASSERT_NE(kernel, nullptr);
    EXPECT_EQ(kernel->params.size(), 4u);
    EXPECT_NE(ptx.file_name(1).find("vector_add.cu"), std::string::npos);
}

namespace {

/// The kernel `entry` of `text` predicted at `launch` twice: skipping loops that repeat, and
/// evaluating every iteration.
std::pair<KernelPrediction, KernelPrediction> with_and_without_skips(const std::string& text, const std::string& entry,
                                                                     const LaunchShape& launch)
{
    const Ptx ptx = compile_ptx(text, entry, true);
    const PtxModule module = parse_ptx(ptx.text, "loops.cu");
    const PtxKernel* kernel = module.find(ptx.lowered);
    if (!kernel) throw std::runtime_error("no kernel " + ptx.lowered);
    EvaluationBudget every;
    every.skip_loops = false;
    every.instructions_per_warp = 1u << 22;
    every.instructions_per_kernel = 1u << 28;
    return {predict_accesses(module, *kernel, launch), predict_accesses(module, *kernel, launch, every)};
}

void expect_same_figures(const KernelPrediction& skipped, const KernelPrediction& every)
{
    ASSERT_TRUE(every.complete) << reasons(every);
    ASSERT_TRUE(skipped.complete) << reasons(skipped);
    EXPECT_EQ(skipped.totals, every.totals);
    ASSERT_EQ(skipped.accesses.size(), every.accesses.size());
    for (std::size_t i = 0; i < every.accesses.size(); ++i) {
        const auto &a = skipped.accesses[i], &b = every.accesses[i];
        EXPECT_EQ(a.requests, b.requests) << b.opcode << " at " << b.line;
        EXPECT_EQ(a.sectors, b.sectors) << b.opcode << " at " << b.line;
        EXPECT_EQ(a.ideal_sectors, b.ideal_sectors) << b.opcode << " at " << b.line;
        EXPECT_EQ(a.wavefronts, b.wavefronts) << b.opcode << " at " << b.line;
        EXPECT_EQ(a.ideal_wavefronts, b.ideal_wavefronts) << b.opcode << " at " << b.line;
    }
}

} // namespace

// A loop of 4096 iterations of arithmetic (the tiles kernel of suites/tiles_scan.yaml): skipped
// ahead after three, with the figures of evaluating every iteration, for a fraction of the work.
TEST(AccessModel, RepeatingLoopsAreSkippedWithTheFiguresOfEveryIteration)
{
    const auto launch = launch_of({9, 3, 1}, {256, 1, 1}, {buffer("out", 0), i32(2100), i32(4096)});
    std::ifstream in(repo_root() / "kernels/cliffs/tiles_padded_columns.cu");
    std::stringstream text;
    text << in.rdbuf();
    const auto [skipped, every] = with_and_without_skips(text.str(), "tiles_padded_columns", launch);
    expect_same_figures(skipped, every);
    EXPECT_GT(skipped.instructions_extrapolated, 0u) << skipped.sampling;
    EXPECT_LT(skipped.instructions_evaluated * 50, every.instructions_evaluated) << skipped.sampling;
    EXPECT_EQ(skipped.instructions_evaluated + skipped.instructions_extrapolated, every.instructions_evaluated);
}

// Loops whose accesses change from one iteration to the next: a bounds check that turns off part
// of the warp midway, a stride of 4 bytes (a new sector every 8 iterations), an index wrapped
// with `&` (not affine), a shared tile walked by rows and one by columns, a count-down loop. Each
// is skipped where its iterations provably repeat and evaluated where they may not: the figures
// are those of every iteration.
TEST(AccessModel, LoopsThatChangeMidwayKeepTheFiguresOfEveryIteration)
{
    const std::string text = R"(
extern "C" __global__ void loops(const float* in, float* out, int n, int k)
{
    __shared__ float tile[32][33];
    const int t = threadIdx.x, lane = t % 32;
    float s = 0.0f;
    for (int i = 0; i < k; ++i)                       // bounds check turning lanes off midway
        if (t + 32 * i < n) s += in[t + 32 * i];
    for (int i = 0; i < k; ++i) s += in[4 * t + i];    // 4 bytes a step: sectors change every 8
    for (int i = 0; i < k; ++i) s += in[(i & 7) * 64 + lane]; // wrapped: not affine
    for (int i = 0; i < 32; ++i) tile[i][lane] = s + i;       // rows
    __syncthreads();
    for (int i = 0; i < 32; ++i) s += tile[lane][i];          // columns (padded)
    for (int i = k; i > 0; i -= 3) s += in[i * 32 + lane];    // counting down
    out[t] = s;
}
)";
    for (const int k : {1, 2, 3, 5, 100, 257}) {
        const auto launch = launch_of({2, 1, 1}, {64, 1, 1}, {buffer("in", 0), buffer("out", 1), i32(1000), i32(k)});
        const auto [skipped, every] = with_and_without_skips(text, "loops", launch);
        SCOPED_TRACE("k = " + std::to_string(k));
        expect_same_figures(skipped, every);
        EXPECT_EQ(skipped.instructions_evaluated + skipped.instructions_extrapolated, every.instructions_evaluated);
        if (k == 257) {
            EXPECT_GT(skipped.instructions_extrapolated, 0u) << skipped.sampling;
        }
    }
}

// The project's GEMMs at N = 1001 (partial tiles at the edges, so the bounds checks change
// midway): the naive one's A walks 16 bytes an iteration (its sectors repeat every other
// iteration), the tiled one's loop loads and stores tiles through shared memory. Skipped, both
// give the figures of evaluating every iteration.
TEST(AccessModel, GemmLoopsAreSkippedWithTheFiguresOfEveryIteration)
{
    const std::uint32_t n = 1001, g = (n + 15) / 16;
    for (const auto& [file, entry] : {std::pair<std::string, std::string>{"kernels/gemm/gemm_naive.cu", "gemm_naive"},
                                      {"kernels/gemm/gemm_smem_tiled.cu", "gemm_smem_tiled<16>"}}) {
        SCOPED_TRACE(entry);
        std::ifstream in(repo_root() / file);
        std::stringstream text;
        text << in.rdbuf();
        const auto launch =
            launch_of({g, g, 1}, {16, 16, 1}, {buffer("a", 0), buffer("b", 1), buffer("c", 2), i32(n), i32(n), i32(n)});
        const auto [skipped, every] = with_and_without_skips(text.str(), entry, launch);
        expect_same_figures(skipped, every);
        EXPECT_LT(skipped.instructions_evaluated * 3, every.instructions_evaluated) << skipped.sampling;
    }
}

// A loop the model cannot skip (an index squared), long enough that the blocks sampled
// would need far more than the budget: the kernel is not predicted after the first block, saying
// how much it would need, having spent a small part of the budget.
TEST(AccessModel, AKernelFarPastTheBudgetStopsAfterTheFirstBlock)
{
    const std::string text = R"(
extern "C" __global__ void wrapped(const float* in, float* out, int k)
{
    float s = 0.0f;
    for (int i = 0; i < k; ++i) s += in[(i * i) % 1024 * 32 + threadIdx.x % 32];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
)";
    const Ptx ptx = compile_ptx(text, "wrapped", true);
    const PtxModule module = parse_ptx(ptx.text, "wrapped.cu");
    EvaluationBudget budget;
    budget.instructions_per_warp = 1u << 22;
    budget.instructions_per_kernel = 1u << 20;
    const auto launch = launch_of({100, 100, 1}, {64, 1, 1}, {buffer("in", 0), buffer("out", 1), i32(10000)});
    const auto p = predict_accesses(module, *module.find(ptx.lowered), launch, budget);
    EXPECT_FALSE(p.complete) << p.sampling;
    ASSERT_FALSE(p.reasons.empty());
    EXPECT_NE(p.reasons[0].find("the 25 blocks sampled would need about"), std::string::npos) << p.reasons[0];
    EXPECT_LT(p.instructions_evaluated, budget.instructions_per_kernel / 2);
}

} // namespace access_model_test
