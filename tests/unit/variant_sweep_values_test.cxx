// A variant's own sweep values (`params:` under the variant): its cases at its own points only, the
// reference at every point so that each case is verified, and cases of different variants at the
// same values sharing one point index.

#include "harness/compile/static_tier.hxx"
#include "harness/core/error.hxx"
#include "harness/suite/suite.hxx"
#include "harness/suite/sweep.hxx"
#include "suite_edits.hxx"
#include "test_files.hxx"
#include "tool_output.hxx"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <map>
#include <random>
#include <set>
#include <sys/resource.h>

namespace variant_sweep_values_test {

namespace fs = std::filesystem;
using namespace harness;

namespace {

const std::string scale_kernel = R"(// out[i] = 2 * in[i], at any block size.
extern "C" __global__ void scale(const float* in, float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * in[i];
}
)";

const std::string block_sizes_suite = R"(suite: block_sizes
params:
  N: [1000, 4096]
  BS: [256]
reference: plain
buffers:
  in: {type: f32, count: N, init: uniform, seed: 1}
  out: {type: f32, count: N, role: out}
variants:
  plain:
    source: ../kernels/scale.cu
    entry: scale
    block: [BS]
    grid: [ceil_div(N, BS)]
    args: [in, out, {i32: N}]
  small:
    params: {BS: [32, 64, 256]}
    source: ../kernels/scale.cu
    entry: scale
    block: [BS]
    grid: [ceil_div(N, BS)]
    args: [in, out, {i32: N}]
  wide:
    params:
      BS: {from: 512, to: 1024, mul: 2}
    source: ../kernels/scale.cu
    entry: scale
    block: [BS]
    grid: [ceil_div(N, BS)]
    args: [in, out, {i32: N}]
)";

/// A project holding the kernel and the suite; the suite's path.
fs::path write_scale_project(const fs::path& root, const std::string& suite_text)
{
    write_file(root / "kernels" / "scale.cu", scale_kernel);
    fs::create_directories(root / ".git");
    write_file(root / "suites" / "block_sizes.yaml", suite_text);
    return root / "suites" / "block_sizes.yaml";
}

/// The params_text of each variant's cases, by variant name.
std::map<std::string, std::vector<std::string>> cases_by_variant(const suite::Suite& s)
{
    std::map<std::string, std::vector<std::string>> out;
    for (const auto& c : suite::expand_cases(s)) out[s.variants[c.variant].name].push_back(c.params_text);
    return out;
}

/// `text` with its `block: [BS]` replaced by `block`.
std::string replace_block(std::string text, const std::string& block)
{
    const std::string old = "block: [BS]";
    return text.replace(text.find(old), old.size(), block);
}

/// The sweep as the product of every parameter's values (the suite's, then the variants' own in
/// order of appearance, the last parameter fastest), keeping the points of the suite's own product
/// and those some variant other than the reference runs at: what sweep_points gives, built the
/// long way.
std::vector<suite::Bindings> whole_product_kept(const suite::Suite& s)
{
    const auto holds = [](const std::vector<std::int64_t>& values, std::int64_t v) {
        return std::find(values.begin(), values.end(), v) != values.end();
    };
    std::vector<std::vector<std::int64_t>> values;
    for (const auto& p : s.params) {
        auto& all = values.emplace_back(p.values);
        for (const auto& v : s.variants)
            for (const auto& own : v.params)
                if (own.name == p.name)
                    for (const auto value : own.values)
                        if (!holds(all, value)) all.push_back(value);
    }
    std::vector<suite::Bindings> points{suite::Bindings{}};
    for (std::size_t k = 0; k < s.params.size(); ++k) {
        std::vector<suite::Bindings> next;
        for (const auto& point : points)
            for (const auto value : values[k]) {
                auto b = point;
                b[s.params[k].name] = value;
                next.push_back(std::move(b));
            }
        points = std::move(next);
    }
    std::erase_if(points, [&](const suite::Bindings& point) {
        const bool in_suite = std::all_of(s.params.begin(), s.params.end(),
                                          [&](const suite::ParamSpec& p) { return holds(p.values, point.at(p.name)); });
        return !in_suite && std::none_of(s.variants.begin(), s.variants.end(), [&](const suite::VariantSpec& v) {
            return v.name != s.reference && suite::runs_at(s, v, point);
        });
    });
    return points;
}

