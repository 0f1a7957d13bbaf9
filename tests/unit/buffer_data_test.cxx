#include "harness/run/buffer_data.hxx"
#include "harness/run/timing_stats.hxx"

#include <cmath>
#include <cstring>
#include <gtest/gtest.h>

using namespace harness::run;
using namespace harness::suite;

namespace {

BufferSpec uniform_f32(std::uint64_t seed)
{
    BufferSpec b;
    b.name = "A";
    b.type = ElementType::f32;
    b.init = InitKind::uniform;
    b.seed = seed;
    b.min = -1;
    b.max = 1;
    return b;
}

std::vector<float> floats(const Bytes& bytes)
{
    std::vector<float> v(bytes.size() / 4);
    std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
}

Bytes bytes_of(const std::vector<float>& v)
{
    Bytes b(v.size() * 4);
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}

} // namespace

TEST(BufferData, UniformIsDeterministicAndInRange)
{
    const auto a = floats(initial_contents(uniform_f32(1), 1000, {}));
    const auto b = floats(initial_contents(uniform_f32(1), 1000, {}));
    const auto c = floats(initial_contents(uniform_f32(2), 1000, {}));
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
    double sum = 0;
    for (float x : a) {
        EXPECT_GE(x, -1.0f);
        EXPECT_LE(x, 1.0f);
        sum += x;
    }
    EXPECT_LT(std::abs(sum / 1000), 0.1); // centred, not constant
    EXPECT_NE(a[0], a[1]);
}

TEST(BufferData, SequenceOnesZerosAndIntegerTypes)
{
    BufferSpec s;
    s.type = ElementType::i32;
    s.init = InitKind::sequence;
    const Bytes bytes = initial_contents(s, 5, {});
    std::int32_t v[5];
    std::memcpy(v, bytes.data(), sizeof v);
    EXPECT_EQ(v[4], 4);
    s.type = ElementType::f64;
    s.init = InitKind::ones;
    EXPECT_EQ(initial_contents(s, 3, {}).size(), 24u);
    double d;
    std::memcpy(&d, initial_contents(s, 3, {}).data() + 16, 8);
    EXPECT_EQ(d, 1.0);
}

TEST(BufferData, IndexExpressionGivesTheSameValuesInAnotherLayout)
{
    // Array of structures (x y z per point) and structure of arrays (all x, then y, then z).
    const std::int64_t n = 10;
    BufferSpec soa = uniform_f32(7);
    BufferSpec aos = uniform_f32(7);
    aos.index = Expression::parse("(i % 3) * N + i / 3");
    const auto s = floats(initial_contents(soa, 3 * n, {{"N", n}}));
    const auto a = floats(initial_contents(aos, 3 * n, {{"N", n}}));
    for (std::int64_t p = 0; p < n; ++p)
        for (int c = 0; c < 3; ++c) EXPECT_EQ(a[3 * p + c], s[c * n + p]);
}

TEST(BufferData, ComparisonHonoursToleranceAndReportsFirstMismatch)
{
    const std::vector<float> ref = {1.0f, 2.0f, 3.0f, 4.0f};
    std::vector<float> got = ref;
    got[1] = 2.0001f;
    auto c = compare_buffers(ElementType::f32, bytes_of(got), bytes_of(ref), {1e-3, 0});
    EXPECT_TRUE(c.ok);
    EXPECT_NEAR(c.max_abs_error, 1e-4, 1e-6);
    got[2] = 3.5f;
    got[3] = -4.0f;
    c = compare_buffers(ElementType::f32, bytes_of(got), bytes_of(ref), {1e-3, 0});
    EXPECT_FALSE(c.ok);
    EXPECT_EQ(c.first_mismatch, 2u);
    EXPECT_EQ(c.mismatches, 2u);
    EXPECT_FLOAT_EQ(c.actual_at_first, 3.5f);
    EXPECT_FLOAT_EQ(c.max_abs_error, 8.0f);
    const std::string text = describe_mismatch("C", c, 4);
    EXPECT_NE(text.find("C: 2 of 4 elements differ from the reference; first at index 2 (3.5 vs 3)"), std::string::npos)
        << text;
}

TEST(BufferData, NanMatchesOnlyNan)
{
    const std::vector<float> ref = {NAN, 1.0f};
    EXPECT_TRUE(compare_buffers(ElementType::f32, bytes_of({NAN, 1.0f}), bytes_of(ref), {}).ok);
    EXPECT_FALSE(compare_buffers(ElementType::f32, bytes_of({0.0f, 1.0f}), bytes_of(ref), {}).ok);
    EXPECT_FALSE(compare_buffers(ElementType::f32, bytes_of({NAN, NAN}), bytes_of(ref), {}).ok);
}

TEST(TimingStats, SummaryAndStoppingRule)
{
    const auto s = summarize({4.0, 1.0, 3.0, 2.0});
    EXPECT_DOUBLE_EQ(s.median_us, 2.5);
    EXPECT_DOUBLE_EQ(s.min_us, 1.0);
    EXPECT_NEAR(s.relative_noise, 1.2909944 / 2.5, 1e-6);

    TimingSpec policy; // 10 samples, 0.5 % noise, 1 s
    std::vector<double> quiet(10, 100.0);
    EXPECT_TRUE(enough_samples(quiet, 0.01, policy));
    quiet.pop_back();
    EXPECT_FALSE(enough_samples(quiet, 5.0, policy)); // fewer than the minimum, even over budget
    std::vector<double> noisy = {100, 110, 90, 105, 95, 100, 120, 80, 100, 100};
    EXPECT_FALSE(enough_samples(noisy, 0.5, policy));
    EXPECT_TRUE(enough_samples(noisy, 1.0, policy));
}
