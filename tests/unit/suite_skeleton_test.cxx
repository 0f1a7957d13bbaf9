// `harness scaffold`: the kernels of a source file (NVRTC) and of an nvcc-built fatbin listed with
// their parameters, a suite skeleton written for them, `harness check` naming every placeholder
// left by file, line and field, and passing once the test fills them in.

#include "harness/compile/kernel_listing.hxx"
#include "harness/pipeline/suite_skeleton.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"
#include "tool_output.hxx"

#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <set>
#include <string>
#include <thread>
#include <yaml-cpp/yaml.h>

namespace suite_skeleton_test {

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
    text = replaced(text, "block: [FILL_IN]", "block: [256]");
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
    EXPECT_NE(o.err.find("vector_add.yaml:16:7: params.N[0]: still a placeholder"), std::string::npos) << o.err;
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

namespace {

/// A kernel as a module may name it: a symbol is any bytes but NUL.
compile::ListedKernel kernel_named(const std::string& name)
{
    compile::ListedKernel k;
    k.symbol = k.name = name;
    k.signature = name + "(float* " + name + ", int)";
    k.registers = 8;
    k.parameters = {{name, "float*", 8, true, false, "float"}, {"arg1", "int\n" + name, 4, false, false, ""}};
    return k;
}

/// The variants of a skeleton as YAML reads them, failing the test where the skeleton holds more
/// top-level keys than a skeleton writes.
YAML::Node variants_of(const std::string& text)
{
    const YAML::Node root = YAML::Load(text);
    std::set<std::string> keys;
    for (const auto& entry : root) keys.insert(entry.first.Scalar());
    EXPECT_EQ(keys, (std::set<std::string>{"suite", "description", "params", "reference", "tolerance", "buffers",
                                           "variants"}))
        << text;
    return root["variants"];
}

} // namespace

TEST(SuiteSkeleton, NamesFromAModuleReadBackAsTheyAreAndAddNoLines)
{
    const std::string injecting = "\x1b]0;pw\x07\x1b[2Jk\ncompile: {timeout_s: 86400, memory_mib: 1048576}\n#Z";
    const std::vector<std::string> names = {injecting,
                                            "k\": x\n\"y",
                                            "a\\b\r\ncompile: {}",
                                            "tab\there # not a comment",
                                            "\xe2\x80\xae"
                                            "lrt",
                                            "scale<256, 4>",
                                            "ns::k"};
    pipeline::SkeletonRequest request;
    request.suite_name = "m";
    request.suite_file = "suites/m.yaml";
    request.kernel_file = "kernels/m.cubin";
    request.module = true;
    request.arch = "sm_90";
    for (const auto& name : names) request.kernels.push_back(kernel_named(name));
    const std::string text = pipeline::suite_skeleton(request);
    EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
    EXPECT_EQ(text.find('\r'), std::string::npos) << text;
    EXPECT_EQ(text.find("\ncompile:"), std::string::npos) << text;
    EXPECT_EQ(text.find("\xe2\x80\xae"), std::string::npos) << "U+202E would turn the text around";

    const YAML::Node variants = variants_of(text);
    ASSERT_EQ(variants.size(), names.size()) << text;
    std::set<std::string> entries;
    for (const auto& variant : variants) {
        for (const auto& key : variant.second)
            EXPECT_TRUE(
                std::set<std::string>({"module", "entry", "block", "grid", "args"}).contains(key.first.Scalar()))
                << key.first.Scalar();
        entries.insert(variant.second["entry"].as<std::string>());
        // Buffer names are identifiers whatever the parameter's name.
        for (const auto& arg : variant.second["args"])
            if (arg.IsScalar()) {
                for (const char c : arg.Scalar()) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '_');
            }
    }
    EXPECT_EQ(entries, std::set<std::string>(names.begin(), names.end()));
    EXPECT_NE(text.find("    entry: ns::k\n"), std::string::npos) << "a plain name stays plain";

    // A symbol that is not UTF-8 cannot be named in YAML: its entry is left to fill in.
    request.kernels = {kernel_named("bad\xff")};
    const std::string not_utf8 = pipeline::suite_skeleton(request);
    EXPECT_EQ(variants_of(not_utf8)["bad"]["entry"].as<std::string>(), pipeline::placeholder) << not_utf8;
    EXPECT_NE(not_utf8.find("not UTF-8, which a suite cannot name: bad\\xff"), std::string::npos) << not_utf8;
}

