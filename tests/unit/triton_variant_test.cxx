// Kernels exported from Triton (`triton:` variants): the manifest's launch facts become the
// launch, Triton's hidden parameters are always passed, what is not supported is refused by name,
// and an export whose .py changed is stale. The committed exports (kernels/triton/exported) are
// read with no Python and no GPU, as in a CPU CI job.
#include "harness/compile/cubin_info.hxx"
#include "harness/compile/static_tier.hxx"
#include "harness/core/error.hxx"
#include "harness/suite/compile_params.hxx"
#include "harness/suite/suite.hxx"
#include "harness/suite/triton_manifest.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"

#include <functional>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace triton_variant_test {

using namespace harness;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

fs::path repo()
{
    return repo_root();
}

/// A project holding a copy of the committed softmax export (.py, manifest, cubin), so that a test
/// may change any of them, and a suite that runs it against the CUDA C++ reference.
struct TritonProject {
    TempDir dir{"harness-triton"};
    fs::path manifest;
    fs::path suite_file;
    explicit TritonProject(const std::string& args = "[y, x, COLS]", const std::string& extra = "")
    {
        fs::create_directories(dir.path / "kernels" / "triton" / "exported");
        fs::create_directories(dir.path / "kernels" / "softmax");
        fs::copy_file(repo() / "kernels/triton/softmax.py", dir.path / "kernels/triton/softmax.py");
        fs::copy_file(repo() / "kernels/softmax/softmax_rows.cu", dir.path / "kernels/softmax/softmax_rows.cu");
        for (const char* ext : {".json", ".cubin"})
            fs::copy_file(repo() / "kernels/triton/exported" / (std::string("softmax_rows_b1024") + ext),
                          dir.path / "kernels/triton/exported" / (std::string("softmax_rows_b1024") + ext));
        manifest = dir.path / "kernels/triton/exported/softmax_rows_b1024.json";
        suite_file = dir.path / "suites" / "softmax.yaml";
        write_file(suite_file, R"(suite: softmax
archs: [sm_90]
params:
  ROWS: [64]
  COLS: [256, 1000]
reference: cuda
buffers:
  x: {type: f32, count: ROWS*COLS, init: uniform, seed: 7, min: -8, max: 8, role: in}
  y: {type: f32, count: ROWS*COLS, init: zeros, role: out}
)" + extra + R"(
variants:
  cuda:
    source: ../kernels/softmax/softmax_rows.cu
    entry: softmax_rows<256>
    block: [256]
    grid: [ROWS]
    args: [y, x, {i32: COLS}]
  triton:
    triton: ../kernels/triton/exported/softmax_rows_b1024.json
    grid: [ROWS]
    args: )" + args + "\n");
    }
    /// Changes the manifest: `edit` gets its JSON.
    template <typename Edit> void edit_manifest(Edit edit) const
    {
        json j = json::parse(read_file(manifest));
        edit(j);
        write_file(manifest, j.dump(2));
    }
    suite::Suite load() const { return suite::load_suite(suite_file); }
};

