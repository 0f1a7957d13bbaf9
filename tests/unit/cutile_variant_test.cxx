// Kernels exported from cuTile (`cutile:` variants): each array argument is passed as cuTile's
// calling convention says (pointer, shape, strides), every assumption the export was compiled for
// is checked at every sweep point before anything runs, what cannot be launched is refused by
// name, hostile manifests are bad input naming the file, and an export whose .py, cubin or PTX
// changed is stale. The committed exports (kernels/cutile/exported) are read with no Python and no
// GPU, as in a CPU CI job.
#include "harness/compile/static_tier.hxx"
#include "harness/core/error.hxx"
#include "harness/suite/compile_params.hxx"
#include "harness/suite/cutile_manifest.hxx"
#include "harness/suite/suite.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace cutile_variant_test {

using namespace harness;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* softmax_export = "softmax_rows_t1024";

/// A project holding a copy of the committed cuTile softmax export (.py, manifest, cubin, PTX), so
/// that a test may change any of them, and a suite that runs it against the CUDA C++ reference.
struct CutileProject {
    TempDir dir{"harness-cutile"};
    fs::path manifest;
    fs::path suite_file;
    explicit CutileProject(
        const std::string& args = "[{array: y, shape: [ROWS, COLS]}, {array: x, shape: [ROWS, COLS]}]",
        const std::string& params = "[256, 1000]")
    {
        fs::create_directories(dir.path / ".git");
        fs::create_directories(dir.path / "kernels" / "cutile" / "exported");
        fs::create_directories(dir.path / "kernels" / "softmax");
        fs::copy_file(repo_root() / "kernels/cutile/softmax.py", dir.path / "kernels/cutile/softmax.py");
        fs::copy_file(repo_root() / "kernels/softmax/softmax_rows.cu", dir.path / "kernels/softmax/softmax_rows.cu");
        for (const char* ext : {".json", ".cubin", ".ptx"})
            fs::copy_file(repo_root() / "kernels/cutile/exported" / (std::string(softmax_export) + ext),
                          dir.path / "kernels/cutile/exported" / (std::string(softmax_export) + ext));
        manifest = dir.path / "kernels/cutile/exported" / (std::string(softmax_export) + ".json");
        suite_file = dir.path / "suites" / "softmax.yaml";
        write_file(suite_file, R"(suite: softmax
archs: [sm_90]
params:
  ROWS: [64]
  COLS: )" + params + R"(
reference: cuda
buffers:
  x: {type: f32, count: ROWS*COLS, init: uniform, seed: 7, min: -8, max: 8, role: in}
  y: {type: f32, count: ROWS*COLS, init: zeros, role: out}
  n: {type: i32, count: ROWS*COLS, init: zeros, role: out}
variants:
  cuda:
    source: ../kernels/softmax/softmax_rows.cu
    entry: softmax_rows<256>
    block: [256]
    grid: [ROWS]
    args: [y, x, {i32: COLS}]
  tile:
    cutile: ../kernels/cutile/exported/softmax_rows_t1024.json
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

TEST(CutileManifest, ArraysArePassedAsPointerShapeAndStrides)
{
    const auto s = suite::load_suite(repo_root() / "suites" / "cutile_softmax.yaml");
    const auto& v = *s.find_variant("cutile");
    EXPECT_EQ(v.kind, suite::VariantKind::cutile);
    EXPECT_EQ(v.module, repo_root() / "kernels/cutile/exported/softmax_rows_t1024.cubin");
    EXPECT_EQ(v.exported_from, repo_root() / "kernels/cutile/softmax.py");
    ASSERT_EQ(v.launches.size(), 1u);
    const auto& l = v.launches[0];
    EXPECT_EQ(l.entry, "softmax_rows_Kt1_A2f32_1l0_2t1_p16_A2f32_1l0_2t1_p16_I1024");
    ASSERT_EQ(l.block.size(), 1u);
    EXPECT_EQ(l.block[0].evaluate({}), 128); // the kernel's .reqntid
    // Each 2-D f32 array: its buffer, then shape (ROWS, COLS), then row-major strides (COLS, 1),
    // each an i32; the constant TILE is compiled in and takes no argument.
    ASSERT_EQ(l.args.size(), 10u);
    const suite::Bindings point{{"ROWS", 4096}, {"COLS", 1000}};
    for (std::size_t first : {0u, 5u}) {
        EXPECT_EQ(l.args[first].buffer, first == 0 ? "y" : "x");
        const std::int64_t expected[] = {4096, 1000, 1000, 1};
        for (std::size_t k = 0; k < 4; ++k) {
            const auto& a = l.args[first + 1 + k];
            EXPECT_FALSE(a.is_buffer());
            EXPECT_EQ(a.scalar_type, suite::ElementType::i32);
            EXPECT_EQ(a.scalar.evaluate(point), expected[k]) << first + 1 + k;
        }
    }
    const auto launches = suite::case_launches(s, v, point);
    ASSERT_EQ(launches.size(), 1u);
    EXPECT_EQ(launches[0].file, "kernels/cutile/softmax.py");
    // Strides given explicitly are passed as written.
    CutileProject p("[{array: y, shape: [ROWS, COLS], strides: [COLS, 1]}, {array: x, shape: [ROWS, COLS]}]");
    EXPECT_EQ(p.load().find_variant("tile")->launches[0].args[3].scalar.text(), "COLS");
}

// The static tier reads the committed cubins, and the cubin's own parameter list agrees with the
// arguments the calling convention makes (10 of them for the softmax).
TEST(CutileManifest, StaticTierReadsCommittedCubins)
{
    for (const char* name : {"cutile_softmax.yaml", "cutile_matmul.yaml"}) {
        const auto s = suite::load_suite(repo_root() / "suites" / name);
        bool seen = false;
        for (const auto& r : compile::run_static_tier(s, {"sm_90"}, nullptr)) {
            ASSERT_EQ(r.status, CaseStatus::passed) << r.variant << ": " << r.message;
            if (!r.variant.starts_with("cutile")) continue;
            seen = true;
            EXPECT_GT(*r.metric("registers"), 0.0) << r.variant;
            EXPECT_GT(*r.metric("theoretical_occupancy"), 0.0) << r.variant;
            // Its cubin's PTX is read; a branch on a value the model does not know stops the prediction,
            // and the case says where.
            ASSERT_FALSE(r.not_predicted.empty()) << r.variant;
            EXPECT_NE(r.not_predicted.front().find("depends on an unknown value"), std::string::npos)
                << r.not_predicted.front();
            EXPECT_FALSE(r.metric("predicted_excess_global_sectors")) << r.variant;
        }
        EXPECT_TRUE(seen) << name;
    }
}

TEST(CutileManifest, AssumptionsOfTheExportAreCheckedAtEveryPoint)
{
    // The 128-tile matmul was exported for shapes that are multiples of 16: N = 1000 is refused.
    const std::string matmul = read_file(repo_root() / "suites" / "cutile_matmul.yaml");
    const std::string at_1000 = error_of([&] {
        std::string text = matmul;
        text.replace(text.find("params: {N: [512, 1024, 2048]}"), 30, "params: {N: [512, 1000, 2048]}");
        suite::parse_suite(text, repo_root() / "suites" / "cutile_matmul.yaml");
    });
    EXPECT_NE(at_1000.find("a.shape[0] is 1000 at N=1000, but the export assumes a multiple of 16 "
                           "(shape_divisible_by)"),
              std::string::npos)
        << at_1000;
    EXPECT_NE(at_1000.find("variants.cutile_128.args[0].shape[0]"), std::string::npos) << at_1000;

    const auto refused = [](const std::string& args, const std::string& params = "[256, 1000]") {
        return error_of([&] { CutileProject(args, params).load(); });
    };
    // A stride the export took as the constant 1.
    std::string m = refused("[{array: y, shape: [ROWS, COLS], strides: [COLS, 2]}, {array: x, shape: [ROWS, COLS]}]");
    EXPECT_NE(m.find("out.strides[1] is 2 at ROWS=64 COLS=256, but the export assumes it is 1 (stride_constant)"),
              std::string::npos)
        << m;
    // An array that reaches past its buffer.
    m = refused("[{array: y, shape: [ROWS, COLS + 1]}, {array: x, shape: [ROWS, COLS]}]");
    EXPECT_NE(m.find("out reaches element"), std::string::npos) << m;
    EXPECT_NE(m.find("of buffer 'y'"), std::string::npos) << m;
    // A stride below the bound the export assumed; without a bound, a negative stride still
    // reaches before the buffer's start.
    m = refused("[{array: y, shape: [ROWS, COLS], strides: [-1, 1]}, {array: x, shape: [ROWS, COLS]}]");
    EXPECT_NE(m.find("out.strides[0] is -1 at ROWS=64 COLS=256, but the export assumes at least 0 "
                     "(stride_lower_bound)"),
              std::string::npos)
        << m;
    {
        CutileProject p("[{array: y, shape: [ROWS, COLS], strides: [-1, 1]}, {array: x, shape: [ROWS, COLS]}]");
        p.edit_manifest([](json& j) { j["parameters"][0]["stride_lower_bound"] = json::array({nullptr, nullptr}); });
        m = error_of([&] { p.load(); });
        EXPECT_NE(m.find("a negative stride would reach before it"), std::string::npos) << m;
    }
    // Two arrays on one buffer, which the export assumes do not alias.
    m = refused("[{array: x, shape: [ROWS, COLS]}, {array: x, shape: [ROWS, COLS]}]");
    EXPECT_NE(m.find("out and x are both buffer 'x', but the export assumes they do not alias"), std::string::npos)
        << m;
    // A buffer of another element type, a scalar for an array, the wrong count, a wrong rank.
    m = refused("[{array: n, shape: [ROWS, COLS]}, {array: x, shape: [ROWS, COLS]}]");
    EXPECT_NE(m.find("out is an array of f32; buffer 'n' is i32"), std::string::npos) << m;
    m = refused("[y, {array: x, shape: [ROWS, COLS]}]");
    EXPECT_NE(m.find("out is a f32 array of 2 dimensions: write {array: BUFFER"), std::string::npos) << m;
    m = refused("[{array: y, shape: [ROWS, COLS]}]");
    EXPECT_NE(m.find("softmax_rows takes 2 arguments: out (f32 array of 2 dimensions), x (f32 array of 2 "
                     "dimensions) (constants are compiled in: {\"TILE\":1024})"),
              std::string::npos)
        << m;
    m = refused("[{array: y, shape: [ROWS]}, {array: x, shape: [ROWS, COLS]}]");
    EXPECT_NE(m.find("expected a list of 2 values, one per dimension"), std::string::npos) << m;
    // What holds at every point loads.
    EXPECT_EQ(refused("[{array: y, shape: [ROWS, COLS]}, {array: x, shape: [ROWS, COLS]}]"), "");
}

TEST(CutileManifest, WhatCannotBeLaunchedIsRefusedByName)
{
    const auto refused = [](const std::function<void(json&)>& edit) {
        CutileProject p;
        p.edit_manifest(edit);
        return error_of([&] { p.load(); });
    };
    std::string m = refused([](json& j) {
        j["launch"]["hidden_parameters"] = json::array({{{"name", "k_param_10"}, {"bytes", 128}, {"align", 64}}});
    });
    EXPECT_NE(m.find("launch.hidden_parameters"), std::string::npos) << m;
    EXPECT_NE(m.find("a TMA descriptor"), std::string::npos) << m;
    m = refused([](json& j) { j["launch"]["cluster"] = json::array({2, 1, 1}); });
    EXPECT_NE(m.find("requires thread block clusters"), std::string::npos) << m;
    m = refused([](json& j) { j["calling_convention"] = "cutile_python_v2"; });
    EXPECT_NE(m.find("'cutile_python_v2' is not a calling convention this harness passes arguments in"),
              std::string::npos)
        << m;
    m = refused([](json& j) { j["dsl"] = "triton"; });
    EXPECT_NE(m.find("a cutile variant reads cuTile's exports"), std::string::npos) << m;
    m = refused([](json& j) { j["target"]["arch"] = 100; });
    EXPECT_NE(m.find("exported for sm_100 only, and the suite's archs include sm_90"), std::string::npos) << m;
    // A base address the buffers' 256-byte alignment cannot promise.
    m = refused([](json& j) { j["parameters"][0]["base_addr_divisible_by"] = 512; });
    EXPECT_NE(m.find("divisible by 512 bytes; a buffer is aligned to 256"), std::string::npos) << m;
}

TEST(CutileManifest, MalformedManifestsAreBadInputNamingTheFile)
{
    const auto refused = [](const std::function<void(json&)>& edit) {
        CutileProject p;
        p.edit_manifest(edit);
        return error_of([&] { p.load(); });
    };
    const std::pair<std::function<void(json&)>, std::string> cases[] = {
        {[](json& j) { j.erase("entry"); }, "entry: missing (the manifest ci/cutile_export.py writes has it)"},
        {[](json& j) { j["entry"] = "k(); system"; }, "a kernel symbol is letters, digits and '_'"},
        {[](json& j) { j["format"] = 2; }, "format 2 is not one this harness reads"},
        {[](json& j) { j["source"] = "../../../../../../etc/passwd"; }, "leads out of the project"},
        {[](json& j) { j["source"] = "/etc/passwd"; }, "not an absolute one"},
        {[](json& j) { j["cubin"] = "../../k.cubin"; }, "the name of a .cubin file beside the manifest"},
        {[](json& j) { j["ptx"] = "k.cubin"; }, "the name of a .ptx file beside the manifest"},
        {[](json& j) { j["cubin_sha256"] = "ABC"; }, "expected a SHA-256 digest"},
        {[](json& j) { j["parameters"][0]["ndim"] = 9; }, "parameters[0].ndim: 9 is outside 1 to 8"},
        {[](json& j) { j["parameters"][0]["index_type"] = "f32"; }, "an array's index type is i32 or i64"},
        {[](json& j) { j["parameters"][0]["type"] = "fp4"; }, "'fp4' is no element type of a suite"},
        {[](json& j) { j["parameters"][0]["kind"] = "tuple"; }, "'tuple': a parameter is an array or a scalar"},
        {[](json& j) { j["parameters"][0]["shape_divisible_by"] = json::array({16}); },
         "expected a list of 2 values, one per dimension"},
        {[](json& j) {
             j["parameters"][0]["stride_divisible_by"] = json::array({0, 1});
         },
         "[0] is 0, outside 1"},
        {[](json& j) {
             j["launch"]["block"] = json::array({2048, 1, 1});
         },
         "[0] is not an integer from 1 to 1024"},
        {[](json& j) { j["parameters"] = "out"; }, "expected a list of parameters"},
    };
    for (const auto& [edit, expected] : cases) {
        const std::string m = refused(edit);
        EXPECT_NE(m.find(expected), std::string::npos) << expected << "\n" << m;
        EXPECT_NE(m.find("softmax_rows_t1024.json"), std::string::npos) << m;
    }
    CutileProject p;
    write_file(p.manifest, "{\"format\": 1,\n  \"dsl\": ");
    const std::string m = error_of([&] { p.load(); });
    EXPECT_NE(m.find("not JSON: the manifest ci/cutile_export.py writes"), std::string::npos) << m;
}

TEST(CutileManifest, StaleExportsAreRefusedUnlessAllowed)
{
    {
        CutileProject p;
        write_file(p.dir.path / "kernels/cutile/softmax.py",
                   read_file(p.dir.path / "kernels/cutile/softmax.py") + "#\n");
        const std::string m = error_of([&] { p.load(); });
        EXPECT_NE(m.find("softmax.py changed since"), std::string::npos) << m;
        // `stale: allow` runs it as it is.
        std::string text = read_file(p.suite_file);
        text.replace(text.find("    grid: [ROWS]\n    args: [{array"), 0, "    stale: allow\n");
        write_file(p.suite_file, text);
        EXPECT_EQ(error_of([&] { p.load(); }), "");
    }
    for (const char* ext : {".cubin", ".ptx"}) {
        CutileProject p;
        const fs::path file = p.dir.path / "kernels/cutile/exported" / (std::string(softmax_export) + ext);
        write_file(file, read_file(file) + "x");
        const std::string m = error_of([&] { p.load(); });
        EXPECT_NE(m.find("was exported with (its SHA-256 differs)"), std::string::npos) << ext << ": " << m;
    }
}

} // namespace cutile_variant_test