/// Five parameters of one value, and five variants that each give one of them `values` values of
/// their own (`{from: 2, to: 1 + values}`): the product of every value is values^5 points, of which
/// 1 + 5 x values run.
std::string five_own_ranges_suite(int values)
{
    std::string text = "suite: five_ranges\narchs: [sm_90]\nparams: {P1: [1], P2: [1], P3: [1], P4: [1], P5: [1]}\n"
                       "reference: r\nbuffers:\n  in: {type: f32, count: 256, init: uniform, seed: 1}\n"
                       "  out: {type: f32, count: 256, role: out}\nvariants:\n";
    const std::string fields =
        "source: ../kernels/scale.cu, entry: scale, block: [256], grid: [1], args: [in, out, {i32: 256}]}\n";
    text += "  r: {" + fields;
    for (int i = 1; i <= 5; ++i)
        text += fmt::format("  v{}: {{params: {{P{}: {{from: 2, to: {}}}}}, ", i, i, 1 + values) + fields;
    return text;
}

} // namespace

TEST(VariantSweepValues, OnlyThePointsSomeVariantRunsAtAreBuiltNeverTheProductOfEveryValue)
{
    TempDir dir;
    const fs::path file = write_scale_project(dir.path, five_own_ranges_suite(199));
    // 199^5 = 3e11 points in the product of every value; the loader builds the 996 that run, and
    // does it within a 1 GiB address space (in a child process, so that the limit stays there).
    const auto load_within_a_gibibyte = [&] {
        rlimit limit{};
        limit.rlim_cur = limit.rlim_max = rlim_t{1} << 30;
        setrlimit(RLIMIT_AS, &limit);
        try {
            const auto s = suite::load_suite(file);
            const bool right = suite::sweep_points(s).size() == 996 && suite::expand_cases(s).size() == 1991;
            std::_Exit(right ? 0 : 1);
        } catch (const std::bad_alloc&) {
            std::_Exit(3);
        }
    };
    EXPECT_EXIT(load_within_a_gibibyte(), testing::ExitedWithCode(0), "");
    const auto s = suite::load_suite(file);
    const auto cases = cases_by_variant(s);
    ASSERT_EQ(cases.at("v3").size(), 199u);
    EXPECT_EQ(cases.at("v3").front(), "P1=1 P2=1 P3=2 P4=1 P5=1");
    EXPECT_EQ(cases.at("v3").back(), "P1=1 P2=1 P3=200 P4=1 P5=1");
    EXPECT_EQ(cases.at("r").size(), 996u);
}

TEST(VariantSweepValues, ThePointsAreThoseOfTheWholeProductKeptInItsOrder)
{
    // Random sweeps, with values a suite lists twice and variants that share values, against the
    // product of every value filtered point by point.
    std::mt19937 random(20261201);
    std::uniform_int_distribution<int> param_count(1, 3), value_count(1, 4), value(1, 6), coin(0, 2);
    for (int trial = 0; trial < 300; ++trial) {
        suite::Suite s;
        s.reference = "ref";
        const int params = param_count(random);
        for (int k = 0; k < params; ++k) {
            auto& p = s.params.emplace_back();
            p.name = "P" + std::to_string(k);
            for (int n = value_count(random); n > 0; --n) p.values.push_back(value(random));
        }
        s.variants.emplace_back().name = "ref";
        for (int v = 0; v < 3; ++v) {
            auto& variant = s.variants.emplace_back();
            variant.name = "v" + std::to_string(v);
            for (const auto& p : s.params)
                if (coin(random) == 0) {
                    auto& own = variant.params.emplace_back();
                    own.name = p.name;
                    for (int n = value_count(random); n > 0; --n) own.values.push_back(value(random));
                }
        }
        const auto expected = whole_product_kept(s);
        ASSERT_EQ(suite::sweep_points(s), expected) << "trial " << trial;
        for (const auto& v : s.variants) {
            if (v.name == s.reference) continue;
            const auto points = std::count_if(expected.begin(), expected.end(),
                                              [&](const suite::Bindings& b) { return suite::runs_at(s, v, b); });
            EXPECT_EQ(suite::product_size(s, v, 10000), static_cast<std::size_t>(points)) << "trial " << trial;
        }
    }
}

