// A launch against the kernel's __launch_bounds__: the cubin's .maxntid (and .reqntid) read, a
// block larger than the bound refused by `harness check` and the static tier with the suite's file,
// line, field, kernel and bound, and `harness scaffold` writing the bound where the kernel declares
// one and a placeholder that `check` refuses where it does not.

#include "harness/compile/kernel_listing.hxx"
#include "harness/compile/launch_bounds.hxx"
#include "test_files.hxx"
#include "tool_output.hxx"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <string>

namespace launch_bounds_test {

using namespace harness;
namespace fs = std::filesystem;

namespace {

const char* kernels_text =
    R"(// Three copies: bounded to 128 threads, bounded and asking for 4 resident blocks, and unbounded.
extern "C" __global__ void __launch_bounds__(128) bounded(const float* in, float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}
extern "C" __global__ void __launch_bounds__(128, 4) bounded_min(const float* in, float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * in[i];
}
extern "C" __global__ void unbounded(const float* in, float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] + 1.0f;
}
)";

/// A suite that launches `bounded` with BLOCK threads over `blocks`.
std::string suite_text(const std::string& blocks)
{
    return fmt::format(R"yaml(suite: bounds
archs: [sm_90]
params:
  N: [4096]
  BLOCK: {}
reference: bounded
buffers:
  in: {{type: f32, count: N, init: uniform, seed: 1, min: -1, max: 1, role: in}}
  out: {{type: f32, count: N, init: zeros, role: out}}
variants:
  bounded:
    source: ../kernels/bounds.cu
    entry: bounded
    block: [BLOCK]
    grid: ["ceil_div(N, BLOCK)"]
    args: [in, out, {{i32: N}}]
)yaml",
                       blocks);
}

/// A project folder holding kernels/bounds.cu.
struct Project {
    TempDir dir{"harness-bounds-test"};
    fs::path suite = dir.path / "suites" / "bounds.yaml";
    Project()
    {
        fs::create_directories(dir.path / ".git");
        write_file(dir.path / "kernels" / "bounds.cu", kernels_text);
    }
};

} // namespace

TEST(LaunchBounds, TheCubinGivesEachKernelsMaxntid)
{
    Project p;
    std::vector<std::string> notes;
    const auto kernels = compile::list_kernels(p.dir.path / "kernels" / "bounds.cu", "sm_90", std::nullopt, notes);
    ASSERT_EQ(kernels.size(), 3u);
    for (const auto& k : kernels) {
        if (k.name == "unbounded") {
            EXPECT_FALSE(k.max_threads.has_value());
            EXPECT_EQ(compile::launch_bounds_text(k), "");
            continue;
        }
        ASSERT_TRUE(k.max_threads.has_value()) << k.name;
        EXPECT_EQ(*k.max_threads, (std::array<int, 3>{128, 1, 1})) << k.name;
        EXPECT_FALSE(k.required_threads.has_value());
        if (k.name == "bounded_min") {
            EXPECT_EQ(k.min_blocks, 4);
            EXPECT_EQ(compile::launch_bounds_text(k),
                      "at most 128 threads a block, at least 4 resident blocks asked (__launch_bounds__(128, 4))");
        } else {
            EXPECT_FALSE(k.min_blocks.has_value());
            EXPECT_EQ(compile::launch_bounds_text(k), "at most 128 threads a block (__launch_bounds__(128))");
        }
    }
}

TEST(LaunchBounds, ProblemsNameTheBoundAndReqntidTakesOneShape)
{
    compile::KernelResources k;
    k.max_threads = std::array<int, 3>{128, 1, 1};
    EXPECT_FALSE(compile::launch_bound_problem(k, "k", {128, 1, 1}));
    EXPECT_FALSE(compile::launch_bound_problem(k, "k", {64, 2, 1}));
    const auto over = compile::launch_bound_problem(k, "k", {16, 16, 1});
    ASSERT_TRUE(over);
    EXPECT_NE(over->find("a block of 256 threads (16 x 16 x 1) is more than kernel k allows: its __launch_bounds__ "
                         "declares at most 128 threads a block (.maxntid 128, 1, 1)"),
              std::string::npos)
        << *over;
    compile::KernelResources r;
    r.required_threads = std::array<int, 3>{64, 2, 1};
    EXPECT_FALSE(compile::launch_bound_problem(r, "r", {64, 2, 1}));
    const auto other = compile::launch_bound_problem(r, "r", {128, 1, 1});
    ASSERT_TRUE(other);
    EXPECT_NE(other->find("requires blocks of exactly 64 x 2 x 1 threads (.reqntid 64, 2, 1)"), std::string::npos)
        << *other;
    EXPECT_FALSE(compile::launch_bound_problem(compile::KernelResources{}, "free", {1024, 1, 1}));
}

