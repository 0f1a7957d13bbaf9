#include "harness/suite/element_type.hxx"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <stdexcept>
#include <vector>

namespace harness::suite {

// Elements are written and read as the host holds integers; the GPU holds them the same way.
static_assert(std::endian::native == std::endian::little, "device data is little-endian");

namespace {

using K = ElementKind;

// The floors of the narrow floats are about one unit in the last place at 1.0, and the smallest
// normal value, below which the type has no relative precision left (docs/suite-format.md).
constexpr ElementTypeInfo table[] = {
    {ElementType::f64, "f64", 8, K::floating, 11, 52, true, 0, 0, 0, "double"},
    {ElementType::f32, "f32", 4, K::floating, 8, 23, true, 0, 0, 0, "float"},
    {ElementType::f16, "f16", 2, K::floating, 5, 10, true, 0, 1e-3, 0x1p-14, "__half"},
    {ElementType::bf16, "bf16", 2, K::floating, 8, 7, true, 0, 1e-2, 0x1p-126, "__nv_bfloat16"},
    {ElementType::fp8_e4m3, "fp8_e4m3", 1, K::floating, 4, 3, false, 89, 0.125, 0x1p-6, "__nv_fp8_e4m3"},
    {ElementType::fp8_e5m2, "fp8_e5m2", 1, K::floating, 5, 2, true, 89, 0.25, 0x1p-14, "__nv_fp8_e5m2"},
    {ElementType::i8, "i8", 1, K::signed_integer, 0, 0, false, 0, 0, 0, "signed char"},
    {ElementType::u8, "u8", 1, K::unsigned_integer, 0, 0, false, 0, 0, 0, "unsigned char"},
    {ElementType::i16, "i16", 2, K::signed_integer, 0, 0, false, 0, 0, 0, "short"},
    {ElementType::u16, "u16", 2, K::unsigned_integer, 0, 0, false, 0, 0, 0, "unsigned short"},
    {ElementType::i32, "i32", 4, K::signed_integer, 0, 0, false, 0, 0, 0, "int"},
    {ElementType::u32, "u32", 4, K::unsigned_integer, 0, 0, false, 0, 0, 0, "unsigned int"},
    {ElementType::i64, "i64", 8, K::signed_integer, 0, 0, false, 0, 0, 0, "long long"},
    {ElementType::u64, "u64", 8, K::unsigned_integer, 0, 0, false, 0, 0, 0, "unsigned long long"},
};

int bias(const ElementTypeInfo& t)
{
    return (1 << (t.exponent_bits - 1)) - 1;
}

/// The exponent field and fraction of the largest finite value: e4m3 spends only the all-ones
/// pattern on NaN, so its top binade is finite.
std::uint64_t max_finite_bits(const ElementTypeInfo& t)
{
    const std::uint64_t exponent_ones = (std::uint64_t{1} << t.exponent_bits) - 1;
    const std::uint64_t fraction_ones = (std::uint64_t{1} << t.mantissa_bits) - 1;
    return t.has_infinity ? ((exponent_ones - 1) << t.mantissa_bits) | fraction_ones
                          : (exponent_ones << t.mantissa_bits) | (fraction_ones - 1);
}

/// A quiet NaN: the exponent all ones and the top fraction bit set (e4m3: every bit but the sign).
std::uint64_t nan_bits(const ElementTypeInfo& t)
{
    const std::uint64_t exponent_ones = (std::uint64_t{1} << t.exponent_bits) - 1;
    if (!t.has_infinity) return (exponent_ones << t.mantissa_bits) | ((std::uint64_t{1} << t.mantissa_bits) - 1);
    return (exponent_ones << t.mantissa_bits) | (std::uint64_t{1} << (t.mantissa_bits - 1));
}

/// Rounds to the nearest integer, ties to even, whatever the floating-point environment says.
double round_half_even(double v)
{
    const double low = std::floor(v);
    const double fraction = v - low; // exact: v and low share their leading bits
    if (fraction > 0.5) return low + 1;
    if (fraction < 0.5) return low;
    return std::fmod(low, 2.0) == 0 ? low : low + 1;
}

/// 2^e: from its bits where e is in double's normal range (ldexp is a library call).
double scale(int e)
{
    if (e < -1022 || e > 1023) return std::ldexp(1.0, e);
    return std::bit_cast<double>(static_cast<std::uint64_t>(e + 1023) << 52);
}

/// The number held by the fields of a floating type (used for f16, bf16, FP8, and the largest
/// f32 and f64).
double decode_float(const ElementTypeInfo& t, std::uint64_t bits)
{
    const int m = t.mantissa_bits;
    const std::uint64_t exponent_ones = (std::uint64_t{1} << t.exponent_bits) - 1;
    const std::uint64_t fraction = bits & ((std::uint64_t{1} << m) - 1);
    const std::uint64_t exponent = (bits >> m) & exponent_ones;
    const bool negative = (bits >> (m + t.exponent_bits)) & 1;
    double magnitude;
    if (t.has_infinity && exponent == exponent_ones)
        magnitude = fraction == 0 ? INFINITY : NAN;
    else if (!t.has_infinity && exponent == exponent_ones && fraction == (std::uint64_t{1} << m) - 1)
        magnitude = NAN;
    else if (exponent == 0)
        magnitude = static_cast<double>(fraction) * scale(1 - bias(t) - m);
    else
        magnitude =
            static_cast<double>(fraction | (std::uint64_t{1} << m)) * scale(static_cast<int>(exponent) - bias(t) - m);
    return negative ? -magnitude : magnitude;
}

/// The largest finite value of a floating type, computed once per type.
double max_finite(const ElementTypeInfo& t)
{
    static const auto values = [] {
        std::array<double, std::size(table)> out{};
        for (const auto& row : table)
            if (row.kind == K::floating)
                out.at(static_cast<std::size_t>(row.type)) = decode_float(row, max_finite_bits(row));
        return out;
    }();
    return values[static_cast<std::size_t>(t.type)];
}

/// The fields of a narrow float (f16, bf16, FP8) nearest to `v`, ties to even, saturating. Every
/// step is exact (integer operations, and double operations whose results are representable), so
/// the result is the same on every machine and in every rounding mode.
std::uint64_t encode_float(const ElementTypeInfo& t, double v)
{
    const int m = t.mantissa_bits;
    const std::uint64_t v_bits = std::bit_cast<std::uint64_t>(v);
    const std::uint64_t sign = (v_bits >> 63) << (m + t.exponent_bits);
    if (std::isnan(v)) return nan_bits(t);
    const double magnitude = std::fabs(v);
    if (magnitude >= max_finite(t)) return sign | max_finite_bits(t);
    // The binade of `magnitude` (from its exponent field; a subnormal double lies far below every
    // narrow type's), or the type's subnormal binade below its smallest normal value.
    const int exponent = static_cast<int>((v_bits >> 52) & 0x7ff) - 1023;
    const int binade = std::max(exponent, 1 - bias(t));
    // The magnitude in units of the type's spacing in that binade: below 2^(m+1), so exact.
    const double scaled = magnitude * scale(m - binade);
    std::uint64_t units = static_cast<std::uint64_t>(scaled); // truncation is floor here
    const double fraction = scaled - static_cast<double>(units);
    if (fraction > 0.5 || (fraction == 0.5 && (units & 1))) ++units;
    const std::uint64_t implicit_one = std::uint64_t{1} << m;
    int unbiased = binade;
    if (units == 2 * implicit_one) { // rounding carried into the next binade
        units = implicit_one;
        ++unbiased;
    }
    const std::uint64_t bits = units < implicit_one // subnormal (or zero)
                                   ? units
                                   : (static_cast<std::uint64_t>(unbiased + bias(t)) << m) | (units - implicit_one);
    // Rounding up from just below the largest finite value lands on infinity or NaN: saturate.
    return sign | std::min(bits, max_finite_bits(t));
}

/// Round to nearest, ties to even, clamped to the integer type's range.
std::uint64_t encode_integer(const ElementTypeInfo& t, double v)
{
    if (std::isnan(v)) return 0;
    const double r = std::clamp(round_half_even(v), lowest_value(t.type), max_value(t.type));
    const std::uint64_t mask = t.bytes == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * t.bytes)) - 1;
    if (t.kind == K::unsigned_integer) {
        // 2^64 - 1 is not a double: max_value(u64) is 2^64, one past it.
        if (r >= 0x1p64) return ~std::uint64_t{0};
        return static_cast<std::uint64_t>(r) & mask;
    }
    if (r >= 0x1p63) return static_cast<std::uint64_t>(INT64_MAX);
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(r)) & mask;
}