/// The message of the Error that `load` throws, or "" when it throws none.
template <typename Load> std::string error_of(Load load)
{
    try {
        load();
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

} // namespace

TEST(TritonManifest, LaunchFactsBecomeTheLaunchAndHiddenParametersArePassed)
{
    const auto s = suite::load_suite(repo() / "suites" / "triton_softmax.yaml");
    const auto& v = *s.find_variant("triton");
    EXPECT_EQ(v.module, repo() / "kernels/triton/exported/softmax_rows_b1024.cubin");
    EXPECT_EQ(v.exported_from, repo() / "kernels/triton/softmax.py");
    ASSERT_EQ(v.launches.size(), 1u);
    const auto& l = v.launches[0];
    EXPECT_EQ(l.entry, "softmax_rows");
    ASSERT_EQ(l.block.size(), 1u);
    EXPECT_EQ(l.block[0].evaluate({}), 128); // 4 warps
    EXPECT_EQ(l.shared_bytes.evaluate({}), 16);
    // out, in, n_cols, then global_scratch and profile_scratch: null pointers (size 0), as
    // Triton's launcher passes them.
    ASSERT_EQ(l.args.size(), 5u);
    EXPECT_EQ(l.args[0].buffer, "y");
    EXPECT_EQ(l.args[1].buffer, "x");
    EXPECT_EQ(l.args[2].scalar_type, suite::ElementType::i32);
    EXPECT_EQ(l.args[2].scalar.text(), "COLS");
    for (std::size_t i = 3; i < 5; ++i) {
        EXPECT_FALSE(l.args[i].is_buffer());
        EXPECT_EQ(l.args[i].scalar_type, suite::ElementType::u64);
        EXPECT_EQ(l.args[i].scalar.evaluate({}), 0);
    }
    // The tiled matmul needs 64 KiB of dynamic shared memory: above 48 KiB, which a launch must
    // opt into (the launcher sets the attribute for any launch above it).
    const auto m = suite::load_suite(repo() / "suites" / "triton_matmul.yaml");
    const auto& tiled = m.find_variant("triton_128")->launches[0];
    EXPECT_EQ(tiled.shared_bytes.evaluate({}), 65536);
    EXPECT_EQ(tiled.block[0].evaluate({}), 256);
    // Reports name the .py file the kernel was written in.
    const auto launches = suite::case_launches(s, v, {{"ROWS", 4096}, {"COLS", 256}});
    ASSERT_EQ(launches.size(), 1u);
    EXPECT_EQ(launches[0].file, "kernels/triton/softmax.py");
}

// The static tier reads the committed cubins: no Python, no GPU. The exports' figures are those
// recorded on the GPU (baselines/triton_*/sm_90.csv): 4 warps of 29 registers, 16 resident blocks.
TEST(TritonManifest, StaticTierReadsCommittedCubins)
{
    const auto s = suite::load_suite(repo() / "suites" / "triton_softmax.yaml");
    const auto results = compile::run_static_tier(s, {"sm_90"}, nullptr);
    bool seen = false;
    for (const auto& r : results) {
        ASSERT_EQ(r.status, CaseStatus::passed) << r.variant << ": " << r.message;
        if (r.variant != "triton") continue;
        seen = true;
        EXPECT_EQ(r.metric("registers"), 29.0);
        EXPECT_EQ(r.metric("dynamic_shared_bytes"), 16.0);
        EXPECT_EQ(r.metric("blocks_per_sm"), 16.0);
        EXPECT_EQ(r.metric("theoretical_occupancy"), 1.0);
        // Its accesses are predicted from the PTX its cubin keeps (the GPU measured the same figures),
        // without source lines: that PTX has none.
        EXPECT_TRUE(r.not_predicted.empty()) << r.not_predicted.front();
        EXPECT_EQ(r.metric("predicted_excess_global_sectors"), 0.0) << r.params_text;
        EXPECT_EQ(r.metric("predicted_global_ld_sectors_per_request"),
                  r.params_text == "ROWS=4096 COLS=1000" ? 500.0 / 128 : 4.0);
        ASSERT_FALSE(r.predicted_accesses.empty());
        EXPECT_EQ(r.predicted_accesses.front().file, "");
        EXPECT_NE(r.predicted_accesses.front().text().find("kernel softmax_rows, no source line: "), std::string::npos)
            << r.predicted_accesses.front().text();
    }
    EXPECT_TRUE(seen);
    // The planted one-warp export: 32-thread blocks, more registers, occupancy below half.
    const auto planted = suite::load_suite(repo() / "tests/suites/triton_softmax_one_warp.yaml",
                                           suite::LoadOptions{.sources_anywhere = true, .working_folder = {}});
    for (const auto& r : compile::run_static_tier(planted, {"sm_90"}, nullptr))
        if (r.variant == "triton") {
            EXPECT_LT(*r.metric("theoretical_occupancy"), 0.5) << r.params_text;
        }
}

// A launcher that leaves Triton's hidden parameters out launches a kernel with the wrong
// parameters: with a manifest that does not list them, the argument check refuses the suite
// before anything runs, naming the kernel's real parameter count.
// The PTX a Triton cubin keeps of itself, one line a string of .nv_debug_ptx_txt, read as PTX text (nvcc's
// cubins keep theirs too); a file that is no cubin is refused.
TEST(TritonManifest, TheCubinKeepsThePtxItWasCompiledFrom)
{
    const std::string ptx =
        compile::embedded_ptx(read_file(repo() / "kernels/triton/exported/softmax_rows_b1024.cubin"));
    EXPECT_NE(ptx.find("\n.target sm_90a\n"), std::string::npos) << ptx.substr(0, 200);
    EXPECT_NE(ptx.find("\n.visible .entry softmax_rows(\n"), std::string::npos);
    EXPECT_NE(ptx.find("ld.global.b32"), std::string::npos);
    EXPECT_EQ(ptx.find('\0'), std::string::npos);
    EXPECT_EQ(ptx.find(".loc"), std::string::npos) << "Triton's kept PTX names no source lines";
    const std::string nvcc_cubin = read_file(std::filesystem::path(HARNESS_TEST_MODULE_DIR) / "module_kernels.cubin");
    EXPECT_NE(compile::embedded_ptx(nvcc_cubin).find("\n.visible .entry copy_c(\n"), std::string::npos);
    EXPECT_THROW(compile::embedded_ptx("not a cubin"), compile::CubinError);
}

TEST(TritonManifest, LeavingAHiddenParameterOutIsRefusedNotLaunched)
{
    TritonProject p;
    p.edit_manifest([](json& j) { j["launch"]["hidden_parameters"] = json::array(); });
    const auto s = p.load(); // the manifest alone cannot tell
    ASSERT_EQ(s.find_variant("triton")->launches[0].args.size(), 3u);
    const std::string message = error_of([&] { compile::run_static_tier(s, {"sm_90"}, nullptr); });
    EXPECT_NE(message.find("takes 5 parameters"), std::string::npos) << message;
    EXPECT_NE(message.find("variants.triton"), std::string::npos) << message;
}

TEST(TritonManifest, WhatCannotBeLaunchedYetIsRefusedByName)
{
    const std::pair<std::function<void(json&)>, std::string> cases[] = {
        {[](json& j) { j["launch"]["num_ctas"] = 16; },
         "launch.num_ctas: 16 CTAs per program is a cluster larger than"},
        {[](json& j) { j["launch"]["tensordesc_meta"] = json::array({json::object()}); }, "tensor descriptors"},
        {[](json& j) { j["launch"]["launch_cooperative_grid"] = true; }, "cooperative launch"},
        {[](json& j) { j["launch"]["launch_pdl"] = true; }, "programmatic dependent launch"},
        {[](json& j) { j["launch"]["tmem_size"] = 128; }, "tensor memory"},
        {[](json& j) {
             j["launch"]["hidden_parameters"].push_back({{"name", "trace_scratch"}, {"size", 0}, {"align", 1}});
         },
         "hidden parameter 'trace_scratch' that this harness does not know how to fill"},
        {[](json& j) { j["format"] = 2; }, "format 2 is not one this harness reads"},
        {[](json& j) { j["target"]["backend"] = "hip"; }, "only a CUDA target"},
        {[](json& j) { j["launch"].erase("shared"); }, "launch.shared: missing"},
        {[](json& j) { j["parameters"][2]["type"] = "i1"; }, "'i1' has no buffer or scalar type"},
        {[](json& j) { j["cubin"] = "../../../elsewhere.cubin"; }, "cubin: the name of a .cubin file beside"},
        {[](json& j) { j["source"] = "../../../../outside.py"; }, "leads out of the project"},
        {[](json& j) { j["source_sha256"] = "not hex"; }, "expected a SHA-256 digest"},
    };
    for (const auto& [edit, expected] : cases) {
        TritonProject p;
        p.edit_manifest(edit);
        const std::string message = error_of([&] { p.load(); });
        EXPECT_NE(message.find(expected), std::string::npos) << expected << "\n" << message;
        // Both places are named: the suite's field and the manifest file.
        EXPECT_NE(message.find("softmax.yaml:"), std::string::npos) << message;
        EXPECT_NE(message.find("softmax_rows_b1024.json"), std::string::npos) << message;
    }
}

// A manifest that is not what the exporter writes (empty, cut short, nested past reason, of the
// wrong types, names with control characters) is bad input naming the manifest: no crash, nothing
// of it echoed raw.
TEST(TritonManifest, MalformedManifestsAreBadInputNamingTheFile)
{
    const std::string json_text = read_file(repo_root() / "kernels/triton/exported/softmax_rows_b1024.json");
    const std::pair<std::string, std::string> cases[] = {
        {"", "not JSON"},
        {json_text.substr(0, json_text.size() / 2), "not JSON"},
        {std::string(200000, '[') + std::string(200000, ']'), "expected a JSON object"},
        {"[1, 2]", "expected a JSON object"},
        {R"({"format": "1"})", "format: expected an integer"},
        {R"({"format": 1e300})", "format: expected an integer"},
    };
    for (const auto& [text, expected] : cases) {
        TritonProject p;
        write_file(p.manifest, text);
        try {
            p.load();
            ADD_FAILURE() << "loaded: " << text.substr(0, 40);
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::bad_input);
            const std::string message = e.what();
            EXPECT_NE(message.find("softmax_rows_b1024.json"), std::string::npos) << message;
            EXPECT_NE(message.find(expected), std::string::npos) << expected << "\n" << message.substr(0, 400);
        }
    }
    TritonProject p;
    p.edit_manifest([](json& j) { j["launch"]["name"] = "softmax\x1b[31m"; });
    const std::string message = error_of([&] { p.load(); });
    EXPECT_NE(message.find("launch.name: control characters are not allowed"), std::string::npos) << message;
    EXPECT_EQ(message.find('\x1b'), std::string::npos);
}

