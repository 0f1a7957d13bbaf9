#include "harness/core/error.hxx"
#include "harness/suite/suite.hxx"
#include "harness/suite/sweep.hxx"
#include "suite_edits.hxx"
#include "test_paths.hxx"

#include <filesystem>
#include <gtest/gtest.h>

namespace suite_load_test {

namespace fs = std::filesystem;
using namespace harness::suite;

namespace {

// Suites are parsed as if they lived in suites/, so relative kernel paths resolve.
const fs::path suite_path = repo_root() / "suites" / "test.yaml";

const std::string valid = R"(suite: demo
params:
  N: [256, 1000]
  S: {from: 1, to: 8, mul: 2}
reference: naive
tolerance: {rel: 1.0e-4, abs: 1.0e-5}
buffers:
  A: {type: f32, count: N*N, init: uniform, seed: 1, min: -1, max: 1}
  C: {type: f32, count: N*N, role: out}
flops: 2*N*N*N
variants:
  naive:
    source: ../kernels/gemm/gemm_naive.cu
    entry: gemm_naive
    block: [16, 16]
    grid: [ceil_div(N, 16), ceil_div(N, 16)]
    args: [A, A, C, {i32: N}, {i32: N}, {i32: N}]
  tiled:
    source: ../kernels/gemm/gemm_smem_tiled.cu
    entry: gemm_smem_tiled<16>
    block: [16, 16]
    grid: [ceil_div(N, 16), ceil_div(N, 16)]
    args: [A, A, C, {i32: N}, {i32: N}, {i32: N}]
)";

/// Replaces the first occurrence of `from` in the valid suite and returns the load error.
std::string error_after(const std::string& from, const std::string& to)
{
    return load_error_after_edit(valid, suite_path, from, to);
}

} // namespace

TEST(SuiteLoad, ValidSuiteLoadsEveryField)
{
    const Suite s = parse_suite(valid, suite_path);
    EXPECT_EQ(s.name, "demo");
    ASSERT_EQ(s.params.size(), 2u);
    EXPECT_EQ(s.params[0].values, (std::vector<std::int64_t>{256, 1000}));
    EXPECT_EQ(s.params[1].values, (std::vector<std::int64_t>{1, 2, 4, 8}));
    EXPECT_EQ(s.reference, "naive");
    EXPECT_DOUBLE_EQ(s.tolerance.rel, 1e-4);
    ASSERT_EQ(s.buffers.size(), 2u);
    EXPECT_EQ(s.buffers[0].init, InitKind::uniform);
    EXPECT_EQ(s.buffers[1].role, BufferRole::out);
    ASSERT_EQ(s.variants.size(), 2u);
    EXPECT_EQ(s.variants[1].launches[0].entry, "gemm_smem_tiled<16>");
    EXPECT_EQ(s.variants[1].launches[0].args.size(), 6u);
    EXPECT_TRUE(s.variants[1].flops.has_value()); // inherited from the suite
    EXPECT_EQ(s.variants[0].launches[0].grid[0].evaluate({{"N", 1000}}), 63);
    EXPECT_TRUE(fs::is_regular_file(s.variants[0].source));
    EXPECT_EQ(s.archs, (std::vector<std::string>{"sm_80", "sm_90"}));
}

TEST(SuiteLoad, TimingSampleLimits)
{
    EXPECT_EQ(parse_suite(valid, suite_path).timing.max_samples, 64);
    // A minimum above the default maximum raises the maximum with it; given both, they must agree.
    std::string more = valid;
    more.replace(more.find("reference: naive"), 16, "reference: naive\ntiming: {min_samples: 100}");
    const Suite s = parse_suite(more, suite_path);
    EXPECT_EQ(s.timing.min_samples, 100);
    EXPECT_EQ(s.timing.max_samples, 100);
    EXPECT_NE(error_after("reference: naive", "reference: naive\ntiming: {min_samples: 8, max_samples: 4}")
                  .find("test.yaml:6:39: timing.max_samples: 4 is below timing.min_samples (8)"),
              std::string::npos);
}

