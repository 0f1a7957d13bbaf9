// A buffer's `min:` and `max:` written as expressions of the sweep parameters: loaded, checked at
// every point with file, line and field, drawn per case, and accepted by `check` and the static tier.

#include "harness/compile/static_tier.hxx"
#include "harness/core/error.hxx"
#include "harness/run/buffer_data.hxx"
#include "harness/suite/suite.hxx"
#include "harness/suite/sweep.hxx"
#include "suite_edits.hxx"
#include "test_files.hxx"
#include "tool_output.hxx"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <gtest/gtest.h>

namespace suite_expressions_in_buffers_test {

namespace fs = std::filesystem;
using namespace harness;

namespace {

const std::string gather_kernel = R"(// out[i] = table[index[i]]: every index must lie in [0, V - 1].
extern "C" __global__ void gather(const float* table, const int* index, float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = table[index[i]];
}
)";

const std::string gather_suite = R"(suite: gather
params:
  N: [1000]
  V: [16, 64]
reference: gather
buffers:
  table: {type: f32, count: V, init: sequence}
  index: {type: i32, count: N, init: uniform, seed: 3, min: 0, max: V - 1}
  weight: {type: f32, count: N, init: uniform, seed: 4, min: -V, max: 2 * V}
  out: {type: f32, count: N, role: out}
variants:
  gather:
    source: ../kernels/gather.cu
    entry: gather
    block: [128]
    grid: [ceil_div(N, 128)]
    args: [table, index, out, {i32: N}]
)";

/// A project holding the gather kernel and a suite; the suite's path.
fs::path write_gather_project(const fs::path& root, const std::string& suite_text)
{
    write_file(root / "kernels" / "gather.cu", gather_kernel);
    fs::create_directories(root / ".git");
    write_file(root / "suites" / "gather.yaml", suite_text);
    return root / "suites" / "gather.yaml";
}

const suite::BufferSpec& buffer(const suite::Suite& s, const std::string& name)
{
    for (const auto& b : s.buffers)
        if (b.name == name) return b;
    throw std::runtime_error("no buffer " + name);
}

std::vector<std::int32_t> ints(const run::Bytes& bytes)
{
    std::vector<std::int32_t> v(bytes.size() / 4);
    std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
}

/// The load error of the gather suite with `from` replaced by `to`.
std::string error_after(const TempDir& dir, const std::string& from, const std::string& to)
{
    return load_error_after_edit(gather_suite, write_gather_project(dir.path, gather_suite), from, to);
}

} // namespace

TEST(SuiteExpressionsInBuffers, BoundsAreReadAsNumbersOrExpressions)
{
    TempDir dir;
    const auto s = suite::load_suite(write_gather_project(dir.path, gather_suite));
    const auto& index = buffer(s, "index");
    EXPECT_EQ(index.min, 0.0);
    EXPECT_FALSE(index.min_expression.has_value());
    ASSERT_TRUE(index.max_expression.has_value());
    EXPECT_EQ(index.max_expression->text(), "V - 1");
    const auto& weight = buffer(s, "weight");
    ASSERT_TRUE(weight.min_expression.has_value());
    EXPECT_EQ(weight.min_expression->text(), "-V");
    // A plain number stays a number, negative and fractional ones too.
    std::string text = gather_suite;
    const std::string bounds = "min: -V, max: 2 * V";
    text.replace(text.find(bounds), bounds.size(), "min: -0.5, max: 1e3");
    const auto numbers = suite::load_suite(write_gather_project(dir.path, text));
    EXPECT_EQ(buffer(numbers, "weight").min, -0.5);
    EXPECT_EQ(buffer(numbers, "weight").max, 1000.0);
    EXPECT_FALSE(buffer(numbers, "weight").min_expression.has_value());
    EXPECT_FALSE(buffer(numbers, "weight").max_expression.has_value());
}

TEST(SuiteExpressionsInBuffers, EachCaseDrawsWithinItsOwnBounds)
{
    TempDir dir;
    const auto s = suite::load_suite(write_gather_project(dir.path, gather_suite));
    const auto& index = buffer(s, "index");
    for (const std::int64_t v : {16, 64}) {
        const suite::Bindings point{{"N", 1000}, {"V", v}};
        const auto bounds = run::value_bounds(index, point);
        EXPECT_EQ(bounds.min, 0.0);
        EXPECT_EQ(bounds.max, static_cast<double>(v - 1));
        const auto drawn = ints(run::initial_contents(index, 1000, point, 1));
        // Every value a valid index into a table of V, and the last one drawn too.
        EXPECT_EQ(*std::min_element(drawn.begin(), drawn.end()), 0);
        EXPECT_EQ(*std::max_element(drawn.begin(), drawn.end()), v - 1);
    }
    const auto weight = run::value_bounds(buffer(s, "weight"), {{"N", 1000}, {"V", 16}});
    EXPECT_EQ(weight.min, -16.0);
    EXPECT_EQ(weight.max, 32.0);
}

TEST(SuiteExpressionsInBuffers, BadBoundsNameFileLineAndField)
{
    TempDir dir;
    // An unknown name, with its line and column.
    std::string e = error_after(dir, "max: V - 1}", "max: W - 1}");
    EXPECT_NE(e.find("gather.yaml:8:"), std::string::npos) << e;
    EXPECT_NE(e.find("buffers.index.max: unknown name 'W'"), std::string::npos) << e;
    // Text that is neither a number nor an expression.
    e = error_after(dir, "max: V - 1}", "max: V -}");
    EXPECT_NE(e.find("gather.yaml:8:"), std::string::npos) << e;
    EXPECT_NE(e.find("buffers.index.max:"), std::string::npos) << e;
    // Bounds the wrong way round at one point only: the point is named.
    e = error_after(dir, "min: 0, max: V - 1}", "min: 20, max: V - 1}");
    EXPECT_NE(e.find("gather.yaml:8:"), std::string::npos) << e;
    EXPECT_NE(e.find("buffers.index: 'max' (15) is below 'min' (20) at N=1000 V=16"), std::string::npos) << e;
    // A bound that cannot be computed at a point.
    e = error_after(dir, "max: V - 1}", "max: 64 / (V - 16)}");
    EXPECT_NE(e.find("buffers.index.max: division by zero"), std::string::npos) << e;
    EXPECT_NE(e.find("V=16"), std::string::npos) << e;
}

TEST(SuiteExpressionsInBuffers, CheckAndTheStaticTierAcceptTheSuite)
{
    TempDir dir;
    const fs::path file = write_gather_project(dir.path, gather_suite);
    const auto o = run_tool_captured({"check", "--no-cache", "--arch", "sm_80", file.string()});
    EXPECT_EQ(o.code, 0) << o.out << o.err;
    EXPECT_NE(o.out.find("gather"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("ok"), std::string::npos) << o.out;

    const auto s = suite::load_suite(file);
    const auto results = compile::run_static_tier(s, {"sm_80"}, nullptr);
    ASSERT_EQ(results.size(), 2u);
    for (const auto& r : results) EXPECT_EQ(r.status, CaseStatus::passed) << r.params_text << ": " << r.message;
}

} // namespace suite_expressions_in_buffers_test
