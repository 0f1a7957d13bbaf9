// Element types: known bit patterns, rounding ties, saturation and NaN, agreement with the CUDA
// toolkit's own host conversions, which types hold which, and the table in the docs.

#include "harness/suite/element_type.hxx"
#include "test_paths.hxx"

#include <cmath>
#include <cstring>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <fstream>
#include <gtest/gtest.h>
#include <random>
#include <sstream>
#include <vector>

namespace element_type_test {

using namespace harness::suite;

namespace {

constexpr ElementType narrow_floats[] = {ElementType::f16, ElementType::bf16, ElementType::fp8_e4m3,
                                         ElementType::fp8_e5m2};

/// The toolkit's conversion of `v` to `type` (FP8 with __NV_SATFINITE), as bits.
std::uint64_t toolkit_bits(ElementType type, double v)
{
    switch (type) {
    case ElementType::f16: return static_cast<__half_raw>(__double2half(v)).x;
    case ElementType::bf16: return static_cast<__nv_bfloat16_raw>(__double2bfloat16(v)).x;
    case ElementType::fp8_e4m3: return __nv_cvt_double_to_fp8(v, __NV_SATFINITE, __NV_E4M3);
    case ElementType::fp8_e5m2: return __nv_cvt_double_to_fp8(v, __NV_SATFINITE, __NV_E5M2);
    default: break;
    }
    ADD_FAILURE() << "no toolkit conversion for " << element_type_name(type);
    return 0;
}

/// The toolkit's value of `bits` of `type`.
double toolkit_value(ElementType type, std::uint64_t bits)
{
    const auto half_value = [](__half_raw raw) { return static_cast<double>(__half2float(__half(raw))); };
    switch (type) {
    case ElementType::f16: {
        __half_raw raw;
        raw.x = static_cast<unsigned short>(bits);
        return half_value(raw);
    }
    case ElementType::bf16: {
        __nv_bfloat16_raw raw;
        raw.x = static_cast<unsigned short>(bits);
        return static_cast<double>(__bfloat162float(__nv_bfloat16(raw)));
    }
    case ElementType::fp8_e4m3:
        return half_value(__nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(bits), __NV_E4M3));
    case ElementType::fp8_e5m2:
        return half_value(__nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(bits), __NV_E5M2));
    default: break;
    }
    ADD_FAILURE() << "no toolkit conversion for " << element_type_name(type);
    return 0;
}

std::uint64_t bit_patterns(ElementType type)
{
    return std::uint64_t{1} << (8 * element_size(type));
}

} // namespace

TEST(ElementType, NamesSizesAndKinds)
{
    EXPECT_EQ(element_type_table().size(), 14u);
    for (const auto& t : element_type_table()) {
        EXPECT_EQ(element_type_from_name(t.name), t.type) << t.name;
        EXPECT_STREQ(element_type_name(t.type), t.name);
    }
    EXPECT_EQ(element_type_from_name("half"), std::nullopt);
    EXPECT_EQ(element_size(ElementType::f16), 2u);
    EXPECT_EQ(element_size(ElementType::bf16), 2u);
    EXPECT_EQ(element_size(ElementType::fp8_e4m3), 1u);
    EXPECT_EQ(element_size(ElementType::fp8_e5m2), 1u);
    EXPECT_EQ(element_size(ElementType::i8), 1u);
    EXPECT_EQ(element_size(ElementType::u16), 2u);
    EXPECT_EQ(element_size(ElementType::u64), 8u);
    EXPECT_TRUE(is_floating(ElementType::bf16));
    EXPECT_TRUE(is_integer(ElementType::u8));
    EXPECT_EQ(max_value(ElementType::f16), 65504.0);
    EXPECT_EQ(max_value(ElementType::bf16), 0x1.FEp127);
    EXPECT_EQ(max_value(ElementType::fp8_e4m3), 448.0);
    EXPECT_EQ(max_value(ElementType::fp8_e5m2), 57344.0);
    EXPECT_EQ(max_value(ElementType::f32), 0x1.FFFFFEp127);
    EXPECT_EQ(lowest_value(ElementType::i8), -128.0);
    EXPECT_EQ(max_value(ElementType::u16), 65535.0);
    EXPECT_EQ(element_type_info(ElementType::fp8_e4m3).min_sm_version, 89);
    EXPECT_EQ(element_type_info(ElementType::bf16).min_sm_version, 0);
}