TEST(LaunchBounds, MinBlocksIsReadFromThePtxOfItsEntry)
{
    const std::string ptx = ".visible .entry first(\n\t.param .u64 a\n)\n.maxntid 128, 1, 1\n{\n ret;\n}\n"
                            ".visible .entry second(\n\t.param .u64 a\n)\n.maxntid 256, 1, 1\n.minnctapersm 3\n{\n}\n";
    EXPECT_FALSE(compile::declared_min_blocks(ptx, "first").has_value());
    EXPECT_EQ(compile::declared_min_blocks(ptx, "second"), 3);
    EXPECT_FALSE(compile::declared_min_blocks(ptx, "sec").has_value());
    EXPECT_FALSE(compile::declared_min_blocks("", "second").has_value());
}

TEST(LaunchBounds, ABlockLargerThanTheBoundIsRefusedByCheckAndTheStaticTier)
{
    Project p;
    const std::string text = suite_text("[128, 256]");
    write_file(p.suite, text);
    // The line and column of `block:` in the suite, as the message must name them.
    const std::size_t at = text.find("    block: [BLOCK]");
    const int line = static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n')) + 1;
    const std::string where = fmt::format("bounds.yaml:{}:12: variants.bounded.block: at N=4096 BLOCK=256: a block of "
                                          "256 threads (256 x 1 x 1) is more than kernel bounded allows: its "
                                          "__launch_bounds__ declares at most 128 threads a block (.maxntid 128, 1, 1)",
                                          line);

    auto o = run_tool_captured({"check", "--no-cache", p.suite.string()});
    EXPECT_EQ(o.code, 2) << o.out << o.err;
    EXPECT_NE(o.err.find(where), std::string::npos) << o.out << o.err;

    o = run_tool_captured(
        {"run", "--static", "--no-ci", "--no-cache", "--out", (p.dir.path / "reports").string(), p.suite.string()});
    EXPECT_EQ(o.code, 2) << o.out << o.err;
    EXPECT_NE(o.err.find(where), std::string::npos) << o.out << o.err;

    // Within the bound, both pass.
    write_file(p.suite, suite_text("[64, 128]"));
    o = run_tool_captured({"check", "--no-cache", p.suite.string()});
    EXPECT_EQ(o.code, 0) << o.out << o.err;
    o = run_tool_captured(
        {"run", "--static", "--no-ci", "--no-cache", "--out", (p.dir.path / "reports").string(), p.suite.string()});
    EXPECT_EQ(o.code, 0) << o.out << o.err;
}

TEST(LaunchBounds, ScaffoldWritesTheBoundOrAPlaceholderThatCheckRefuses)
{
    Project p;
    const fs::path skeleton = p.dir.path / "suites" / "skeleton.yaml";
    auto o = run_tool_captured(
        {"scaffold", (p.dir.path / "kernels" / "bounds.cu").string(), "-o", skeleton.string(), "--arch", "sm_90"});
    ASSERT_EQ(o.code, 0) << o.err;
    EXPECT_NE(o.out.find("at most 128 threads a block, at least 4 resident blocks asked (__launch_bounds__(128, 4))"),
              std::string::npos)
        << o.out;
    const std::string text = read_file(skeleton);
    const auto block_of = [&](const std::string& variant) {
        const std::size_t at = text.find("  " + variant + ":\n");
        EXPECT_NE(at, std::string::npos) << text;
        const std::size_t block = text.find("    block: ", at);
        return text.substr(block, text.find('\n', block) - block);
    };
    EXPECT_TRUE(block_of("bounded").starts_with("    block: [128]   # the most the kernel's __launch_bounds__ allows;"))
        << block_of("bounded");
    EXPECT_TRUE(block_of("bounded_min")
                    .starts_with("    block: [128]   # the most the kernel's __launch_bounds__ "
                                 "allows (4 blocks per SM asked)"))
        << block_of("bounded_min");
    EXPECT_TRUE(block_of("unbounded").starts_with("    block: [FILL_IN]   # threads per block"))
        << block_of("unbounded");
    EXPECT_NE(text.find("grid: [FILL_IN]   # blocks, e.g. ceil_div(N, 128)"), std::string::npos) << text;

    o = run_tool_captured({"check", skeleton.string()});
    EXPECT_EQ(o.code, 2);
    EXPECT_NE(o.err.find("variants.unbounded.block[0]: still a placeholder ('FILL_IN')"), std::string::npos) << o.err;
    EXPECT_EQ(o.err.find("variants.bounded.block"), std::string::npos) << o.err;
}

} // namespace launch_bounds_test