double decode_integer(const ElementTypeInfo& t, std::uint64_t bits)
{
    const unsigned width = 8 * static_cast<unsigned>(t.bytes);
    if (width < 64) bits &= (std::uint64_t{1} << width) - 1;
    if (t.kind == K::unsigned_integer) return static_cast<double>(bits);
    // Sign-extend from the type's width.
    const std::uint64_t sign_bit = std::uint64_t{1} << (width - 1);
    return static_cast<double>(static_cast<std::int64_t>((bits ^ sign_bit) - sign_bit));
}

/// "-128 to 127", exact also for 64-bit types (whose limits a double cannot hold).
std::string integer_range_text(const ElementTypeInfo& t)
{
    const unsigned width = 8 * static_cast<unsigned>(t.bytes);
    if (t.kind == K::unsigned_integer)
        return fmt::format("0 to {}", width == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1);
    const std::uint64_t top = (std::uint64_t{1} << (width - 1)) - 1;
    return fmt::format("-{} to {}", top + 1, top);
}

} // namespace

std::span<const ElementTypeInfo> element_type_table()
{
    return table;
}

const ElementTypeInfo& element_type_info(ElementType type)
{
    // Indexed by the enum: buffers look their type up once per element.
    static const auto by_type = [] {
        std::array<const ElementTypeInfo*, std::size(table)> out{};
        for (const auto& t : table) out.at(static_cast<std::size_t>(t.type)) = &t;
        if (std::find(out.begin(), out.end(), nullptr) != out.end())
            throw std::logic_error("an element type is missing from the table");
        return out;
    }();
    return *by_type.at(static_cast<std::size_t>(type));
}

