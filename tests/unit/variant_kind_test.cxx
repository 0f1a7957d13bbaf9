// A variant's kind is what the loader sets from the key that names it, never what a stage infers
// from which path is empty: each kind's key makes that kind, one key wins over another in a fixed
// order, and every question asked of a kind (does it compile a module, how does its line table
// name files, which file do reports name, what does each launch run) has its answer.
#include "harness/core/error.hxx"
#include "harness/suite/compile_params.hxx"
#include "harness/suite/suite.hxx"
#include "test_paths.hxx"

#include <gtest/gtest.h>

namespace variant_kind_test {

using namespace harness;
using suite::VariantKind;
namespace fs = std::filesystem;

namespace {

constexpr VariantKind every_kind[] = {VariantKind::source, VariantKind::module, VariantKind::triton,
                                      VariantKind::cutile, VariantKind::builtin};

/// A suite in the repository's suites/ folder with one variant of each kind.
suite::Suite suite_of_every_kind()
{
    return suite::parse_suite(R"(suite: kinds
archs: [sm_90]
params:
  ROWS: [64]
  COLS: [256]
reference: cuda
buffers:
  x: {type: f32, count: ROWS*COLS, init: uniform, seed: 7, min: -8, max: 8, role: in}
  y: {type: f32, count: ROWS*COLS, init: zeros, role: out}
variants:
  cuda:
    source: ../kernels/softmax/softmax_rows.cu
    entry: softmax_rows<COLS>
    block: [256]
    grid: [ROWS]
    args: [y, x, {i32: COLS}]
  built:
    module: ../build/modules/softmax_rows.cubin
    entry: softmax_rows
    block: [256]
    grid: [ROWS]
    args: [y, x, {i32: COLS}]
  triton:
    triton: ../kernels/triton/exported/softmax_rows_b1024.json
    grid: [ROWS]
    args: [y, x, COLS]
  tile:
    cutile: ../kernels/cutile/exported/softmax_rows_t1024.json
    grid: [ROWS]
    args:
      - {array: y, shape: [ROWS, COLS]}
      - {array: x, shape: [ROWS, COLS]}
  library:
    builtin: cublas_sgemm
    args: [x, x, y, {i32: ROWS}, {i32: COLS}, {i32: 1}]
)",
                              repo_root() / "suites" / "kinds.yaml");
}

} // namespace

TEST(VariantKind, TheLoaderSetsTheKindOfTheKeyThatNamesIt)
{
    const suite::Suite s = suite_of_every_kind();
    EXPECT_EQ(s.find_variant("cuda")->kind, VariantKind::source);
    EXPECT_EQ(s.find_variant("built")->kind, VariantKind::module);
    EXPECT_EQ(s.find_variant("triton")->kind, VariantKind::triton);
    EXPECT_EQ(s.find_variant("tile")->kind, VariantKind::cutile);
    EXPECT_EQ(s.find_variant("library")->kind, VariantKind::builtin);
    for (const VariantKind kind : every_kind) {
        const auto it = std::find_if(s.variants.begin(), s.variants.end(),
                                     [&](const suite::VariantSpec& v) { return v.kind == kind; });
        ASSERT_NE(it, s.variants.end()) << suite::variant_kind_key(kind);
    }
    // Each kind's key is the one the suite writes.
    EXPECT_STREQ(suite::variant_kind_key(VariantKind::source), "source");
    EXPECT_STREQ(suite::variant_kind_key(VariantKind::module), "module");
    EXPECT_STREQ(suite::variant_kind_key(VariantKind::triton), "triton");
    EXPECT_STREQ(suite::variant_kind_key(VariantKind::cutile), "cutile");
    EXPECT_STREQ(suite::variant_kind_key(VariantKind::builtin), "builtin");
}

