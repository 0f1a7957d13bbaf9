#pragma once
// Small text helpers shared by error messages.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace harness {

/// Levenshtein distance between two words.
std::size_t edit_distance(const std::string& a, const std::string& b);

/// " (did you mean 'x'?)" for the closest of `known` within a small distance, else "".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& known);

/// "a, b, c".
std::string join(const std::vector<std::string>& words, const std::string& separator = ", ");

/// Whether `c` may appear in a C or C++ identifier (ASCII letters, digits and '_', whatever the locale).
bool is_identifier_char(char c);

/// `text` without leading and trailing white space.
std::string_view trim(std::string_view text);

/// The current time in UTC as strftime formats it: "%Y-%m-%dT%H:%M:%SZ" (ISO 8601), "%Y-%m-%d".
std::string utc_now(const char* format);

/// The C++ name of a kernel symbol as its source writes it, without return type and parameters:
/// "cub_block_sum<128, 4>" for "_Z13cub_block_sumILi128ELi4EEvPKfPfi"; an extern "C" name or a
/// symbol that does not demangle stays as it is.
std::string kernel_name(const std::string& symbol);

/// Whether `kernel` (a symbol, or a name as kernel_name() gives it) is the kernel a suite's
/// `entry` names, template arguments resolved: "cub_block_sum<128,4>" names
/// "_Z13cub_block_sumILi128ELi4EEvPKfPfi". White space is not compared.
bool names_kernel(const std::string& kernel, std::string_view entry);

/// The code point that starts at byte `at` of `text` and its length in bytes, or nullopt where the
/// bytes there are not UTF-8 (a stray continuation byte, an overlong form, a UTF-16 surrogate, a
/// sequence cut short, a value past U+10FFFF).
std::optional<std::pair<char32_t, std::size_t>> utf8_code_point(std::string_view text, std::size_t at);

/// The offset of the first control character (a byte below 0x20, or DEL) of `text`, or npos.
std::size_t control_character_offset(std::string_view text);

/// `text` with what could move a terminal's cursor, recolour it or cut a message short written
/// visibly: NUL as `\0`, other C0 controls but tab and line feed, DEL and bytes that are not UTF-8
/// as `\xNN`, C1 controls as `\u0085`. For the console, summary.md and error messages.
std::string escape_control_characters(std::string_view text);

/// The first line of a message, at most 160 characters and its control characters escaped, for a
/// progress line or a one-line reason.
std::string first_line(const std::string& text);

/// A decimal number filling all of `text` (white space around it allowed): an optional sign,
/// digits with an optional fraction and exponent. Numbers too small for a double read as the nearest
/// one (4.9e-324, 1e-400 as 0); nullopt for anything else, and for infinities, NaN, hexadecimal and
/// numbers too large for a double.
std::optional<double> parse_decimal_number(std::string_view text);

/// A decimal integer filling all of `text` (white space around it allowed), with an optional sign:
/// "010" is 10, never octal; nullopt for anything else and outside the range of int64.
std::optional<std::int64_t> parse_decimal_integer(std::string_view text);

} // namespace harness