TEST(SuiteLoad, SweepIsTheCartesianProductWithReferenceFirst)
{
    const Suite s = parse_suite(valid, suite_path);
    const auto cases = expand_cases(s);
    ASSERT_EQ(cases.size(), 2u * 4u * 2u);
    EXPECT_EQ(cases[0].params_text, "N=256 S=1");
    EXPECT_EQ(s.variants[cases[0].variant].name, "naive");
    EXPECT_EQ(s.variants[cases[1].variant].name, "tiled");
    EXPECT_EQ(cases[2].params_text, "N=256 S=2");
    EXPECT_EQ(cases.back().params_text, "N=1000 S=8");
}

TEST(SuiteLoad, UnknownKeySuggestsTheRightOne)
{
    const std::string e =
        error_after("    block: [16, 16]\n    grid: [ceil_div(N, 16), ceil_div(N, 16)]\n    args: [A, A, C",
                    "    blok: [16, 16]\n    grid: [ceil_div(N, 16), ceil_div(N, 16)]\n    args: [A, A, C");
    EXPECT_NE(e.find("test.yaml:15:5: variants.naive.blok: unknown key (did you mean 'block'?)"), std::string::npos)
        << e;
}

TEST(SuiteLoad, BadExpressionNamesLineColumnAndToken)
{
    const std::string e =
        error_after("grid: [ceil_div(N, 16), ceil_div(N, 16)]", "grid: [ceil_div(M, 16), ceil_div(N, 16)]");
    EXPECT_NE(e.find("test.yaml:16:21: variants.naive.grid[0]: unknown name 'M'"), std::string::npos) << e;
    EXPECT_NE(e.find("at column 10"), std::string::npos) << e;
}

TEST(SuiteLoad, SyntaxErrorInExpression)
{
    const std::string e = error_after("flops: 2*N*N*N", "flops: 2*N*(N");
    EXPECT_NE(e.find("test.yaml:10:"), std::string::npos) << e;
    EXPECT_NE(e.find("flops: missing ')'"), std::string::npos) << e;
}

TEST(SuiteLoad, MissingRequiredKeys)
{
    EXPECT_NE(error_after("reference: naive\n", "").find("reference: missing required key"), std::string::npos);
    EXPECT_NE(error_after("    entry: gemm_naive\n", "").find("variants.naive.entry: missing required key"),
              std::string::npos);
}

TEST(SuiteLoad, ReferenceMustBeAVariant)
{
    const std::string e = error_after("reference: naive", "reference: naiv");
    EXPECT_NE(e.find("test.yaml:5:12: reference: no variant named 'naiv' (did you mean 'naive'?)"), std::string::npos)
        << e;
}

TEST(SuiteLoad, BufferFieldsAreChecked)
{
    EXPECT_NE(error_after("type: f32, count: N*N, init: uniform", "type: f31, count: N*N, init: uniform")
                  .find("buffers.A.type: unknown type 'f31' (did you mean 'f32'?)"),
              std::string::npos);
    EXPECT_NE(error_after("init: uniform, seed: 1,", "init: uniformly,").find("unknown init 'uniformly'"),
              std::string::npos);
    EXPECT_NE(error_after("init: uniform, seed: 1,", "init: uniform,").find("needs a seed"), std::string::npos);
    EXPECT_NE(error_after("role: out}", "role: output}").find("unknown role 'output'"), std::string::npos);
    EXPECT_NE(error_after("args: [A, A, C,", "args: [A, B, C,").find("variants.naive.args[1]: unknown buffer 'B'"),
              std::string::npos);
    EXPECT_NE(
        error_after("{i32: N}, {i32: N}, {i32: N}]", "{int: N}, {i32: N}, {i32: N}]").find("unknown scalar type 'int'"),
        std::string::npos);
}

TEST(SuiteLoad, SourceMustExist)
{
    const std::string e = error_after("../kernels/gemm/gemm_naive.cu", "../kernels/gemm/missing.cu");
    EXPECT_NE(e.find("variants.naive.source: no such file"), std::string::npos) << e;
}

