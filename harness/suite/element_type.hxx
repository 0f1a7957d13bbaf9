#pragma once
// Element types of buffers and scalar arguments: one table of names, sizes, value formats, oldest
// architecture and default verification tolerance, and the exact conversions between a double and
// a type's bits that initial data, `round_to`, scalars and verification share.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace harness::suite {

/// Element types a buffer or scalar argument can have.
enum class ElementType { f32, f64, i32, u32, i64, u64, f16, bf16, fp8_e4m3, fp8_e5m2, i8, u8, i16, u16 };

/// How a type's bits hold a number.
enum class ElementKind { floating, signed_integer, unsigned_integer };

/// One row of the element type table (docs/suite-format.md shows it).
struct ElementTypeInfo {
    ElementType type;
    const char* name; ///< as a suite writes it: "bf16"
    std::size_t bytes;
    ElementKind kind;
    int exponent_bits = 0;     ///< floating: width of the exponent field
    int mantissa_bits = 0;     ///< floating: stored fraction bits (the significand has one more)
    bool has_infinity = false; ///< floating: false for fp8_e4m3, whose only special value is NaN
    int min_sm_version = 0;    ///< oldest architecture with the type in hardware (89 for FP8); 0: every one
    double tolerance_rel = 0;  ///< the least relative error verification allows for this type (0: no floor)
    double tolerance_abs = 0;  ///< the least absolute error: the smallest normal value for narrow floats
    const char* cuda_type;     ///< what a kernel declares, for the docs
};

/// Every element type, in the order the docs list them.
std::span<const ElementTypeInfo> element_type_table();
const ElementTypeInfo& element_type_info(ElementType type);

/// "f32" etc.; nullopt for an unknown name.
std::optional<ElementType> element_type_from_name(std::string_view name);
const char* element_type_name(ElementType type);
/// Every name, for messages ("one of ...") and suggestions.
std::span<const std::string> element_type_names();
std::size_t element_size(ElementType type);
bool is_floating(ElementType type);
bool is_integer(ElementType type);

/// The largest finite value of `type` (for integers, its maximum) and the lowest (its minimum).
double max_value(ElementType type);
double lowest_value(ElementType type);

/// The bits of `value` in `type` (in the low element_size() bytes): floats round to nearest, ties
/// to even; f16, bf16 and FP8 saturate to their largest finite value (infinity too, as cuda_fp8.h's
/// __NV_SATFINITE does), f32 and f64 convert as C++ does; NaN becomes the type's NaN. Integers
/// round to nearest, ties to even, and clamp to the type's range; NaN becomes 0.
std::uint64_t to_bits(ElementType type, double value);

/// The number that `bits` of `type` hold (every element type's values are exact in a double,
/// except i64 and u64 beyond 2^53, which round).
double from_bits(ElementType type, std::uint64_t bits);

/// to_bits for `count` values, each written in element_size(type) little-endian bytes to `out`;
/// a loop with the type decided once, for buffers.
void encode_elements(ElementType type, const double* values, std::size_t count, std::byte* out);

/// from_bits for `count` elements of `type` read from `in`.
void decode_elements(ElementType type, const std::byte* in, std::size_t count, double* out);

/// `value` as `type` holds it: from_bits(type, to_bits(type, value)).
double round_to_type(ElementType type, double value);

/// Whether every value of `inner` is exactly a value of `outer` (f32 holds bf16, f16 and i16; bf16
/// does not hold f16), so that `round_to: inner` on an `outer` buffer keeps every value.
bool holds_exactly(ElementType outer, ElementType inner);

/// The table as Markdown, as docs/suite-format.md holds it.
std::string element_type_table_markdown();

} // namespace harness::suite
