// `harness scaffold`: the kernels of a source file (NVRTC) and of an nvcc-built fatbin listed with
// their parameters, a suite skeleton written for them, `harness check` naming every placeholder
// left by file, line and field, and passing once the test fills them in.

#include "harness/compile/kernel_listing.hxx"
#include "harness/pipeline/suite_skeleton.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"
#include "tool_output.hxx"

#include <filesystem>
#include <gtest/gtest.h>
#include <string>
#include <thread>

using namespace harness;
namespace fs = std::filesystem;

namespace {

std::string replaced(std::string text, const std::string& from, const std::string& to)
{
    for (std::size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size())
        text.replace(at, from.size(), to);
    return text;
}

/// The skeleton with every placeholder a test can answer filled in.
std::string filled(std::string text)
{
    text = replaced(text, "description: FILL_IN", "description:");
    text = replaced(text, "N: [FILL_IN]", "N: [1000, 4096]");
    text = replaced(text, "count: FILL_IN", "count: N");
    text = replaced(text, "grid: [FILL_IN]", "grid: [\"ceil_div(N, 256)\"]");
    text = replaced(text, "{i32: FILL_IN}", "{i32: N}");
    return text;
}

} // namespace

TEST(KernelListing, DeclarationsGiveNamesAndTypesPastLaunchBoundsAndComments)
{
    const std::string source = R"(// a kernel
extern "C" __global__ void __launch_bounds__(256)
scale(const float* __restrict__ in, /* the output */ float *out, int n, __half factor)
{
}
template <int B> __global__ void tiled(float* x) {}
)";
    const auto parameters = compile::declared_parameters(source, "scale");
    ASSERT_TRUE(parameters.has_value());
    ASSERT_EQ(parameters->size(), 4u);
    EXPECT_EQ((*parameters)[0].name, "in");
    EXPECT_EQ((*parameters)[0].type, "const float*");
    EXPECT_TRUE((*parameters)[0].pointer);
    EXPECT_TRUE((*parameters)[0].const_pointee);
    EXPECT_EQ((*parameters)[0].pointee, "float");
    EXPECT_EQ((*parameters)[1].name, "out");
    EXPECT_FALSE((*parameters)[1].const_pointee);
    EXPECT_EQ((*parameters)[2].type, "int");
    EXPECT_FALSE((*parameters)[2].pointer);
    EXPECT_EQ((*parameters)[3].type, "__half");
    EXPECT_EQ(pipeline::element_type_for((*parameters)[3].type), "f16");
    EXPECT_EQ(pipeline::element_type_for("const unsigned int"), "u32");
    EXPECT_FALSE(pipeline::element_type_for("float4").has_value());
    EXPECT_FALSE(compile::declared_parameters(source, "missing").has_value());
}

TEST(SuiteSkeleton, AKernelSourceBecomesASuiteThatChecksOnceFilledIn)
{
    TempDir dir;
    fs::create_directories(dir.path / "kernels");
    fs::create_directories(dir.path / ".git");
    fs::copy_file(repo_root() / "kernels/memory/vector_add.cu", dir.path / "kernels/vector_add.cu");
    const fs::path suite = dir.path / "suites/vector_add.yaml";

    std::vector<std::string> notes;
    const auto kernels = compile::list_kernels(dir.path / "kernels/vector_add.cu", "sm_90", std::nullopt, notes);
    ASSERT_EQ(kernels.size(), 1u);
    EXPECT_EQ(kernels[0].signature, "vector_add(const float* a, const float* b, float* c, int n)");
    EXPECT_GT(kernels[0].registers, 0);

    auto o = run_tool_captured(
        {"scaffold", (dir.path / "kernels/vector_add.cu").string(), "-o", suite.string(), "--arch", "sm_90"});
    ASSERT_EQ(o.code, 0) << o.err;
    EXPECT_NE(o.out.find("vector_add(const float* a, const float* b, float* c, int n)"), std::string::npos);
    const std::string text = read_file(suite);
    EXPECT_NE(text.find("a: {type: f32, count: FILL_IN, init: uniform, seed: 1"), std::string::npos) << text;
    EXPECT_NE(text.find("c: {type: f32, count: FILL_IN, init: zeros, role: out}"), std::string::npos) << text;
    EXPECT_NE(text.find("args: [a, b, c, {i32: FILL_IN}]"), std::string::npos) << text;

    // Not twice without --force.
    EXPECT_EQ(run_tool_captured({"scaffold", (dir.path / "kernels/vector_add.cu").string(), "-o", suite.string()}).code,
              2);

    // check names every placeholder, by file, line and field, before anything else.
    o = run_tool_captured({"check", suite.string()});
    EXPECT_EQ(o.code, 2);
    EXPECT_NE(o.err.find("7 placeholders left to fill in"), std::string::npos) << o.err;
    EXPECT_NE(o.err.find("vector_add.yaml:15:7: params.N[0]: still a placeholder"), std::string::npos) << o.err;
    EXPECT_NE(o.err.find("variants.vector_add.args[3].i32: still a placeholder"), std::string::npos) << o.err;

    write_file(suite, filled(text));
    o = run_tool_captured({"check", suite.string()});
    EXPECT_EQ(o.code, 0) << o.out << o.err;
    EXPECT_NE(o.out.find("vector_add               ok"), std::string::npos) << o.out;
}

TEST(SuiteSkeleton, AnNvccFatbinBecomesASuiteThatChecksOnceFilledIn)
{
    const fs::path fatbin = fs::path(HARNESS_TEST_MODULE_DIR) / "module_kernels.fatbin";
    if (!fs::exists(fatbin)) GTEST_SKIP() << "the nvcc-built test modules are not built: " << fatbin;
    TempDir dir;
    fs::create_directories(dir.path / "kernels");
    fs::create_directories(dir.path / ".git");
    // The source first: a module older than its source is stale.
    fs::copy_file(repo_root() / "tests/kernels/module_kernels.cu", dir.path / "kernels/module_kernels.cu");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    fs::copy_file(fatbin, dir.path / "kernels/module_kernels.fatbin");
    const fs::path suite = dir.path / "suites/module_kernels.yaml";

    auto o = run_tool_captured({"scaffold", (dir.path / "kernels/module_kernels.fatbin").string(), "--source",
                                (dir.path / "kernels/module_kernels.cu").string(), "-o", suite.string()});
    ASSERT_EQ(o.code, 0) << o.err;
    // Demangled, template arguments included, with the declaration's parameter names.
    EXPECT_NE(o.out.find("scale<256>(const float* in, float* out, int n)"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("copy_c(const float* in, float* out, int n)"), std::string::npos) << o.out;
    const std::string text = read_file(suite);
    EXPECT_NE(text.find("module: ../kernels/module_kernels.fatbin"), std::string::npos) << text;
    EXPECT_NE(text.find("entry: scale<256>"), std::string::npos) << text;
    EXPECT_NE(text.find("  scale_256:"), std::string::npos) << text;

    EXPECT_EQ(run_tool_captured({"check", suite.string()}).code, 2);
    write_file(suite, filled(text));
    o = run_tool_captured({"check", suite.string()});
    EXPECT_EQ(o.code, 0) << o.out << o.err;
    o = run_tool_captured({"run", "--static", "--no-ci", suite.string(), "--out", (dir.path / "reports").string()});
    EXPECT_EQ(o.code, 0) << o.out << o.err;
}