TEST(SuiteLoad, ParameterRangesAreValidated)
{
    EXPECT_NE(error_after("{from: 1, to: 8, mul: 2}", "{from: 8, to: 1}").find("'to' is below 'from'"),
              std::string::npos);
    EXPECT_NE(
        error_after("{from: 1, to: 8, mul: 2}", "{from: 1, to: 8, mul: 1}").find("params.S.mul: must be at least 2"),
        std::string::npos);
    EXPECT_NE(error_after("N: [256, 1000]", "N: [256, big]").find("params.N[1]: expected an integer, got 'big'"),
              std::string::npos);
}

TEST(SuiteLoad, YamlSyntaxErrorHasPosition)
{
    try {
        parse_suite("suite: x\nparams: [1, 2\n", suite_path);
        FAIL() << "no error";
    } catch (const harness::InputError& e) {
        EXPECT_NE(std::string(e.what()).find("test.yaml:"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("YAML syntax error"), std::string::npos);
    }
}

TEST(SuiteLoad, VariantMustWriteWhatTheReferenceWrites)
{
    std::string text = valid + "    buffers:\n      D: {type: f32, count: N, role: out}\n";
    text.replace(text.rfind("args: [A, A, C"), 14, "args: [A, A, D");
    try {
        parse_suite(text, suite_path);
        FAIL() << "no error";
    } catch (const harness::InputError& e) {
        EXPECT_NE(std::string(e.what()).find("writes buffer 'D', which the reference variant 'naive' does not write"),
                  std::string::npos)
            << e.what();
    }
}

TEST(SuiteLoad, EveryCommittedSuiteLoads)
{
    ::setenv("HARNESS_TEST_MODULE_DIR", HARNESS_TEST_MODULE_DIR,
             0); // a copied build may point elsewhere // tests/suites/nvcc_modules.yaml
    int loaded = 0;
    for (const auto& dir : {repo_root() / "suites", repo_root() / "tests" / "suites"}) {
        // A test suite may plant a change in a committed suite and name its kernel in kernels/,
        // outside tests/ (tests/suites/alignment_scan_448.yaml), as --sources-anywhere lets it.
        LoadOptions options;
        options.sources_anywhere = dir != repo_root() / "suites";
        for (const auto& entry : fs::directory_iterator(dir))
            if (entry.path().extension() == ".yaml") {
                EXPECT_NO_THROW(load_suite(entry.path(), options)) << entry.path();
                ++loaded;
            }
    }
    EXPECT_GE(loaded, 2);
}

TEST(SuiteLoad, BuiltinVariantsAreCheckedAgainstTheTable)
{
    const std::string cublas =
        "  cublas:\n    builtin: cublas_sgemm\n    args: [A, A, C, {i32: N}, {i32: N}, {i32: N}]\n";
    const Suite s = parse_suite(valid + cublas, suite_path);
    ASSERT_NE(s.find_variant("cublas"), nullptr);
    EXPECT_EQ(s.find_variant("cublas")->kind, VariantKind::builtin);
    EXPECT_EQ(s.find_variant("cublas")->launches[0].args.size(), 6u);

    auto error = [&](const std::string& text) {
        try {
            parse_suite(valid + text, suite_path);
        } catch (const harness::InputError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(error("  cublas:\n    builtin: cublas_sgem\n    args: [A]\n")
                  .find("unknown built-in 'cublas_sgem' (did you mean 'cublas_sgemm'?)"),
              std::string::npos);
    EXPECT_NE(error("  cublas:\n    builtin: cublas_sgemm\n    args: [A, A, C]\n").find("cublas_sgemm takes [A, B, C"),
              std::string::npos);
    EXPECT_NE(error("  cublas:\n    builtin: cublas_sgemm\n    args: [A, A, {i32: N}, C, {i32: N}, {i32: N}]\n")
                  .find("variants.cublas.args[2]"),
              std::string::npos);
}

TEST(SuiteLoad, EveryElementTypeLoadsForBuffersAndScalars)
{
    for (const auto& t : element_type_table()) {
        const std::string name = t.name;
        std::string text = valid;
        text.replace(text.find("reference: naive"), 16, "archs: [sm_89, sm_90]\nreference: naive");
        text.replace(text.find("flops:"), 6,
                     "  X: {type: " + name + ", count: N, init: uniform, seed: 4, min: -1, max: 1}\nflops:");
        const std::string scalar = is_floating(t.type) ? "{" + name + ": 1.5}" : "{" + name + ": 3}";
        text.replace(text.find("{i32: N}]"), 9, "{i32: N}, X, " + scalar + "]");
        const Suite s = parse_suite(text, suite_path);
        ASSERT_EQ(s.buffers.size(), 3u);
        EXPECT_EQ(s.buffers[2].type, t.type) << name;
        const auto& args = s.variants[0].launches[0].args;
        ASSERT_EQ(args.size(), 8u);
        EXPECT_EQ(args[6].buffer, "X");
        EXPECT_EQ(args[7].scalar_type, t.type) << name;
        if (is_floating(t.type))
            EXPECT_EQ(args[7].literal, 1.5) << name;
        else
            EXPECT_EQ(args[7].scalar.evaluate({}), 3) << name;
    }
}

TEST(SuiteLoad, UnknownElementTypesNameTheField)
{
    std::string e = error_after("type: f32, count: N*N, init: uniform", "type: bf15, count: N*N, init: uniform");
    EXPECT_NE(e.find("test.yaml:8:13: buffers.A.type: unknown type 'bf15' (did you mean 'bf16'?); one of f64, f32, "
                     "f16, bf16, fp8_e4m3, fp8_e5m2, i8, u8, i16, u16, i32, u32, i64, u64"),
              std::string::npos)
        << e;
    e = error_after("{i32: N}, {i32: N}, {i32: N}]", "{half: 1.5}, {i32: N}, {i32: N}]");
    EXPECT_NE(e.find("test.yaml:17:22: variants.naive.args[3]: unknown scalar type 'half'"), std::string::npos) << e;
}

TEST(SuiteLoad, Fp8NeedsEveryArchitectureToBeSm89OrNewer)
{
    // Without `archs`, the suite covers sm_80: refused where the type is written.
    std::string e = error_after("type: f32, count: N*N, init: uniform", "type: fp8_e4m3, count: N*N, init: uniform");
    EXPECT_NE(e.find("test.yaml:8:13: buffers.A.type: a buffer of type fp8_e4m3 needs sm_89 or newer, but the "
                     "suite's archs include sm_80 (a suite without `archs` covers sm_80 and sm_90); list only sm_89 "
                     "and newer architectures in `archs`"),
              std::string::npos)
        << e;
    std::string text = valid;
    text.replace(text.find("reference: naive"), 16, "archs: [sm_90, sm_86]\nreference: naive");
    e = load_error_after_edit(text, suite_path, "{i32: N}, {i32: N}, {i32: N}]", "{fp8_e5m2: 0.5}, {i32: N}]");
    EXPECT_NE(e.find("test.yaml:18:22: variants.naive.args[3].fp8_e5m2: a scalar of type fp8_e5m2 needs sm_89 or "
                     "newer, but the suite's archs include sm_86; list only sm_89"),
              std::string::npos)
        << e;
    // A variant's own buffer is checked too.
    e = error_after("    entry: gemm_naive\n",
                    "    entry: gemm_naive\n    buffers:\n      A: {type: fp8_e5m2, count: N}\n");
    EXPECT_NE(e.find("variants.naive.buffers.A.type: a buffer of type fp8_e5m2 needs sm_89"), std::string::npos) << e;
    // sm_89 and newer (with a/f suffixes) load; round_to FP8 only shapes data and loads anywhere.
    text = valid;
    text.replace(text.find("reference: naive"), 16, "archs: [sm_89, sm_90a, sm_100f]\nreference: naive");
    text.replace(text.find("type: f32, count: N*N, init: uniform"), 36, "type: fp8_e4m3, count: N*N, init: uniform");
    EXPECT_EQ(parse_suite(text, suite_path).buffers[0].type, ElementType::fp8_e4m3);
    text = valid;
    text.replace(text.find("init: uniform, seed: 1,"), 23, "init: uniform, seed: 1, round_to: fp8_e4m3,");
    EXPECT_EQ(parse_suite(text, suite_path).buffers[0].round_to, ElementType::fp8_e4m3);
}

TEST(SuiteLoad, RoundToTakesATypeTheBufferHolds)
{
    std::string text = valid;
    text.replace(text.find("init: uniform, seed: 1,"), 23, "init: uniform, seed: 1, round_to: bf16,");
    const Suite s = parse_suite(text, suite_path);
    EXPECT_EQ(s.buffers[0].type, ElementType::f32);
    EXPECT_EQ(s.buffers[0].round_to, ElementType::bf16);
    EXPECT_FALSE(s.buffers[1].round_to.has_value());

    std::string e = error_after("type: f32, count: N*N, init: uniform, seed: 1,",
                                "type: f16, count: N*N, init: uniform, seed: 1, round_to: bf16,");
    EXPECT_NE(e.find("test.yaml:8:64: buffers.A.round_to: f16 buffers cannot hold every bf16 value exactly; round_to "
                     "takes a type whose every value f16 holds (fp8_e4m3, fp8_e5m2, i8, u8)"),
              std::string::npos)
        << e;
    e = error_after("type: f32, count: N*N, init: uniform, seed: 1,",
                    "type: u8, count: N*N, init: uniform, seed: 1, round_to: i8,");
    EXPECT_NE(e.find("buffers.A.round_to: u8 buffers cannot hold every i8 value exactly; round_to takes a type whose "
                     "every value u8 holds (none but u8 itself)"),
              std::string::npos)
        << e;
    e = error_after("init: uniform, seed: 1,", "init: uniform, seed: 1, round_to: bf17,");
    EXPECT_NE(e.find("buffers.A.round_to: unknown type 'bf17' (did you mean 'bf16'?)"), std::string::npos) << e;
}

TEST(SuiteLoad, ScalarsMustFitTheirType)
{
    const auto scalar_error = [](const std::string& scalar) {
        return error_after("{i32: N}, {i32: N}, {i32: N}]", scalar + ", {i32: N}, {i32: N}]");
    };
    std::string e = scalar_error("{i8: 200}");
    EXPECT_NE(e.find("test.yaml:17:26: variants.naive.args[3].i8: 200 at N=256 S=1 does not fit i8"), std::string::npos)
        << e;
    EXPECT_NE(scalar_error("{u16: -1}").find("variants.naive.args[3].u16: -1 at N=256 S=1 does not fit u16"),
              std::string::npos);
    EXPECT_NE(scalar_error("{i16: N*N}").find("65536 at N=256 S=1 does not fit i16"), std::string::npos);
    e = scalar_error("{f16: 70000.0}");
    EXPECT_NE(e.find("variants.naive.args[3].f16: 70000 is beyond the largest finite f16 (65504)"), std::string::npos)
        << e;
    e = scalar_error("{f16: N*N}");
    EXPECT_NE(e.find("variants.naive.args[3].f16: 65536 at N=256 S=1 is beyond the largest finite f16 (65504)"),
              std::string::npos)
        << e;
    EXPECT_NE(scalar_error("{bf16: -1e39}").find("-1e+39 is beyond the largest finite bf16"), std::string::npos);
    // f32 keeps converting as C++ does, as it always has.
    EXPECT_NO_THROW(parse_suite(std::string(valid).replace(valid.find("{i32: N}]"), 9, "{f32: 1.5e40}]"), suite_path));
}

TEST(SuiteLoad, BuiltinsRefuseBuffersOfAnotherType)
{
    const std::string cublas = "  cublas:\n    builtin: cublas_sgemm\n    buffers:\n      A: {type: f32, count: N*N}\n"
                               "    args: [A, A, C, {i32: N}, {i32: N}, {i32: N}]\n";
    const std::string e = load_error_after_edit(valid + cublas, suite_path, "A: {type: f32, count: N*N}\n",
                                                "A: {type: bf16, count: N*N}\n");
    EXPECT_NE(e.find("variants.cublas.args[0]: cublas_sgemm reads f32 buffers; 'A' is bf16"), std::string::npos) << e;
}

} // namespace suite_load_test