TEST(VariantKind, EachQuestionOfAKindHasItsAnswer)
{
    const suite::Suite s = suite_of_every_kind();
    const suite::Bindings point{{"ROWS", 64}, {"COLS", 256}};
    const auto& cuda = *s.find_variant("cuda");
    const auto& built = *s.find_variant("built");
    const auto& triton = *s.find_variant("triton");
    const auto& tile = *s.find_variant("tile");
    const auto& library = *s.find_variant("library");

    EXPECT_TRUE(suite::runs_module_kernels(cuda.kind));
    EXPECT_TRUE(suite::runs_module_kernels(built.kind));
    EXPECT_TRUE(suite::runs_module_kernels(triton.kind));
    EXPECT_TRUE(suite::runs_module_kernels(tile.kind));
    EXPECT_FALSE(suite::runs_module_kernels(library.kind));

    // NVRTC's line table names the file as the harness handed it; the others as built elsewhere.
    EXPECT_FALSE(suite::names_files_as_built(cuda.kind));
    EXPECT_TRUE(suite::names_files_as_built(built.kind));
    EXPECT_TRUE(suite::names_files_as_built(triton.kind));
    EXPECT_TRUE(suite::names_files_as_built(tile.kind));

    EXPECT_EQ(suite::kernel_source_file(cuda), repo_root() / "kernels/softmax/softmax_rows.cu");
    EXPECT_EQ(suite::kernel_source_file(triton), repo_root() / "kernels/triton/softmax.py");
    EXPECT_EQ(suite::kernel_source_file(tile), repo_root() / "kernels/cutile/softmax.py");
    EXPECT_TRUE(suite::kernel_source_file(built).empty());
    EXPECT_TRUE(suite::kernel_source_file(library).empty());

    // Reports name each launch's kernel and file: the template argument compiled, the Triton
    // kernel's symbol, the library routine; the .cu, the .py, the module as written.
    const auto launch_of = [&](const suite::VariantSpec& v) { return suite::case_launches(s, v, point).at(0); };
    EXPECT_EQ(launch_of(cuda).entry, "softmax_rows<256>");
    EXPECT_EQ(launch_of(cuda).file, "kernels/softmax/softmax_rows.cu");
    EXPECT_EQ(launch_of(built).entry, "softmax_rows");
    EXPECT_EQ(launch_of(built).file, "../build/modules/softmax_rows.cubin");
    EXPECT_EQ(launch_of(triton).entry, "softmax_rows");
    EXPECT_EQ(launch_of(triton).file, "kernels/triton/softmax.py");
    EXPECT_EQ(launch_of(tile).entry, "softmax_rows_Kt1_A2f32_1l0_2t1_p16_A2f32_1l0_2t1_p16_I1024");
    EXPECT_EQ(launch_of(tile).file, "kernels/cutile/softmax.py");
    EXPECT_EQ(launch_of(library).entry, "cublas_sgemm");
    EXPECT_EQ(launch_of(library).file, "");
}

TEST(VariantKind, OneKeyWinsOverAnotherInAFixedOrder)
{
    // builtin, then triton, then cutile, then module, then source: the kind's own loader then refuses the
    // other kind's key by name.
    const auto message = [](const std::string& variant) {
        try {
            suite::parse_suite("suite: k\narchs: [sm_90]\nparams: {N: [4]}\nreference: v\nbuffers:\n"
                               "  x: {type: f32, count: N}\nvariants:\n  v:\n" +
                                   variant,
                               repo_root() / "suites" / "k.yaml");
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string("loaded");
    };
    const std::string launch = "    entry: k\n    block: [32]\n    grid: [1]\n    args: [x]\n";
    EXPECT_NE(message("    builtin: cublas_sgemm\n    source: ../kernels/softmax/softmax_rows.cu\n" + launch)
                  .find("variants.v.source"),
              std::string::npos);
    EXPECT_NE(message("    triton: ../kernels/triton/exported/softmax_rows_b1024.json\n    module: m.cubin\n"
                      "    grid: [1]\n    args: [x, x, 4]\n")
                  .find("a 'triton' variant takes 'module' from its manifest"),
              std::string::npos);
    EXPECT_NE(message("    module: ../build/m.cubin\n    source: ../kernels/softmax/softmax_rows.cu\n" + launch)
                  .find("a 'module' variant is built already: 'source' does not apply"),
              std::string::npos);
    EXPECT_NE(message(launch).find("variants.v.source: missing required key (or give 'module')"), std::string::npos);
}

} // namespace variant_kind_test