std::optional<ElementType> element_type_from_name(std::string_view name)
{
    for (const auto& t : table)
        if (name == t.name) return t.type;
    return std::nullopt;
}

const char* element_type_name(ElementType type)
{
    return element_type_info(type).name;
}

std::span<const std::string> element_type_names()
{
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        for (const auto& t : table) out.emplace_back(t.name);
        return out;
    }();
    return names;
}

std::size_t element_size(ElementType type)
{
    return element_type_info(type).bytes;
}

bool is_floating(ElementType type)
{
    return element_type_info(type).kind == K::floating;
}

bool is_integer(ElementType type)
{
    return !is_floating(type);
}

double max_value(ElementType type)
{
    const auto& t = element_type_info(type);
    switch (t.kind) {
    case K::floating: return max_finite(t);
    case K::signed_integer: return scale(8 * static_cast<int>(t.bytes) - 1) - 1;
    case K::unsigned_integer: return scale(8 * static_cast<int>(t.bytes)) - 1;
    }
    return 0;
}

double lowest_value(ElementType type)
{
    const auto& t = element_type_info(type);
    switch (t.kind) {
    case K::floating: return -max_value(type);
    case K::signed_integer: return -scale(8 * static_cast<int>(t.bytes) - 1);
    case K::unsigned_integer: return 0;
    }
    return 0;
}

std::uint64_t to_bits(ElementType type, double value)
{
    const auto& t = element_type_info(type);
    switch (type) {
    case ElementType::f64: return std::bit_cast<std::uint64_t>(value);
    case ElementType::f32: return std::bit_cast<std::uint32_t>(static_cast<float>(value));
    default: break;
    }
    return t.kind == K::floating ? encode_float(t, value) : encode_integer(t, value);
}

double from_bits(ElementType type, std::uint64_t bits)
{
    const auto& t = element_type_info(type);
    switch (type) {
    case ElementType::f64: return std::bit_cast<double>(bits);
    case ElementType::f32: return std::bit_cast<float>(static_cast<std::uint32_t>(bits));
    default: break;
    }
    return t.kind == K::floating ? decode_float(t, bits) : decode_integer(t, bits);
}

namespace {

/// Reads `count` elements stored as T (a C++ type the element type shares its bits with).
template <typename T> void decode_as(const std::byte* in, std::size_t count, double* out)
{
    for (std::size_t i = 0; i < count; ++i) {
        T v;
        std::memcpy(&v, in + i * sizeof(T), sizeof(T));
        out[i] = static_cast<double>(v);
    }
}

/// Applies `convert` to `count` elements of `Storage` width (a fixed size, so the copies inline).
template <typename Storage, typename Convert>
void decode_with(const std::byte* in, std::size_t count, double* out, Convert convert)
{
    for (std::size_t i = 0; i < count; ++i) {
        Storage bits;
        std::memcpy(&bits, in + i * sizeof bits, sizeof bits);
        out[i] = convert(bits);
    }
}

template <typename Storage, typename Convert>
void encode_with(const double* values, std::size_t count, std::byte* out, Convert convert)
{
    for (std::size_t i = 0; i < count; ++i) {
        const auto bits = static_cast<Storage>(convert(values[i]));
        std::memcpy(out + i * sizeof bits, &bits, sizeof bits);
    }
}

} // namespace

