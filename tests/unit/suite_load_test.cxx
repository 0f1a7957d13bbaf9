#include "harness/core/error.hxx"
#include "harness/suite/suite.hxx"
#include "harness/suite/sweep.hxx"
#include "suite_edits.hxx"
#include "test_paths.hxx"

#include <filesystem>
#include <gtest/gtest.h>

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
    int loaded = 0;
    for (const auto& dir : {repo_root() / "suites", repo_root() / "tests" / "suites"})
        for (const auto& entry : fs::directory_iterator(dir))
            if (entry.path().extension() == ".yaml") {
                EXPECT_NO_THROW(load_suite(entry.path())) << entry.path();
                ++loaded;
            }
    EXPECT_GE(loaded, 2);
}

TEST(SuiteLoad, BuiltinVariantsAreCheckedAgainstTheTable)
{
    const std::string cublas =
        "  cublas:\n    builtin: cublas_sgemm\n    args: [A, A, C, {i32: N}, {i32: N}, {i32: N}]\n";
    const Suite s = parse_suite(valid + cublas, suite_path);
    ASSERT_NE(s.find_variant("cublas"), nullptr);
    EXPECT_TRUE(s.find_variant("cublas")->is_builtin());
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
