#include "harness/run/buffer_data.hxx"
#include "harness/run/timing_stats.hxx"
#include "test_paths.hxx"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <set>
#include <stdexcept>
#include <tuple>

namespace buffer_data_test {

using namespace harness::run;
using namespace harness::suite;

namespace {

BufferSpec uniform(ElementType type, std::uint64_t seed, double min, double max)
{
    BufferSpec b;
    b.name = std::string(1, 'A');
    b.type = type;
    b.init = InitKind::uniform;
    b.seed = seed;
    b.min = min;
    b.max = max;
    return b;
}

BufferSpec uniform_f32(std::uint64_t seed)
{
    return uniform(ElementType::f32, seed, -1, 1);
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

// A buffer of millions of elements is drawn on several threads: every element is still the value
// of its own index, whatever the number of threads and however the length splits among them.
TEST(BufferData, LargeBuffersDrawnInPiecesEqualTheOneThreadDraw)
{
    BufferSpec spec = uniform_f32(11);
    spec.index = Expression::parse("i * 3 + 1"); // every element evaluates the expression
    for (const std::size_t n : {std::size_t{4} << 20, (std::size_t{4} << 20) + 1, (std::size_t{5} << 20) + 4099}) {
        const auto one = initial_contents(spec, n, {}, 1);
        ASSERT_EQ(one.size(), n * 4);
        for (const unsigned threads : {2u, 3u, 4u, 7u, 16u, 64u})
            EXPECT_TRUE(initial_contents(spec, n, {}, threads) == one) << n << " elements on " << threads << " threads";
        // The one-thread draw is the value of each index, up to the last element.
        const auto all = floats(one);
        for (const std::size_t at : {std::size_t{0}, std::size_t{4095}, n / 2 + 17, n - 1}) {
            BufferSpec slice = uniform_f32(11);
            slice.index = Expression::parse(fmt::format("(i + {}) * 3 + 1", at));
            EXPECT_EQ(all[at], floats(initial_contents(slice, 1, {}))[0]) << "element " << at << " of " << n;
        }
        std::set<float> distinct(all.begin(), all.begin() + 100000);
        EXPECT_GT(distinct.size(), 90000u); // drawn, not one value repeated
    }
}

// A case runner draws every buffer into one host buffer it keeps: whatever that memory held
// before (another buffer's contents, of another type or length), each element is written, and
// nothing past the buffer's own length.
TEST(BufferData, DrawingIntoUsedMemoryWritesEveryElementAndNoMore)
{
    const std::size_t n = (std::size_t{3} << 20) + 5;
    Bytes kept(n * 8 + 64, std::byte{0xA5});
    BufferSpec spec = uniform_f32(4);
    spec.index = Expression::parse("i * 7");
    for (const unsigned threads : {1u, 4u}) {
        draw_contents(spec, n, {}, kept.data(), threads);
        EXPECT_TRUE(std::equal(kept.begin(), kept.begin() + n * 4, initial_contents(spec, n, {}, 1).begin()));
        EXPECT_EQ(kept[n * 4], std::byte{0xA5}) << "written past the end on " << threads << " threads";
    }
    // Smaller elements over the larger ones just drawn, then zeros: every byte of each is its own.
    for (const ElementType type : {ElementType::f16, ElementType::fp8_e4m3, ElementType::f64}) {
        const BufferSpec narrow = uniform(type, 9, -2, 2);
        draw_contents(narrow, n, {}, kept.data(), 4);
        const auto fresh = initial_contents(narrow, n, {}, 1);
        EXPECT_TRUE(std::equal(fresh.begin(), fresh.end(), kept.begin())) << element_type_name(type);
    }
    BufferSpec zeros = uniform_f32(1);
    zeros.init = InitKind::zeros;
    draw_contents(zeros, n, {}, kept.data(), 4);
    EXPECT_TRUE(std::all_of(kept.begin(), kept.begin() + n * 4, [](std::byte b) { return b == std::byte{0}; }));
    EXPECT_EQ(kept[n * 8 + 63], std::byte{0xA5});
}

// The staging buffer a case runner draws into: the size asked for, memory kept while it is big
// enough (contents and address), at least doubled when it is not, and a draw into it is the
// buffer's own contents whatever it held.
TEST(BufferData, StagingBufferKeepsItsMemoryAndGrowsByDoubling)
{
    StagingBuffer staging;
    EXPECT_EQ(staging.capacity(), 0u);
    const auto first = staging.get(1000);
    ASSERT_EQ(first.size(), 1000u);
    std::fill(first.begin(), first.end(), std::byte{0x5A});
    const std::size_t capacity = staging.capacity();
    EXPECT_GE(capacity, 1000u);
    const auto again = staging.get(capacity);
    EXPECT_EQ(again.data(), first.data()) << "memory big enough is kept";
    EXPECT_EQ(again[999], std::byte{0x5A});
    EXPECT_EQ(staging.get(capacity + 1).size(), capacity + 1);
    EXPECT_GE(staging.capacity(), 2 * capacity);

    const std::size_t n = (std::size_t{1} << 20) + 3;
    const BufferSpec spec = uniform_f32(8);
    const auto drawn = staging.get(n * 4);
    std::fill(drawn.begin(), drawn.end(), std::byte{0xFF});
    draw_contents(spec, n, {}, drawn.data(), 4);
    const auto fresh = initial_contents(spec, n, {}, 1);
    EXPECT_TRUE(std::equal(fresh.begin(), fresh.end(), drawn.begin()));
}

TEST(BufferData, StagingBufferPinsWhatWasWrittenOnceAndUnpinsBeforeItsMemoryGoes)
{
    std::vector<std::pair<std::byte*, std::size_t>> pins;
    std::vector<std::byte*> unpins;
    bool refuse = false;
    {
        StagingBuffer staging({[&](std::byte* p, std::size_t bytes) {
                                   if (refuse) return false;
                                   pins.emplace_back(p, bytes);
                                   return true;
                               },
                               [&](std::byte* p) { unpins.push_back(p); }});
        const auto first = staging.get(10000);
        staging.written(first.size());
        ASSERT_EQ(pins.size(), 1u);
        EXPECT_EQ(pins[0].first, first.data());
        EXPECT_EQ(pins[0].second, 12288u) << "whole pages";
        EXPECT_EQ(staging.pinned(), 12288u);

        staging.written(5000); // already pinned
        EXPECT_EQ(pins.size(), 1u);
        EXPECT_TRUE(unpins.empty());

        staging.written(staging.capacity()); // a larger written range: unpinned, pinned again
        ASSERT_EQ(pins.size(), 2u);
        ASSERT_EQ(unpins.size(), 1u);
        EXPECT_EQ(pins[1].second, staging.capacity());

        const std::size_t capacity = staging.capacity();
        staging.get(capacity + 1); // new memory: the old is unpinned before it is freed
        EXPECT_EQ(unpins.size(), 2u);
        EXPECT_EQ(staging.pinned(), 0u);

        refuse = true; // a refusal is not asked again
        staging.written(100);
        refuse = false;
        staging.written(200);
        EXPECT_EQ(pins.size(), 2u);
        EXPECT_EQ(staging.pinned(), 0u);
    }
    EXPECT_EQ(unpins.size(), 2u) << "nothing pinned at the end, nothing to undo";

    {
        StagingBuffer staging({[&](std::byte* p, std::size_t bytes) {
                                   pins.emplace_back(p, bytes);
                                   return true;
                               },
                               [&](std::byte* p) { unpins.push_back(p); }});
        staging.written(staging.get(100).size());
    }
    EXPECT_EQ(unpins.size(), 3u) << "pinned memory is unpinned when the buffer goes";
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

namespace {

/// The values of a buffer of any type, widened to double.
std::vector<double> values(ElementType type, const Bytes& bytes)
{
    std::vector<double> out(bytes.size() / element_size(type));
    for (std::size_t i = 0; i < out.size(); ++i) {
        std::uint64_t bits = 0;
        std::memcpy(&bits, bytes.data() + i * element_size(type), element_size(type));
        out[i] = from_bits(type, bits);
    }
    return out;
}

/// The bits of each element, for fixed expectations.
std::vector<std::uint64_t> bits(ElementType type, const Bytes& bytes)
{
    std::vector<std::uint64_t> out(bytes.size() / element_size(type));
    for (std::size_t i = 0; i < out.size(); ++i)
        std::memcpy(&out[i], bytes.data() + i * element_size(type), 1 * element_size(type));
    return out;
}

Bytes encoded(ElementType type, const std::vector<double>& v)
{
    Bytes out(v.size() * element_size(type));
    for (std::size_t i = 0; i < v.size(); ++i) {
        const std::uint64_t b = to_bits(type, v[i]);
        std::memcpy(out.data() + i * element_size(type), &b, element_size(type));
    }
    return out;
}

} // namespace

// The same seed gives these bits on every machine: drawn in double, rounded to nearest even.
TEST(BufferData, UniformGivesFixedBitsInEveryType)
{
    using V = std::vector<std::uint64_t>;
    EXPECT_EQ(bits(ElementType::f32, initial_contents(uniform(ElementType::f32, 1, -1, 1), 4, {})),
              (V{0x3f787cee, 0x3f06e766, 0x3ec90d35, 0xbea46982}));
    EXPECT_EQ(bits(ElementType::f16, initial_contents(uniform(ElementType::f16, 1, -1, 1), 4, {})),
              (V{0x3bc4, 0x3837, 0x3648, 0xb523}));
    EXPECT_EQ(bits(ElementType::bf16, initial_contents(uniform(ElementType::bf16, 1, -1, 1), 4, {})),
              (V{0x3f78, 0x3f07, 0x3ec9, 0xbea4}));
    EXPECT_EQ(bits(ElementType::fp8_e4m3, initial_contents(uniform(ElementType::fp8_e4m3, 1, -1, 1), 4, {})),
              (V{0x38, 0x30, 0x2d, 0xaa}));
    EXPECT_EQ(bits(ElementType::fp8_e5m2, initial_contents(uniform(ElementType::fp8_e5m2, 1, -1, 1), 4, {})),
              (V{0x3c, 0x38, 0x36, 0xb5}));
    EXPECT_EQ(bits(ElementType::i8, initial_contents(uniform(ElementType::i8, 1, -100, 100), 4, {})),
              (V{0x62, 0x35, 0x27, 0xe0}));
    EXPECT_EQ(bits(ElementType::i16, initial_contents(uniform(ElementType::i16, 1, -100, 100), 4, {})),
              (V{0x62, 0x35, 0x27, 0xffe0}));
    // Each narrow type holds the f64 draw rounded to it.
    const auto wide = values(ElementType::f64, initial_contents(uniform(ElementType::f64, 1, -1, 1), 1000, {}));
    for (const ElementType type :
         {ElementType::f32, ElementType::f16, ElementType::bf16, ElementType::fp8_e4m3, ElementType::fp8_e5m2}) {
        const auto narrow = values(type, initial_contents(uniform(type, 1, -1, 1), 1000, {}));
        for (std::size_t i = 0; i < narrow.size(); ++i)
            ASSERT_EQ(narrow[i], round_to_type(type, wide[i])) << element_type_name(type) << " " << i;
    }
}

TEST(BufferData, RoundToGivesTheValuesOfTheOtherType)
{
    for (const ElementType type : {ElementType::bf16, ElementType::f16, ElementType::fp8_e4m3, ElementType::fp8_e5m2}) {
        BufferSpec reference = uniform(ElementType::f32, 5, -3, 3);
        reference.round_to = type;
        const auto expected = values(type, initial_contents(uniform(type, 5, -3, 3), 4096, {}));
        EXPECT_EQ(values(ElementType::f32, initial_contents(reference, 4096, {})), expected) << element_type_name(type);
    }
    // Rounded to an integer type, a float buffer holds the integers an integer buffer draws.
    BufferSpec reference = uniform(ElementType::f32, 5, -200, 200);
    reference.round_to = ElementType::i8;
    const auto ints = values(ElementType::i8, initial_contents(uniform(ElementType::i8, 5, -200, 200), 4096, {}));
    EXPECT_EQ(values(ElementType::f32, initial_contents(reference, 4096, {})), ints);
    // round_to the buffer's own type changes nothing.
    reference = uniform_f32(5);
    reference.round_to = ElementType::f32;
    EXPECT_EQ(initial_contents(reference, 100, {}), initial_contents(uniform_f32(5), 100, {}));
}

TEST(BufferData, IntegerUniformClampsAndSequenceWraps)
{
    const auto clamped = values(ElementType::i8, initial_contents(uniform(ElementType::i8, 3, -1000, 1000), 1000, {}));
    EXPECT_EQ(*std::min_element(clamped.begin(), clamped.end()), -128.0);
    EXPECT_EQ(*std::max_element(clamped.begin(), clamped.end()), 127.0);
    EXPECT_GT(std::count_if(clamped.begin(), clamped.end(), [](double v) { return v > -128 && v < 127; }), 0);
    const auto u8 = values(ElementType::u8, initial_contents(uniform(ElementType::u8, 3, 0, 255), 5000, {}));
    EXPECT_EQ(*std::max_element(u8.begin(), u8.end()), 255.0);
    EXPECT_EQ(*std::min_element(u8.begin(), u8.end()), 0.0);

    BufferSpec s;
    s.init = InitKind::sequence;
    s.type = ElementType::u8;
    const auto wrapped = values(ElementType::u8, initial_contents(s, 300, {}));
    EXPECT_EQ(wrapped[255], 255.0);
    EXPECT_EQ(wrapped[256], 0.0);
    EXPECT_EQ(wrapped[299], 43.0);
    s.type = ElementType::i8;
    const auto signed_wrapped = values(ElementType::i8, initial_contents(s, 300, {}));
    EXPECT_EQ(signed_wrapped[127], 127.0);
    EXPECT_EQ(signed_wrapped[128], -128.0);
    EXPECT_EQ(signed_wrapped[256], 0.0);
    s.type = ElementType::i16;
    EXPECT_EQ(values(ElementType::i16, initial_contents(s, 40000, {}))[32768], -32768.0);
    // A float type rounds i: f16 holds every integer to 2048, then every other one.
    s.type = ElementType::f16;
    const auto halves = values(ElementType::f16, initial_contents(s, 2100, {}));
    EXPECT_EQ(halves[2048], 2048.0);
    EXPECT_EQ(halves[2049], 2048.0); // a tie: to even
    EXPECT_EQ(halves[2051], 2052.0);
    s.type = ElementType::fp8_e4m3;
    EXPECT_EQ(values(ElementType::fp8_e4m3, initial_contents(s, 1000, {}))[999], 448.0); // saturates
}

TEST(BufferData, NarrowOutputsVerifyAgainstAnF32ReferenceWithinTheirType)
{
    // The reference in f32; a bf16 result is that rounded once to bf16 (within half an ulp).
    const auto reference = values(ElementType::f32, initial_contents(uniform(ElementType::f32, 9, -4, 4), 4096, {}));
    const Bytes reference_bytes = encoded(ElementType::f32, reference);
    BufferSpec out;
    out.name = "C";
    for (const ElementType type : {ElementType::f16, ElementType::bf16, ElementType::fp8_e4m3, ElementType::fp8_e5m2}) {
        out.type = type;
        const Tolerance tol = verification_tolerance(out, ElementType::f32, Tolerance{});
        EXPECT_GT(tol.rel, Tolerance{}.rel);
        const auto c = compare_buffers(type, encoded(type, reference), ElementType::f32, reference_bytes, tol);
        EXPECT_TRUE(c.ok) << element_type_name(type) << ": " << describe_mismatch("C", c, reference.size());
        EXPECT_EQ(c.actual_count, 4096u);
        // The same result under f32's (the suite's) tolerance fails: the type's floor is what lets it pass.
        EXPECT_FALSE(compare_buffers(type, encoded(type, reference), ElementType::f32, reference_bytes, Tolerance{}).ok)
            << element_type_name(type);
    }
    // Off by more than the floor: 3 % in bf16 fails, with both sides read as their own type.
    std::vector<double> wrong = reference;
    wrong[17] *= 1.03;
    out.type = ElementType::bf16;
    const auto c = compare_buffers(ElementType::bf16, encoded(ElementType::bf16, wrong), ElementType::f32,
                                   reference_bytes, verification_tolerance(out, ElementType::f32, Tolerance{}));
    EXPECT_FALSE(c.ok);
    EXPECT_EQ(c.mismatches, 1u);
    EXPECT_EQ(c.first_mismatch, 17u);
    EXPECT_EQ(c.actual_at_first, round_to_type(ElementType::bf16, wrong[17]));
    EXPECT_EQ(c.expected_at_first, reference[17]);
}

TEST(BufferData, ToleranceRule)
{
    BufferSpec out;
    const Tolerance suite{1e-4, 1e-5};
    // f32 against f32: the suite's, as before.
    out.type = ElementType::f32;
    auto t = verification_tolerance(out, ElementType::f32, suite);
    EXPECT_EQ(t.rel, 1e-4);
    EXPECT_EQ(t.abs, 1e-5);
    // f16 output, or f16 reference: raised to the f16 floor.
    out.type = ElementType::f16;
    t = verification_tolerance(out, ElementType::f32, suite);
    EXPECT_EQ(t.rel, 1e-3);
    EXPECT_EQ(t.abs, 0x1p-14);
    out.type = ElementType::f32;
    EXPECT_EQ(verification_tolerance(out, ElementType::f16, suite).rel, 1e-3);
    // The less precise of the two decides.
    out.type = ElementType::fp8_e5m2;
    EXPECT_EQ(verification_tolerance(out, ElementType::bf16, suite).rel, 0.25);
    // A suite looser than the floor stays.
    out.type = ElementType::bf16;
    EXPECT_EQ(verification_tolerance(out, ElementType::f32, {0.05, 0.1}).rel, 0.05);
    EXPECT_EQ(verification_tolerance(out, ElementType::f32, {0.05, 0.1}).abs, 0.1);
    // Integers on both sides: exact, whatever the suite says.
    out.type = ElementType::i8;
    t = verification_tolerance(out, ElementType::i32, {0.05, 0.1});
    EXPECT_EQ(t.rel, 0.0);
    EXPECT_EQ(t.abs, 0.0);
    // The buffer's own tolerance wins over everything.
    out.tolerance = Tolerance{0.5, 0.0};
    EXPECT_EQ(verification_tolerance(out, ElementType::i32, suite).rel, 0.5);
    out.type = ElementType::fp8_e4m3;
    EXPECT_EQ(verification_tolerance(out, ElementType::f32, suite).rel, 0.5);
}

TEST(BufferData, IntegerOutputsCompareExactly)
{
    const std::vector<double> ref = {1, -2, 100, 127};
    std::vector<double> got = ref;
    BufferSpec out;
    out.type = ElementType::i8;
    const Tolerance exact = verification_tolerance(out, ElementType::i32, Tolerance{0.1, 1.0});
    EXPECT_TRUE(compare_buffers(ElementType::i8, encoded(ElementType::i8, got), ElementType::i32,
                                encoded(ElementType::i32, ref), exact)
                    .ok);
    got[2] = 101;
    EXPECT_FALSE(compare_buffers(ElementType::i8, encoded(ElementType::i8, got), ElementType::i32,
                                 encoded(ElementType::i32, ref), exact)
                     .ok);
}

TEST(BufferData, InfinitiesMatchAndCountsMustAgree)
{
    const std::vector<double> ref = {INFINITY, -INFINITY, 1.0};
    Bytes infinities(6);
    const std::uint16_t halves[3] = {0x7C00, 0xFC00, 0x3C00};
    std::memcpy(infinities.data(), halves, 6);
    EXPECT_TRUE(compare_buffers(ElementType::f16, infinities, ElementType::f32, encoded(ElementType::f32, ref), {}).ok);
    // A finite value where the reference has an infinity does not match.
    EXPECT_FALSE(compare_buffers(ElementType::f16, encoded(ElementType::f16, {65504.0, -INFINITY, 1.0}),
                                 ElementType::f32, encoded(ElementType::f32, ref), {0.5, 1e30})
                     .ok);
    // Two elements of f16 against three of f32: a size mismatch, said as such.
    infinities.resize(4);
    const auto c = compare_buffers(ElementType::f16, infinities, ElementType::f32, encoded(ElementType::f32, ref), {});
    EXPECT_FALSE(c.ok);
    EXPECT_EQ(describe_mismatch("C", c, 2), "C: 2 elements, the reference's has 3");
}

TEST(BufferData, ScalarsHaveTheirTypesSizeAndBits)
{
    const auto hex = [](const Bytes& b) {
        std::string out;
        for (const std::byte x : b) out += fmt::format("{:02x}", static_cast<unsigned>(x));
        return out;
    };
    EXPECT_EQ(hex(scalar_bytes(ElementType::f16, 0, 1.5)), "003e");
    EXPECT_EQ(hex(scalar_bytes(ElementType::bf16, 0, 1.5)), "c03f");
    EXPECT_EQ(hex(scalar_bytes(ElementType::bf16, 0, 1.0)), "803f");
    EXPECT_EQ(hex(scalar_bytes(ElementType::fp8_e4m3, 0, 1.5)), "3c");
    EXPECT_EQ(hex(scalar_bytes(ElementType::fp8_e5m2, 0, -1.0)), "bc");
    EXPECT_EQ(hex(scalar_bytes(ElementType::i8, -3, -3.0)), "fd");
    EXPECT_EQ(hex(scalar_bytes(ElementType::u8, 200, 200.0)), "c8");
    EXPECT_EQ(hex(scalar_bytes(ElementType::i16, -2, -2.0)), "feff");
    EXPECT_EQ(hex(scalar_bytes(ElementType::u16, 7, 7.0)), "0700");
    EXPECT_EQ(hex(scalar_bytes(ElementType::i32, -1, -1.0)), "ffffffff");
    EXPECT_EQ(hex(scalar_bytes(ElementType::f32, 0, 1.0)), "0000803f");
    EXPECT_EQ(hex(scalar_bytes(ElementType::f64, 0, 1.0)), "000000000000f03f");
    // i64 keeps every bit (a double would round 2^53 + 1).
    EXPECT_EQ(hex(scalar_bytes(ElementType::i64, (std::int64_t{1} << 53) + 1, 0)), "0100000000002000");
    for (const auto& t : element_type_table()) EXPECT_EQ(scalar_bytes(t.type, 1, 1.0).size(), t.bytes) << t.name;
}

// tests/suites/half_types.yaml and fp8_types.yaml, with their kernels emulated on the host: each
// variant's inputs are the reference's, value for value, and its outputs (the reference's rounded
// to its type) verify within the type's floor.
TEST(BufferData, NarrowTypeSuitesVerifyOnTheHost)
{
    using Roles = std::tuple<std::string, std::string, std::string, std::string>; // variant, x, y, out
    const std::pair<std::string, std::vector<Roles>> suites[] = {
        {"half_types.yaml", {{"f16", "XH", "YH", "OUTH"}, {"bf16", "XB", "YB", "OUTB"}}},
        {"fp8_types.yaml", {{"e4m3", "X4", "Y4", "OUT4"}, {"e5m2", "X5", "Y5", "OUT5"}}},
    };
    for (const auto& [file, roles] : suites) {
        const Suite s = load_suite(repo_root() / "tests" / "suites" / file);
        const Bindings point = {{"N", 1000}};
        const auto buffer = [&](const std::string& variant, const std::string& name) {
            for (const auto& b : s.buffers_of(*s.find_variant(variant)))
                if (b.name == name) return b;
            throw std::runtime_error("no buffer " + name);
        };
        const auto contents = [&](const BufferSpec& b) { return values(b.type, initial_contents(b, 1000, point)); };
        for (const auto& [variant, x, y, out] : roles) {
            const auto ref_x = contents(buffer(s.reference, x)), ref_y = contents(buffer(s.reference, y));
            EXPECT_EQ(contents(buffer(variant, x)), ref_x) << variant;
            EXPECT_EQ(contents(buffer(variant, y)), ref_y) << variant;
            std::vector<double> expected(1000);
            for (std::size_t i = 0; i < expected.size(); ++i)
                expected[i] = std::fma(0.75f, static_cast<float>(ref_x[i]), static_cast<float>(ref_y[i]));
            const BufferSpec out_spec = buffer(variant, out);
            const ElementType ref_type = buffer(s.reference, out).type;
            const auto c =
                compare_buffers(out_spec.type, encoded(out_spec.type, expected), ref_type, encoded(ref_type, expected),
                                verification_tolerance(out_spec, ref_type, s.tolerance));
            EXPECT_TRUE(c.ok) << variant << ": " << describe_mismatch(out, c, 1000);
            EXPECT_GT(c.max_abs_error, 0.0) << variant;
        }
    }
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
    // A noisy case stops at max_samples within its budget; the minimum still comes first.
    std::vector<double> many;
    for (int i = 0; i < 63; ++i) many.push_back(i % 2 ? 90 : 110);
    EXPECT_FALSE(enough_samples(many, 0.1, policy));
    many.push_back(100);
    EXPECT_TRUE(enough_samples(many, 0.1, policy));
    EXPECT_FALSE(enough_samples(std::vector<double>(9, 100.0 + 1), 0.1, {.min_samples = 10, .max_samples = 5}));
}

TEST(TimingStats, TheNextBatchFitsWhatIsLeftOfTheBudget)
{
    TimingSpec policy; // 64 samples at most, 1 s
    // 10 samples in 0.1 s: 90 more would fit in the 0.9 s left, but one pass holds 16.
    EXPECT_EQ(next_batch_size(10, 0.1, policy, 16), 16u);
    // 0.1 s a sample: 5 fit in the 0.5 s left.
    EXPECT_EQ(next_batch_size(5, 0.5, policy, 16), 5u);
    // The budget spent: one at a time.
    EXPECT_EQ(next_batch_size(10, 2.0, policy, 16), 1u);
    // No more than max_samples still wants.
    EXPECT_EQ(next_batch_size(60, 0.06, policy, 16), 4u);
}

TEST(TimingStats, DroppedSamplesLeaveEachLaunchsSeriesInStep)
{
    TimeSamples taken{{1, 2, 3, 4}, {{0.5, 1, 1.5, 2}, {0.5, 1, 1.5, 2}}};
    taken.keep_only({true, false, true, false});
    EXPECT_EQ(taken.total, (std::vector<double>{1, 3}));
    EXPECT_EQ(taken.steps, (std::vector<std::vector<double>>{{0.5, 1.5}, {0.5, 1.5}}));
}

} // namespace buffer_data_test