void encode_elements(ElementType type, const double* values, std::size_t count, std::byte* out)
{
    const auto& t = element_type_info(type);
    const auto narrow_float = [&](double v) { return encode_float(t, v); };
    const auto integer = [&](double v) { return encode_integer(t, v); };
    switch (type) {
    case ElementType::f64: std::memcpy(out, values, count * sizeof(double)); return;
    case ElementType::f32: encode_with<float>(values, count, out, [](double v) { return v; }); return;
    case ElementType::f16:
    case ElementType::bf16: encode_with<std::uint16_t>(values, count, out, narrow_float); return;
    case ElementType::fp8_e4m3:
    case ElementType::fp8_e5m2: encode_with<std::uint8_t>(values, count, out, narrow_float); return;
    case ElementType::i8:
    case ElementType::u8: encode_with<std::uint8_t>(values, count, out, integer); return;
    case ElementType::i16:
    case ElementType::u16: encode_with<std::uint16_t>(values, count, out, integer); return;
    case ElementType::i32:
    case ElementType::u32: encode_with<std::uint32_t>(values, count, out, integer); return;
    case ElementType::i64:
    case ElementType::u64: encode_with<std::uint64_t>(values, count, out, integer); return;
    }
}

void decode_elements(ElementType type, const std::byte* in, std::size_t count, double* out)
{
    const auto& t = element_type_info(type);
    const auto narrow_float = [&](std::uint64_t bits) { return decode_float(t, bits); };
    switch (type) {
    case ElementType::f64: std::memcpy(out, in, count * sizeof(double)); return;
    case ElementType::f32: decode_as<float>(in, count, out); return;
    case ElementType::i8: decode_as<std::int8_t>(in, count, out); return;
    case ElementType::u8: decode_as<std::uint8_t>(in, count, out); return;
    case ElementType::i16: decode_as<std::int16_t>(in, count, out); return;
    case ElementType::u16: decode_as<std::uint16_t>(in, count, out); return;
    case ElementType::i32: decode_as<std::int32_t>(in, count, out); return;
    case ElementType::u32: decode_as<std::uint32_t>(in, count, out); return;
    case ElementType::i64: decode_as<std::int64_t>(in, count, out); return;
    case ElementType::u64: decode_as<std::uint64_t>(in, count, out); return;
    case ElementType::bf16: // the top half of an f32, infinities and NaN included
        decode_with<std::uint16_t>(in, count, out, [](std::uint16_t bits) {
            return static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16));
        });
        return;
    case ElementType::f16: decode_with<std::uint16_t>(in, count, out, narrow_float); return;
    case ElementType::fp8_e4m3:
    case ElementType::fp8_e5m2: decode_with<std::uint8_t>(in, count, out, narrow_float); return;
    }
}

double round_to_type(ElementType type, double value)
{
    return from_bits(type, to_bits(type, value));
}

bool holds_exactly(ElementType outer, ElementType inner)
{
    if (outer == inner) return true;
    const auto& o = element_type_info(outer);
    const auto& i = element_type_info(inner);
    if (o.kind != K::floating) // an integer type holds the integer types whose range it spans
        return i.kind != K::floating && lowest_value(outer) <= lowest_value(inner) &&
               max_value(inner) <= max_value(outer);
    if (i.kind != K::floating) // a float holds every integer up to 2^(fraction bits + 1)
        return std::max(-lowest_value(inner), max_value(inner)) <= std::ldexp(1.0, o.mantissa_bits + 1);
    const double smallest_outer = std::ldexp(1.0, 1 - bias(o) - o.mantissa_bits);
    const double smallest_inner = std::ldexp(1.0, 1 - bias(i) - i.mantissa_bits);
    return i.mantissa_bits <= o.mantissa_bits && max_value(inner) <= max_value(outer) &&
           smallest_outer <= smallest_inner;
}

std::string element_type_table_markdown()
{
    std::string out = "| type | bytes | values | kernel parameter type | tolerance floor | architectures |\n"
                      "|---|---|---|---|---|---|\n";
    for (const auto& t : table) {
        std::string values, floor;
        if (t.kind == K::floating) {
            values = fmt::format("1 sign, {} exponent, {} fraction bits; largest {:g}{}", t.exponent_bits,
                                 t.mantissa_bits, max_value(t.type), t.has_infinity ? "" : ", no infinity");
            floor =
                t.tolerance_rel == 0 ? "none" : fmt::format("rel {:g}, abs {:.3g}", t.tolerance_rel, t.tolerance_abs);
        } else {
            values = integer_range_text(t);
            floor = "exact";
        }
        out += fmt::format("| `{}` | {} | {} | `{}` | {} | {} |\n", t.name, t.bytes, values, t.cuda_type, floor,
                           t.min_sm_version ? fmt::format("sm_{} and newer", t.min_sm_version) : "all");
    }
    return out;
}

} // namespace harness::suite