TEST(ElementType, KnownBitPatterns)
{
    EXPECT_EQ(to_bits(ElementType::bf16, 1.0), 0x3F80u);
    EXPECT_EQ(to_bits(ElementType::f16, 1.0), 0x3C00u);
    EXPECT_EQ(to_bits(ElementType::fp8_e4m3, 1.0), 0x38u);
    EXPECT_EQ(to_bits(ElementType::fp8_e5m2, 1.0), 0x3Cu);
    EXPECT_EQ(to_bits(ElementType::f16, -2.0), 0xC000u);
    EXPECT_EQ(to_bits(ElementType::bf16, 0.5), 0x3F00u);
    EXPECT_EQ(to_bits(ElementType::f16, 1.5), 0x3E00u);
    EXPECT_EQ(to_bits(ElementType::bf16, 1.5), 0x3FC0u);
    EXPECT_EQ(to_bits(ElementType::fp8_e4m3, 1.5), 0x3Cu);
    EXPECT_EQ(to_bits(ElementType::fp8_e5m2, 1.5), 0x3Eu);
    EXPECT_EQ(to_bits(ElementType::fp8_e4m3, -0.0), 0x80u);
    // Largest finite and smallest subnormal values.
    EXPECT_EQ(to_bits(ElementType::f16, 65504.0), 0x7BFFu);
    EXPECT_EQ(to_bits(ElementType::bf16, 0x1.FEp127), 0x7F7Fu);
    EXPECT_EQ(to_bits(ElementType::fp8_e4m3, 448.0), 0x7Eu);
    EXPECT_EQ(to_bits(ElementType::fp8_e5m2, 57344.0), 0x7Bu);
    EXPECT_EQ(to_bits(ElementType::f16, 0x1p-24), 0x0001u);
    EXPECT_EQ(to_bits(ElementType::bf16, 0x1p-133), 0x0001u);
    EXPECT_EQ(to_bits(ElementType::fp8_e4m3, 0x1p-9), 0x01u);
    EXPECT_EQ(to_bits(ElementType::fp8_e5m2, 0x1p-16), 0x01u);
    EXPECT_EQ(from_bits(ElementType::f16, 0x3555), 0x1.554p-2);
    EXPECT_EQ(from_bits(ElementType::bf16, 0xC2F7), -123.5);
    EXPECT_EQ(from_bits(ElementType::fp8_e4m3, 0x7E), 448.0);
    EXPECT_EQ(from_bits(ElementType::fp8_e5m2, 0x01), 0x1p-16);
    // f32 and f64 are the C++ types.
    EXPECT_EQ(to_bits(ElementType::f32, 1.0), 0x3F800000u);
    EXPECT_EQ(to_bits(ElementType::f64, 1.0), 0x3FF0000000000000u);
}

TEST(ElementType, TiesRoundToEven)
{
    // Midway between 1 and the next value: down to 1 (even); midway above that: up to the even one.
    EXPECT_EQ(to_bits(ElementType::f16, 1.0 + 0x1p-11), 0x3C00u);
    EXPECT_EQ(to_bits(ElementType::f16, 1.0 + 3 * 0x1p-11), 0x3C02u);
    EXPECT_EQ(to_bits(ElementType::bf16, 1.0 + 0x1p-8), 0x3F80u);
    EXPECT_EQ(to_bits(ElementType::bf16, 1.0 + 3 * 0x1p-8), 0x3F82u);
    EXPECT_EQ(to_bits(ElementType::fp8_e4m3, 1.0625), 0x38u); // between 1 and 1.125
    EXPECT_EQ(to_bits(ElementType::fp8_e4m3, 1.1875), 0x3Au); // between 1.125 and 1.25
    EXPECT_EQ(to_bits(ElementType::fp8_e5m2, 1.125), 0x3Cu);  // between 1 and 1.25
    EXPECT_EQ(to_bits(ElementType::fp8_e5m2, 1.375), 0x3Eu);  // between 1.25 and 1.5
    // Just off the midpoint goes to the nearer value.
    EXPECT_EQ(to_bits(ElementType::bf16, 1.0 + 0x1p-8 + 0x1p-30), 0x3F81u);
    // Ties among subnormals, and rounding up out of the subnormals into the smallest normal.
    EXPECT_EQ(to_bits(ElementType::f16, 0x1p-25), 0x0000u);
    EXPECT_EQ(to_bits(ElementType::f16, 3 * 0x1p-25), 0x0002u);
    EXPECT_EQ(to_bits(ElementType::f16, 0x1p-14 - 0x1p-26), 0x0400u);
    EXPECT_EQ(to_bits(ElementType::fp8_e4m3, 0x1p-10), 0x00u);
    EXPECT_EQ(to_bits(ElementType::fp8_e4m3, 3 * 0x1p-10), 0x02u);
    // Carry into the next binade.
    EXPECT_EQ(to_bits(ElementType::f16, 2.0 - 0x1p-12), 0x4000u);
    // Integers: ties to even too.
    EXPECT_EQ(to_bits(ElementType::u8, 2.5), 2u);
    EXPECT_EQ(to_bits(ElementType::u8, 3.5), 4u);
    EXPECT_EQ(to_bits(ElementType::i8, -2.5), 0xFEu);
}