// A cubin beside the manifest that is a link to a file outside the project is not read.
TEST(TritonManifest, ACubinLinkedOutOfTheProjectIsRefused)
{
    TritonProject p;
    TempDir outside{"harness-triton-outside"};
    const fs::path cubin = p.dir.path / "kernels/triton/exported/softmax_rows_b1024.cubin";
    fs::rename(cubin, outside.path / "elsewhere.cubin");
    fs::create_symlink(outside.path / "elsewhere.cubin", cubin);
    const std::string message = error_of([&] { p.load(); });
    EXPECT_NE(message.find("cubin: softmax_rows_b1024.cubin leads out of the project"), std::string::npos) << message;
}

TEST(TritonManifest, ArgumentsAreCheckedAgainstTheKernelsParameters)
{
    const std::pair<std::string, std::string> cases[] = {
        {"[y, x]", "softmax_rows takes 3 arguments: out_ptr (*fp32), in_ptr (*fp32), n_cols (i32)"},
        {"[y, x, COLS, {u64: 0}, {u64: 0}]", "leave out Triton's hidden scratch parameters"},
        {"[y, x, {f32: COLS}]", "n_cols is i32: write the value alone, or as {i32: VALUE}"},
        {"[y, COLS, COLS]", "in_ptr is *fp32: give a buffer's name"},
        {"[y, h, COLS]", "in_ptr is *fp32, a pointer to f32; buffer 'h' is f16"},
        {"[y, x, {i32: COLS}]", ""},
    };
    for (const auto& [args, expected] : cases) {
        TritonProject p(args, "  h: {type: f16, count: ROWS*COLS, role: in}\n");
        const std::string message = error_of([&] { p.load(); });
        if (expected.empty())
            EXPECT_EQ(message, "") << args;
        else
            EXPECT_NE(message.find(expected), std::string::npos) << args << "\n" << message;
    }
}