TEST(SuiteSkeleton, ScaffoldShowsAModulesSymbolsEscapedAndWritesThemQuoted)
{
    TempDir dir;
    fs::create_directories(dir.path / "kernels");
    fs::create_directories(dir.path / "suites");
    const std::string letters(64, 'A');
    write_file(dir.path / "kernels/named.cu", "extern \"C\" __global__ void " + letters + "(float* a) { a[0] = 1; }\n");
    const std::string nvcc = std::string(HARNESS_CUDA_BIN_DIR) + "/nvcc";
    ASSERT_EQ(std::system((nvcc + " -cubin -arch=sm_90 -o " + (dir.path / "named.cubin").string() + " " +
                           (dir.path / "kernels/named.cu").string())
                              .c_str()),
              0);
    std::string name = "\x1b]0;pw\x07\x1b[2Jk\ncompile: {timeout_s: 86400, memory_mib: 1048576}\n#";
    name += std::string(64 - name.size(), 'Z');
    std::string cubin = read_file(dir.path / "named.cubin");
    for (std::size_t at; (at = cubin.find(letters)) != std::string::npos;) cubin.replace(at, 64, name);
    write_file(dir.path / "kernels/m.cubin", cubin);

    auto o = run_tool_captured({"scaffold", "--list", (dir.path / "kernels/m.cubin").string()});
    ASSERT_EQ(o.code, 0) << o.err;
    EXPECT_EQ(o.out.find('\x1b'), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("\\x1b]0;pw\\x07\\x1b[2Jk\\x0acompile: {timeout_s: 86400"), std::string::npos) << o.out;

    const fs::path suite = dir.path / "suites/m.yaml";
    o = run_tool_captured({"scaffold", (dir.path / "kernels/m.cubin").string(), "-o", suite.string()});
    ASSERT_EQ(o.code, 0) << o.err;
    const std::string text = read_file(suite);
    EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
    EXPECT_EQ(text.find("\ncompile:"), std::string::npos) << text;
    const YAML::Node variants = variants_of(text);
    ASSERT_EQ(variants.size(), 1u) << text;
    EXPECT_EQ(variants.begin()->second["entry"].as<std::string>(), name);
}

TEST(SuiteSkeleton, ACorruptModuleIsBadInputNamingIt)
{
    TempDir dir;
    // An ELF64 header for CUDA that promises 25 section headers in a file of 100 bytes.
    std::string cut(100, '\0');
    cut.replace(0, 9,
                "\x7f"
                "ELF\x02\x01\x01\x33\x08");
    cut[16] = 2;                      // ET_EXEC
    cut[18] = static_cast<char>(190); // EM_CUDA
    cut[0x28] = 64;
    cut[0x3a] = 64;
    cut[0x3c] = 25;
    cut[0x3e] = 1;
    write_file(dir.path / "cut.cubin", cut);
    const auto o = run_tool_captured({"scaffold", "--list", (dir.path / "cut.cubin").string()});
    EXPECT_EQ(o.code, 2) << o.err;
    EXPECT_NE(o.err.find((dir.path / "cut.cubin").string() + ": cubin: truncated or corrupt: 25 section headers"),
              std::string::npos)
        << o.err;
}

namespace {

/// This process's working folder moved to `folder` for the scope.
struct InFolder {
    fs::path before = fs::current_path();
    explicit InFolder(const fs::path& folder) { fs::current_path(folder); }
    ~InFolder() { fs::current_path(before); }
    InFolder(const InFolder&) = delete;
    InFolder& operator=(const InFolder&) = delete;
};

} // namespace

TEST(SuiteSkeleton, ScaffoldCompilesAsASuiteDoesInAProcessThatReadsTheKernelsProjectOnly)
{
    TempDir dir;
    // A header only the working folder holds is never found: the compiler works in an empty folder.
    fs::create_directories(dir.path / "project/kernels/probe");
    fs::create_directories(dir.path / "project/.git");
    write_file(dir.path / "project/kernels/probe/k.cu",
               "#include \"only_in_the_working_folder.h\"\nextern \"C\" __global__ void k(float* a) { a[0] = 1; }\n");
    write_file(dir.path / "project/only_in_the_working_folder.h", "#define FOUND 1\n");
    {
        InFolder in(dir.path / "project");
        const auto o = run_tool_captured({"scaffold", "--list", "kernels/probe/k.cu"});
        EXPECT_EQ(o.code, 2) << o.out << o.err;
        EXPECT_NE(o.err.find("only_in_the_working_folder.h"), std::string::npos) << o.err;
    }
    // The kernel's project is what it may read, not the working folder above it.
    fs::create_directories(dir.path / "w/downloaded");
    write_file(dir.path / "w/credentials", "int credential_value = 5309;\n");
    write_file(dir.path / "w/downloaded/k.cu",
               "#include \"../credentials\"\nextern \"C\" __global__ void k(float* a) { a[0] = credential_value; }\n");
    {
        InFolder in(dir.path / "w");
        const auto o = run_tool_captured({"scaffold", "--list", "downloaded/k.cu"});
        EXPECT_EQ(o.code, 2) << o.out << o.err;
        EXPECT_NE(o.err.find("#include \"../credentials\" reaches outside the project"), std::string::npos) << o.err;
    }
    // Inside its project a kernel still finds the project's kernels/ folder and its own.
    write_file(dir.path / "project/kernels/shared.cuh", "#define VALUE 2.0f\n");
    write_file(dir.path / "project/kernels/probe/own.cuh", "#define OTHER 1.0f\n");
    write_file(dir.path / "project/kernels/probe/ok.cu",
               "#include \"shared.cuh\"\n#include \"own.cuh\"\n"
               "extern \"C\" __global__ void ok(float* a) { a[0] = VALUE + OTHER; }\n");
    const auto o = run_tool_captured({"scaffold", "--list", (dir.path / "project/kernels/probe/ok.cu").string()});
    EXPECT_EQ(o.code, 0) << o.err;
    EXPECT_NE(o.out.find("ok(float* a)"), std::string::npos) << o.out;
}

} // namespace suite_skeleton_test