TEST(ElementType, NarrowFloatsSaturateAndKeepNan)
{
    // Past the largest finite value, infinity included, saturates (cuda_fp8.h's __NV_SATFINITE).
    EXPECT_EQ(to_bits(ElementType::f16, 65519.0), 0x7BFFu);
    EXPECT_EQ(to_bits(ElementType::f16, 65520.0), 0x7BFFu); // would round to infinity
    EXPECT_EQ(to_bits(ElementType::f16, 1e6), 0x7BFFu);
    EXPECT_EQ(to_bits(ElementType::f16, -INFINITY), 0xFBFFu);
    EXPECT_EQ(to_bits(ElementType::bf16, 1e39), 0x7F7Fu);
    EXPECT_EQ(to_bits(ElementType::fp8_e4m3, 464.0), 0x7Eu); // would round to 480, the NaN pattern
    EXPECT_EQ(to_bits(ElementType::fp8_e4m3, 1000.0), 0x7Eu);
    EXPECT_EQ(to_bits(ElementType::fp8_e4m3, -1000.0), 0xFEu);
    EXPECT_EQ(to_bits(ElementType::fp8_e4m3, INFINITY), 0x7Eu);
    EXPECT_EQ(to_bits(ElementType::fp8_e5m2, 61440.0), 0x7Bu);
    EXPECT_EQ(to_bits(ElementType::fp8_e5m2, INFINITY), 0x7Bu);
    // NaN becomes the type's quiet NaN; e4m3's only NaN is S.1111.111.
    EXPECT_EQ(to_bits(ElementType::f16, NAN), 0x7E00u);
    EXPECT_EQ(to_bits(ElementType::bf16, NAN), 0x7FC0u);
    EXPECT_EQ(to_bits(ElementType::fp8_e4m3, NAN), 0x7Fu);
    EXPECT_EQ(to_bits(ElementType::fp8_e5m2, NAN), 0x7Eu);
    EXPECT_TRUE(std::isnan(from_bits(ElementType::fp8_e4m3, 0x7F)));
    EXPECT_TRUE(std::isnan(from_bits(ElementType::fp8_e4m3, 0xFF)));
    EXPECT_TRUE(std::isnan(from_bits(ElementType::fp8_e5m2, 0x7D)));
    EXPECT_EQ(from_bits(ElementType::fp8_e5m2, 0x7C), INFINITY);
    EXPECT_EQ(from_bits(ElementType::fp8_e5m2, 0xFC), -INFINITY);
    EXPECT_EQ(from_bits(ElementType::f16, 0x7C00), INFINITY);
    EXPECT_EQ(from_bits(ElementType::bf16, 0xFF80), -INFINITY);
    // f32 keeps C++'s conversion, as it always has.
    EXPECT_EQ(from_bits(ElementType::f32, to_bits(ElementType::f32, 1e39)), INFINITY);
}