// The JIT specializes on integers divisible by 16; an export made so must not run at a point where
// its integer argument is not.
TEST(TritonManifest, DivisibilityAssumedAtExportIsCheckedAtEveryPoint)
{
    TritonProject p;
    p.edit_manifest([](json& j) { j["parameters"][2]["divisibility"] = 16; });
    const std::string message = error_of([&] { p.load(); });
    EXPECT_NE(message.find("n_cols is 1000 at ROWS=64 COLS=1000, but the export assumes a multiple of 16"),
              std::string::npos)
        << message;
    // The committed tiled matmul is specialized so: its variant runs only at sizes divisible by 16.
    const auto m = suite::load_suite(repo() / "suites" / "triton_matmul.yaml");
    for (const auto& p : m.find_variant("triton_128")->params)
        for (const auto n : p.values) EXPECT_EQ(n % 16, 0);
}

TEST(TritonManifest, StaleExportsAreRefusedUnlessAllowed)
{
    {
        TritonProject p;
        write_file(p.dir.path / "kernels/triton/softmax.py",
                   read_file(p.dir.path / "kernels/triton/softmax.py") + "\n# edited\n");
        const std::string message = error_of([&] { p.load(); });
        EXPECT_NE(message.find("softmax.py changed since"), std::string::npos) << message;
        EXPECT_NE(message.find("ci/triton_export.py"), std::string::npos) << message;
        // `stale: allow` runs it as it is.
        write_file(p.suite_file, read_file(p.suite_file) + "    stale: allow\n");
        EXPECT_EQ(error_of([&] { p.load(); }), "");
    }
    {
        TritonProject p;
        write_file(p.dir.path / "kernels/triton/exported/softmax_rows_b1024.cubin", "not the cubin");
        EXPECT_NE(error_of([&] { p.load(); }).find("is not the cubin"), std::string::npos);
    }
    {
        TritonProject p("[y, x, COLS]", "triton_version: 3.7.0\n");
        const std::string message = error_of([&] { p.load(); });
        EXPECT_NE(message.find("exported with Triton 3.6.0, but the suite's triton_version is 3.7.0"),
                  std::string::npos)
            << message;
    }
    {
        // A suite whose static tier covers other architectures cannot use an sm_90 cubin.
        TritonProject p;
        write_file(p.suite_file, std::string("archs: [sm_80, sm_90]\n") +
                                     read_file(p.suite_file).substr(read_file(p.suite_file).find("params:")));
        write_file(p.suite_file, "suite: softmax\n" + read_file(p.suite_file));
        const std::string message = error_of([&] { p.load(); });
        EXPECT_NE(message.find("exported for sm_90 only, and the suite's archs include sm_80"), std::string::npos)
            << message;
    }
}

