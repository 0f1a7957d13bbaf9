#include "harness/compile/compile_suite.hxx"
#include "harness/suite/suite.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <set>

namespace nvrtc_compile_test {

namespace fs = std::filesystem;
using namespace harness;

namespace {

const fs::path root = repo_root();

/// Every committed suite; tests/suites/nvcc_modules.yaml finds its modules (built by CMake) here.
std::vector<fs::path> suite_files()
{
    ::setenv("HARNESS_TEST_MODULE_DIR", HARNESS_TEST_MODULE_DIR, 0); // a copied build may point elsewhere
    std::vector<fs::path> files;
    for (const auto& dir : {root / "suites", root / "tests" / "suites"})
        for (const auto& e : fs::directory_iterator(dir))
            if (e.path().extension() == ".yaml") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    return files;
}

/// A committed suite, loaded as `harness run` loads it. A test suite may plant a change in a suite
/// of suites/ and name its kernel in kernels/, outside tests/ (tests/suites/alignment_scan_448.yaml),
/// as --sources-anywhere lets it.
suite::Suite load(const fs::path& file)
{
    suite::LoadOptions options;
    options.sources_anywhere = file.parent_path() != root / "suites";
    return suite::load_suite(file, options);
}

} // namespace

// Every variant of every suite compiles with NVRTC for both architectures the static tier covers.
// Module variants come compiled by nvcc, for the architectures their build chose
// (module_file_test.cxx covers them).
TEST(NvrtcCompile, EveryVariantOfEverySuiteCompilesForSm80AndSm90)
{
    int compiled = 0;
    for (const auto& file : suite_files()) {
        auto s = load(file);
        std::erase_if(s.variants,
                      [&](const suite::VariantSpec& v) { return !v.module.empty() && v.name != s.reference; });
        for (const std::string arch : {"sm_80", "sm_90"}) {
            const auto result = compile::compile_suite(s, arch, nullptr);
            for (const auto& [variant, error] : result.errors) ADD_FAILURE() << file << " " << variant << ": " << error;
            for (const auto& [variant, module] : result.modules) {
                EXPECT_GT(module.cubin.size(), 256u) << variant;
                EXPECT_EQ(module.cubin.substr(0, 4), "\x7f"
                                                     "ELF")
                    << variant;
                for (const auto& [entry, lowered] : module.lowered_names) EXPECT_FALSE(lowered.empty()) << entry;
                // -Xptxas=-v puts the resource report in the log.
                EXPECT_NE(module.log.find("Used"), std::string::npos) << variant << ": " << module.log;
                ++compiled;
            }
        }
    }
    EXPECT_GE(compiled, 6);
}

// Adding a kernel touches one folder and one suite: no kernel file may be left out of every suite.
TEST(NvrtcCompile, EveryKernelFileIsUsedBySomeSuite)
{
    std::set<fs::path> used;
    for (const auto& file : suite_files()) {
        const auto s = load(file);
        for (const auto& v : s.variants) {
            if (v.kind != suite::VariantKind::source) continue; // a library call or a module: no source here
            for (const auto& f : compile::source_closure(compile::request_for(s, v, "sm_90"))) used.insert(f);
        }
    }
    for (const auto& e : fs::recursive_directory_iterator(root / "kernels")) {
        if (e.path().extension() != ".cu" && e.path().extension() != ".cuh") continue;
        EXPECT_TRUE(used.contains(fs::weakly_canonical(e.path()))) << e.path() << " is in no suite";
    }
}

TEST(NvrtcCompile, TemplateEntryGetsItsLoweredName)
{
    compile::CompileRequest r;
    r.source = root / "kernels" / "gemm" / "gemm_smem_tiled.cu";
    r.arch = "sm_90";
    r.entries = {"gemm_smem_tiled<16>", "gemm_smem_tiled<32>"};
    const auto m = compile::compile(r);
    EXPECT_EQ(m.lowered_names.at("gemm_smem_tiled<16>").substr(0, 2), "_Z");
    EXPECT_NE(m.lowered_names.at("gemm_smem_tiled<16>"), m.lowered_names.at("gemm_smem_tiled<32>"));
    EXPECT_NE(m.cubin.find(m.lowered_names.at("gemm_smem_tiled<32>")), std::string::npos);
}

TEST(NvrtcCompile, CompileErrorCarriesTheLogAndLine)
{
    const TempDir scratch{"harness-test"};
    const fs::path& dir = scratch.path;
    std::ofstream(dir / "bad.cu") << "extern \"C\" __global__ void k(float* p)\n{\n    p[0] = undefined_thing;\n}\n";
    compile::CompileRequest r;
    r.source = dir / "bad.cu";
    r.entries = {"k"};
    try {
        compile::compile(r);
        FAIL() << "compiled";
    } catch (const compile::CompileError& e) {
        EXPECT_NE(e.log().find("bad.cu(3)"), std::string::npos) << e.log();
        EXPECT_NE(e.log().find("undefined_thing"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("--gpu-architecture=sm_90"), std::string::npos);
    }
    r.source = root / "kernels" / "gemm" / "gemm_naive.cu";
    r.entries = {"no_such_kernel"};
    EXPECT_THROW(compile::compile(r), compile::CompileError);
}

TEST(NvrtcCompile, CacheHitsAndInvalidatesOnIncludedHeaderChange)
{
    const TempDir scratch{"harness-test"};
    const fs::path& dir = scratch.path;
    std::ofstream(dir / "scale.cuh") << "#define SCALE 2.0f\n";
    std::ofstream(dir / "k.cu")
        << "#include \"scale.cuh\"\nextern \"C\" __global__ void k(float* p) { p[0] *= SCALE; }\n";
    compile::CompileRequest r;
    r.source = dir / "k.cu";
    r.entries = {"k"};
    const compile::CompileCache cache(dir / "cache");

    const auto first = compile::compile(r, &cache);
    EXPECT_FALSE(first.from_cache);
    const auto second = compile::compile(r, &cache);
    EXPECT_TRUE(second.from_cache);
    EXPECT_EQ(first.cubin, second.cubin);
    EXPECT_EQ(second.lowered_names.at("k"), "k");

    r.defines["EXTRA"] = "1"; // options are part of the key
    EXPECT_FALSE(compile::compile(r, &cache).from_cache);
    r.defines.clear();
    std::ofstream(dir / "scale.cuh") << "#define SCALE 3.0f\n"; // so are included headers
    EXPECT_FALSE(compile::compile(r, &cache).from_cache);
    r.arch = "sm_80"; // and the architecture
    const auto sm80 = compile::compile(r, &cache);
    EXPECT_FALSE(sm80.from_cache);
    EXPECT_NE(sm80.cache_key, first.cache_key);

    // A damaged entry is recompiled, not trusted.
    std::ofstream(dir / "cache" / (sm80.cache_key + ".json")) << "{not json";
    EXPECT_FALSE(compile::compile(r, &cache).from_cache);
    EXPECT_TRUE(compile::compile(r, &cache).from_cache);
}

} // namespace nvrtc_compile_test