TEST(VariantSweepValues, OwnValuesBeyondTheLimitsAreRefusedBeforeAPointIsBuilt)
{
    TempDir dir;
    const fs::path file = write_scale_project(dir.path, block_sizes_suite);
    // 2 x 10000 points for one variant.
    std::string e = load_error_after_edit(block_sizes_suite, file, "params: {BS: [32, 64, 256]}",
                                          "params: {BS: {from: 1, to: 10000}}");
    EXPECT_NE(e.find("block_sizes.yaml:17:13: variants.small.params: the variant's values make more than 10000 points"),
              std::string::npos)
        << e;
    // 4000 points each, 12000 cases by the third: refused at the variant that passes the limit.
    e = load_error_after_edit(five_own_ranges_suite(4000), file, "suite: five_ranges", "suite: five_ranges");
    EXPECT_NE(e.find("variants.v3.params: the variants with values of their own have 12000 cases up to here, more "
                     "than the 10000 allowed"),
              std::string::npos)
        << e;
}

TEST(VariantSweepValues, AVariantRunsAtItsOwnValuesAndTheReferenceAtEveryPoint)
{
    TempDir dir;
    const auto s = suite::load_suite(write_scale_project(dir.path, block_sizes_suite));
    ASSERT_EQ(s.variants[1].params.size(), 1u);
    EXPECT_EQ(s.variants[1].params[0].values, (std::vector<std::int64_t>{32, 64, 256}));
    EXPECT_EQ(s.variants[2].params[0].values, (std::vector<std::int64_t>{512, 1024}));

    const auto by_variant = cases_by_variant(s);
    EXPECT_EQ(by_variant.at("small"), (std::vector<std::string>{"N=1000 BS=256", "N=1000 BS=32", "N=1000 BS=64",
                                                                "N=4096 BS=256", "N=4096 BS=32", "N=4096 BS=64"}));
    EXPECT_EQ(by_variant.at("wide"),
              (std::vector<std::string>{"N=1000 BS=512", "N=1000 BS=1024", "N=4096 BS=512", "N=4096 BS=1024"}));
    // The reference at every point of every variant, its own (the suite's) first.
    EXPECT_EQ(
        by_variant.at("plain"),
        (std::vector<std::string>{"N=1000 BS=256", "N=1000 BS=32", "N=1000 BS=64", "N=1000 BS=512", "N=1000 BS=1024",
                                  "N=4096 BS=256", "N=4096 BS=32", "N=4096 BS=64", "N=4096 BS=512", "N=4096 BS=1024"}));
    EXPECT_EQ(suite::sweep_points(s).size(), 10u);
}

TEST(VariantSweepValues, CasesAtTheSameValuesShareAPointAndTheReferenceComesFirst)
{
    TempDir dir;
    const auto s = suite::load_suite(write_scale_project(dir.path, block_sizes_suite));
    const auto cases = suite::expand_cases(s);
    const auto points = suite::sweep_points(s);
    std::map<std::string, std::set<std::size_t>> point_of_text;
    std::set<std::size_t> seen;
    for (const auto& c : cases) {
        EXPECT_EQ(suite::params_text(s, points.at(c.point)), c.params_text);
        point_of_text[c.params_text].insert(c.point);
        // A point's first case is the reference's, so that its output is at hand for the others.
        if (seen.insert(c.point).second) {
            EXPECT_EQ(s.variants[c.variant].name, "plain") << c.params_text;
        }
    }
    for (const auto& [text, indices] : point_of_text) EXPECT_EQ(indices.size(), 1u) << text;
    EXPECT_EQ(point_of_text.size(), points.size());
    // One index for the three variants' cases' at N=1000 BS=256... and for the two at BS=512.
    std::size_t at_256 = 0, at_512 = 0;
    for (const auto& c : cases) {
        at_256 += c.params_text == "N=1000 BS=256";
        at_512 += c.params_text == "N=1000 BS=512";
    }
    EXPECT_EQ(at_256, 2u); // plain and small
    EXPECT_EQ(at_512, 2u); // plain and wide
}

TEST(VariantSweepValues, WithoutOwnValuesTheSweepIsTheSuites)
{
    TempDir dir;
    std::string text = block_sizes_suite;
    for (const std::string own :
         {"    params: {BS: [32, 64, 256]}\n", "    params:\n      BS: {from: 512, to: 1024, mul: 2}\n"})
        text.erase(text.find(own), own.size());
    const auto s = suite::load_suite(write_scale_project(dir.path, text));
    EXPECT_EQ(suite::sweep_points(s).size(), 2u);
    EXPECT_EQ(suite::expand_cases(s).size(), 6u);
}