TEST(ElementType, IntegersRoundAndClampToTheirRange)
{
    EXPECT_EQ(to_bits(ElementType::i8, 200.0), 0x7Fu);
    EXPECT_EQ(to_bits(ElementType::i8, -200.0), 0x80u);
    EXPECT_EQ(to_bits(ElementType::i8, -3.0), 0xFDu);
    EXPECT_EQ(to_bits(ElementType::u8, -5.0), 0u);
    EXPECT_EQ(to_bits(ElementType::u16, 70000.0), 0xFFFFu);
    EXPECT_EQ(to_bits(ElementType::i16, -40000.0), 0x8000u);
    EXPECT_EQ(to_bits(ElementType::i32, -1.0), 0xFFFFFFFFu);
    EXPECT_EQ(to_bits(ElementType::i64, 1e19), static_cast<std::uint64_t>(INT64_MAX));
    EXPECT_EQ(to_bits(ElementType::i64, -1e19), static_cast<std::uint64_t>(INT64_MIN));
    EXPECT_EQ(to_bits(ElementType::u64, 1e20), UINT64_MAX);
    EXPECT_EQ(to_bits(ElementType::u64, -1.0), 0u);
    EXPECT_EQ(to_bits(ElementType::u32, NAN), 0u);
    EXPECT_EQ(from_bits(ElementType::i8, 0xFD), -3.0);
    EXPECT_EQ(from_bits(ElementType::i16, 0x8000), -32768.0);
    EXPECT_EQ(from_bits(ElementType::u16, 0xFFFF), 65535.0);
    EXPECT_EQ(from_bits(ElementType::i32, 0xFFFFFFFF), -1.0);
}

// Every value of every narrow float survives a round trip through its bits, and reads as the
// toolkit reads it.
TEST(ElementType, EveryBitPatternReadsAsTheToolkitReadsIt)
{
    for (const ElementType type : narrow_floats)
        for (std::uint64_t bits = 0; bits < bit_patterns(type); ++bits) {
            const double v = from_bits(type, bits);
            const double expected = toolkit_value(type, bits);
            if (std::isnan(expected)) {
                ASSERT_TRUE(std::isnan(v)) << element_type_name(type) << " " << bits;
                continue;
            }
            ASSERT_EQ(v, expected) << element_type_name(type) << " " << bits;
            if (std::isfinite(v)) {
                ASSERT_EQ(to_bits(type, v), bits) << element_type_name(type) << " " << v;
            }
        }
}

// Our conversion agrees with the toolkit's host conversion (cuda_fp16.h, cuda_bf16.h, cuda_fp8.h
// with __NV_SATFINITE) on every midpoint between neighbouring values, the values either side of
// it, and a million random doubles of every magnitude, within each type's finite range.
TEST(ElementType, ConversionAgreesWithTheToolkit)
{
    for (const ElementType type : narrow_floats) {
        const double max = max_value(type);
        auto check = [&](double v) {
            // The toolkit's f16 and bf16 conversions overflow to infinity where ours saturate.
            if (std::fabs(v) >= max && (type == ElementType::f16 || type == ElementType::bf16)) return;
            ASSERT_EQ(to_bits(type, v), toolkit_bits(type, v)) << element_type_name(type) << " " << v;
        };
        for (std::uint64_t bits = 0; bits + 1 < bit_patterns(type) / 2; ++bits) {
            const double low = from_bits(type, bits), high = from_bits(type, bits + 1);
            if (!std::isfinite(low) || !std::isfinite(high)) continue;
            const double mid = (low + high) / 2;
            for (const double v : {mid, std::nextafter(mid, 0.0), std::nextafter(mid, INFINITY)}) {
                check(v);
                check(-v);
            }
        }
        std::mt19937_64 random(42);
        std::uniform_real_distribution<double> mantissa(1.0, 2.0);
        std::uniform_int_distribution<int> exponent(-150, 130);
        for (int k = 0; k < 1000000 / 4; ++k) check(std::ldexp(mantissa(random), exponent(random)) * (k % 2 ? -1 : 1));
    }
}

