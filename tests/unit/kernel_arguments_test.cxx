// A suite's kernel arguments against the parameters the compiled kernel declares: `harness check`
// and `harness run` (the static tier too) refuse, as bad input, an argument whose size is not its
// parameter's and a count of arguments other than the kernel's, before anything is launched.

#include "harness/cli/commands.hxx"
#include "harness/compile/kernel_arguments.hxx"
#include "harness/suite/suite.hxx"
#include "test_files.hxx"

#include <filesystem>
#include <gtest/gtest.h>
#include <string>
#include <utility>

namespace kernel_arguments_test {

using namespace harness;
namespace fs = std::filesystem;

namespace {

// One kernel with a pointer, a __half and an int parameter (8, 2 and 4 bytes), and one with an int
// and a pointer, for a two-launch variant.
const char* kernels = R"(#include <cuda_fp16.h>
extern "C" __global__ void half_scale(__half* x, __half s, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = __hmul(x[i], s);
}
extern "C" __global__ void fill(int n, __half* x)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = __float2half(1.0f);
}
)";

const std::string valid = R"(suite: args
archs: [sm_90]
params:
  N: [256, 1024]
reference: scale
buffers:
  x: {type: f16, count: N, init: ones, role: inout}
variants:
  scale:
    source: ../kernels/half_scale.cu
    entry: half_scale
    block: [256]
    grid: [ceil_div(N, 256)]
    args: [x, {f16: 0.75}, {i32: N}]
  two:
    source: ../kernels/half_scale.cu
    launches:
      - {entry: fill, block: [256], grid: [ceil_div(N, 256)], args: [{i32: N}, x]}
      - {entry: half_scale, block: [256], grid: [ceil_div(N, 256)], args: [x, {f16: 2}, {i32: N}]}
)";

/// A scratch project holding the kernels and the suite `text` as suites/args.yaml.
struct Project {
    TempDir dir{"harness-kernel-args"};
    fs::path suite;
    explicit Project(const std::string& text)
    {
        write_file(dir.path / "kernels" / "half_scale.cu", kernels);
        suite = dir.path / "suites" / "args.yaml";
        write_file(suite, text);
    }
};

/// `valid` with the first `from` replaced by `to`.
std::string edited(const std::string& from, const std::string& to)
{
    std::string text = valid;
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    return text;
}

/// "LINE:COLUMN" of the first `what` in `text`, 1-based, as the loader reports positions.
std::string position_of(const std::string& text, const std::string& what)
{
    const auto at = text.find(what);
    const auto line_start = text.rfind('\n', at);
    const auto line = std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n') + 1;
    const auto column = at - (line_start == std::string::npos ? 0 : line_start + 1) + 1;
    return std::to_string(line) + ":" + std::to_string(column);
}

/// The tool's exit code and what it printed to stderr.
std::pair<int, std::string> run_tool(const std::vector<std::string>& args)
{
    testing::internal::CaptureStdout();
    testing::internal::CaptureStderr();
    const int code = cli::run_tool(args);
    testing::internal::GetCapturedStdout();
    return {code, testing::internal::GetCapturedStderr()};
}

} // namespace

TEST(KernelArguments, ArgumentsThatFitTheParametersPass)
{
    Project p(valid);
    EXPECT_EQ(run_tool({"check", "--no-cache", p.suite.string()}).first, 0);
    EXPECT_EQ(run_tool({"run", "--static", "--no-ci", "--no-cache", p.suite.string(), "--out",
                        (p.dir.path / "reports").string()})
                  .first,
              0);
}

TEST(KernelArguments, AScalarOfAnotherSizeIsBadInputNamingFileVariantArgumentAndBothSizes)
{
    const std::string text = edited("{f16: 0.75}", "{f32: 0.75}");
    Project p(text);
    const auto [code, err] = run_tool({"check", "--no-cache", p.suite.string()});
    EXPECT_EQ(code, 2) << err;
    const std::string expected = p.suite.string() + ":" + position_of(text, "{f32: 0.75}") +
                                 ": variants.scale.args[1]: {f32: 0.75} is 4 bytes, but parameter 1 of kernel "
                                 "half_scale is 2 bytes (2 bytes: f16, bf16, i16 or u16)";
    EXPECT_NE(err.find(expected), std::string::npos) << err;

    // `run` refuses it before anything runs, the static tier included: no report is written.
    const fs::path out = p.dir.path / "reports";
    const auto [run_code, run_err] =
        run_tool({"run", "--static", "--no-ci", "--no-cache", p.suite.string(), "--out", out.string()});
    EXPECT_EQ(run_code, 2) << run_err;
    EXPECT_NE(run_err.find(expected), std::string::npos) << run_err;
    EXPECT_FALSE(fs::exists(out / "args" / "results.csv"));
}