TEST(VariantSweepValues, AVariantsFieldsAreCheckedAtItsOwnPoints)
{
    TempDir dir;
    const fs::path file = write_scale_project(dir.path, block_sizes_suite);
    const std::string small_block = "    entry: scale\n    block: [BS]\n    grid: [ceil_div(N, BS)]\n    args: [in, "
                                    "out, {i32: N}]\n  wide:";
    const std::string wide_block = "BS: {from: 512, to: 1024, mul: 2}\n    source: ../kernels/scale.cu\n    entry: "
                                   "scale\n    block: [BS]";
    // 4 * BS threads per block: 1024 at most at small's own values, 4096 at wide's, where small does not run.
    std::string text = block_sizes_suite;
    const auto at = text.find(small_block);
    ASSERT_NE(at, std::string::npos);
    text.replace(at, small_block.size(), replace_block(small_block, "block: [BS * 4]"));
    EXPECT_NO_THROW(suite::parse_suite(text, file));
    // 2 * BS: 2048 at wide's BS=1024, and wide's field is named with the point.
    std::string e =
        load_error_after_edit(block_sizes_suite, file, wide_block, replace_block(wide_block, "block: [BS * 2]"));
    EXPECT_NE(e.find("variants.wide.block: block.x is 2048 at N=1000 BS=1024"), std::string::npos) << e;
    // The reference runs there too, and is checked there.
    e = load_error_after_edit(block_sizes_suite, file, "block: [BS]", "block: [BS * 2]");
    EXPECT_NE(e.find("variants.plain.block: block.x is 2048 at N=1000 BS=1024"), std::string::npos) << e;
}

TEST(VariantSweepValues, OwnValuesAreRefusedWhereTheyCannotApply)
{
    TempDir dir;
    const fs::path file = write_scale_project(dir.path, block_sizes_suite);
    std::string e =
        load_error_after_edit(block_sizes_suite, file, "params: {BS: [32, 64, 256]}", "params: {BLOCK: [32, 64, 256]}");
    EXPECT_NE(e.find("block_sizes.yaml:17:14: variants.small.params.BLOCK: 'BLOCK' is no parameter of the suite"),
              std::string::npos)
        << e;
    e = load_error_after_edit(block_sizes_suite, file, "  plain:\n", "  plain:\n    params: {BS: [64]}\n");
    EXPECT_NE(e.find("variants.plain.params: the reference runs at every point"), std::string::npos) << e;
    e = load_error_after_edit(block_sizes_suite, file, "params: {BS: [32, 64, 256]}", "params: {BS: {scan: [32, 64]}}");
    EXPECT_NE(e.find("variants.small.params.BS: a variant's values are a list or a range"), std::string::npos) << e;
    e = load_error_after_edit(block_sizes_suite, file, "params: {BS: [32, 64, 256]}", "params: {BS: []}");
    EXPECT_NE(e.find("variants.small.params.BS: needs at least one value"), std::string::npos) << e;
    e = load_error_after_edit(block_sizes_suite, file, "  N: [1000, 4096]", "  N: {scan: [1000, 1004]}");
    EXPECT_NE(e.find("variants.small.params: the suite scans 'N'"), std::string::npos) << e;
}

TEST(VariantSweepValues, TheStaticTierAndCheckCoverEveryCase)
{
    TempDir dir;
    const fs::path file = write_scale_project(dir.path, block_sizes_suite);
    const auto s = suite::load_suite(file);
    const auto results = compile::run_static_tier(s, {"sm_80"}, nullptr);
    ASSERT_EQ(results.size(), suite::expand_cases(s).size());
    std::map<std::string, std::size_t> point_of;
    for (const auto& r : results) {
        EXPECT_EQ(r.status, CaseStatus::passed) << r.variant << " " << r.params_text << ": " << r.message;
        // Cases at the same values carry the same point.
        const auto [it, fresh] = point_of.emplace(r.params_text, r.point);
        EXPECT_EQ(it->second, r.point) << r.params_text;
    }
    const auto o = run_tool_captured({"check", "--no-cache", "--arch", "sm_80", file.string()});
    EXPECT_EQ(o.code, 0) << o.out << o.err;
    EXPECT_NE(o.out.find("3 variants, 20 cases"), std::string::npos) << o.out;
}

} // namespace variant_sweep_values_test