// A kernel that needs scratch gets zeroed device memory of its size for every program, as Triton's
// launcher allocates it, passed after the user's arguments.
TEST(TritonManifest, ScratchOfNonzeroSizeIsAllocatedPerProgram)
{
    TritonProject p;
    p.edit_manifest([](json& j) { j["launch"]["hidden_parameters"][0]["size"] = 64; });
    const auto s = p.load();
    const auto& v = *s.find_variant("triton");
    ASSERT_EQ(v.launches[0].args.size(), 5u);
    EXPECT_EQ(v.launches[0].args[3].buffer, "triton_global_scratch");
    EXPECT_FALSE(v.launches[0].args[4].is_buffer());
    ASSERT_EQ(v.buffers.size(), 1u);
    EXPECT_EQ(v.buffers[0].type, suite::ElementType::u8);
    EXPECT_EQ(v.buffers[0].count.evaluate({{"ROWS", 64}, {"COLS", 256}}), 64 * 64);
}

// A program of several CTAs (num_ctas) is a thread block cluster: the launch's grid counts CTAs
// (x times num_ctas, as Triton's launcher makes it) in clusters of num_ctas along x, and scratch
// is per CTA.
TEST(TritonManifest, ProgramsOfSeveralCtasLaunchAsClusters)
{
    TritonProject p;
    p.edit_manifest([](json& j) {
        j["launch"]["num_ctas"] = 2;
        j["launch"]["hidden_parameters"][0]["size"] = 64;
    });
    const auto s = p.load();
    const auto& v = *s.find_variant("triton");
    const auto& l = v.launches[0];
    EXPECT_EQ(l.cluster, (std::array<int, 3>{2, 1, 1}));
    const suite::Bindings point{{"ROWS", 64}, {"COLS", 256}};
    EXPECT_EQ(l.grid[0].evaluate(point), 128);
    ASSERT_EQ(v.buffers.size(), 1u);
    EXPECT_EQ(v.buffers[0].count.evaluate(point), 64 * 128);
    // Every other variant launches without clusters.
    EXPECT_EQ(s.find_variant("cuda")->launches[0].cluster, (std::array<int, 3>{1, 1, 1}));
}

TEST(TritonManifest, TritonTypesMapToSuiteTypes)
{
    EXPECT_EQ(suite::triton_element_type("fp32"), suite::ElementType::f32);
    EXPECT_EQ(suite::triton_element_type("bf16"), suite::ElementType::bf16);
    EXPECT_EQ(suite::triton_element_type("fp8e4nv"), suite::ElementType::fp8_e4m3);
    EXPECT_EQ(suite::triton_element_type("u64"), suite::ElementType::u64);
    EXPECT_FALSE(suite::triton_element_type("i1"));
    EXPECT_FALSE(suite::triton_element_type("fp8e4b15"));
}

} // namespace triton_variant_test