TEST(KernelArguments, ABufferForAValueParameterNamesThePointer)
{
    const std::string text = edited("args: [x, {f16: 0.75}, {i32: N}]", "args: [x, {f16: 0.75}, x]");
    Project p(text);
    const auto [code, err] = run_tool({"check", "--no-cache", p.suite.string()});
    EXPECT_EQ(code, 2) << err;
    EXPECT_NE(err.find("variants.scale.args[2]: buffer x is 8 bytes (a pointer), but parameter 2 of kernel "
                       "half_scale is 4 bytes (4 bytes: f32, i32 or u32)"),
              std::string::npos)
        << err;
}

TEST(KernelArguments, ACountOtherThanTheParametersIsBadInput)
{
    const std::string text = edited("args: [x, {f16: 0.75}, {i32: N}]", "args: [x, {f16: 0.75}]");
    Project p(text);
    const auto [code, err] = run_tool({"check", "--no-cache", p.suite.string()});
    EXPECT_EQ(code, 2) << err;
    EXPECT_NE(err.find(p.suite.string() + ":" + position_of(text, "x, {f16: 0.75}]") +
                       ": variants.scale.args: 2 arguments, but kernel half_scale takes 3 parameters (of 8, 2 and 4 "
                       "bytes)"),
              std::string::npos)
        << err;
    const auto [run_code, run_err] = run_tool(
        {"run", "--static", "--no-ci", "--no-cache", p.suite.string(), "--out", (p.dir.path / "reports").string()});
    EXPECT_EQ(run_code, 2) << run_err;
}

TEST(KernelArguments, CheckSaysUpFrontWhatDoesNotFitAndCallsNoVariantOk)
{
    // Every variant compiles; one's arguments do not fit its kernel.
    Project p(edited("args: [x, {f16: 0.75}, {i32: N}]", "args: [x, {f16: 0.75}]"));
    testing::internal::CaptureStdout();
    testing::internal::CaptureStderr();
    const int code = cli::run_tool({"check", "--no-cache", "--arch", "sm_90", p.suite.string()});
    const std::string out = testing::internal::GetCapturedStdout();
    testing::internal::GetCapturedStderr();
    EXPECT_EQ(code, 2);
    const auto problem = out.find("arguments do not fit the kernels:");
    ASSERT_NE(problem, std::string::npos) << out;
    // The problem comes before the variants' lines, none of which says "ok".
    const auto first_variant = out.find("sm_90    scale");
    ASSERT_NE(first_variant, std::string::npos) << out;
    EXPECT_LT(problem, first_variant) << out;
    EXPECT_EQ(out.find(" ok"), std::string::npos) << out;
    EXPECT_NE(out.find("compiled"), std::string::npos) << out;
}

TEST(KernelArguments, EachLaunchOfAVariantIsChecked)
{
    // The first launch's kernel takes (int, __half*): its arguments swapped fit neither.
    Project p(edited("args: [{i32: N}, x]", "args: [x, {i32: N}]"));
    const auto [code, err] = run_tool({"check", "--no-cache", p.suite.string()});
    EXPECT_EQ(code, 2) << err;
    EXPECT_NE(err.find("variants.two.launches[0].args[0]: buffer x is 8 bytes (a pointer), but parameter 0 of kernel "
                       "fill is 4 bytes"),
              std::string::npos)
        << err;
    EXPECT_NE(err.find("variants.two.launches[0].args[1]: {i32: N} is 4 bytes, but parameter 1 of kernel fill is 8 "
                       "bytes (8 bytes: a buffer, f64, i64 or u64)"),
              std::string::npos)
        << err;
    EXPECT_EQ(err.find("launches[1]"), std::string::npos) << err;
}

TEST(KernelArguments, ArgumentSizes)
{
    suite::ArgSpec buffer;
    buffer.buffer = "x";
    EXPECT_EQ(compile::argument_bytes(buffer), 8u);
    suite::ArgSpec scalar;
    for (const auto& [type, bytes] : {std::pair{suite::ElementType::f16, 2u}, std::pair{suite::ElementType::f64, 8u},
                                      std::pair{suite::ElementType::fp8_e4m3, 1u}}) {
        scalar.scalar_type = type;
        EXPECT_EQ(compile::argument_bytes(scalar), bytes);
    }
}

} // namespace kernel_arguments_test