// The block conversions buffers use give the bits and values of the one-element ones.
TEST(ElementType, BlockConversionsMatchOneElementAtATime)
{
    std::mt19937_64 random(7);
    std::uniform_real_distribution<double> value(-70000.0, 70000.0);
    std::vector<double> values = {0.0, -0.0, 1.0, -1.5, 65504.0, 1e6, -1e6, 0.3, 127.5, -128.5, INFINITY, NAN};
    for (int k = 0; k < 1000; ++k) values.push_back(value(random) / (k % 7 ? 1 : 65536));
    for (const auto& t : element_type_table()) {
        std::vector<std::byte> bytes(values.size() * t.bytes);
        encode_elements(t.type, values.data(), values.size(), bytes.data());
        std::vector<double> back(values.size());
        decode_elements(t.type, bytes.data(), values.size(), back.data());
        for (std::size_t i = 0; i < values.size(); ++i) {
            std::uint64_t bits = 0;
            std::memcpy(&bits, bytes.data() + i * t.bytes, t.bytes);
            ASSERT_EQ(bits, to_bits(t.type, values[i]) & (t.bytes == 8 ? ~0ull : (1ull << (8 * t.bytes)) - 1))
                << t.name << " " << values[i];
            const double expected = from_bits(t.type, bits);
            if (std::isnan(expected))
                ASSERT_TRUE(std::isnan(back[i])) << t.name;
            else
                ASSERT_EQ(back[i], expected) << t.name << " " << values[i];
        }
    }
}

TEST(ElementType, WhichTypesHoldWhich)
{
    using T = ElementType;
    for (const T inner : {T::f16, T::bf16, T::fp8_e4m3, T::fp8_e5m2, T::i8, T::u8, T::i16, T::u16})
        EXPECT_TRUE(holds_exactly(T::f32, inner)) << element_type_name(inner);
    EXPECT_FALSE(holds_exactly(T::f32, T::i32));
    EXPECT_TRUE(holds_exactly(T::f64, T::i32));
    EXPECT_TRUE(holds_exactly(T::f64, T::u32));
    EXPECT_TRUE(holds_exactly(T::f64, T::f32));
    EXPECT_FALSE(holds_exactly(T::f64, T::i64));
    EXPECT_FALSE(holds_exactly(T::f32, T::f64));
    // f16 lacks bf16's range, bf16 lacks f16's precision; both hold FP8 and bytes.
    EXPECT_FALSE(holds_exactly(T::f16, T::bf16));
    EXPECT_FALSE(holds_exactly(T::bf16, T::f16));
    for (const T inner : {T::fp8_e4m3, T::fp8_e5m2, T::i8, T::u8}) {
        EXPECT_TRUE(holds_exactly(T::f16, inner)) << element_type_name(inner);
        EXPECT_TRUE(holds_exactly(T::bf16, inner)) << element_type_name(inner);
    }
    EXPECT_FALSE(holds_exactly(T::f16, T::i16));
    EXPECT_FALSE(holds_exactly(T::fp8_e4m3, T::fp8_e5m2));
    EXPECT_FALSE(holds_exactly(T::fp8_e5m2, T::fp8_e4m3));
    EXPECT_TRUE(holds_exactly(T::i16, T::u8));
    EXPECT_FALSE(holds_exactly(T::u16, T::i8));
    EXPECT_FALSE(holds_exactly(T::i32, T::f16));
    EXPECT_TRUE(holds_exactly(T::bf16, T::bf16));
    // The claim is checked value by value where it is made.
    for (const T outer : {T::f16, T::bf16, T::f32})
        for (const T inner : narrow_floats) {
            if (!holds_exactly(outer, inner)) continue;
            for (std::uint64_t bits = 0; bits < bit_patterns(inner); ++bits) {
                const double v = from_bits(inner, bits);
                if (std::isfinite(v)) {
                    ASSERT_EQ(round_to_type(outer, v), v) << element_type_name(outer) << " " << v;
                }
            }
        }
}

TEST(ElementType, DocsHoldTheTable)
{
    std::ifstream in(repo_root() / "docs" / "suite-format.md");
    ASSERT_TRUE(in);
    std::stringstream text;
    text << in.rdbuf();
    const std::string doc = text.str();
    const std::string begin = "<!-- element-types:begin -->\n", end = "<!-- element-types:end -->";
    const auto from = doc.find(begin), to = doc.find(end);
    ASSERT_NE(from, std::string::npos);
    ASSERT_NE(to, std::string::npos);
    EXPECT_EQ(doc.substr(from + begin.size(), to - from - begin.size()), element_type_table_markdown());
}

} // namespace element_type_test
