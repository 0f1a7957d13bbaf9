#pragma once
// Small text helpers shared by error messages.

#include <string>
#include <string_view>
#include <vector>

namespace harness {

/// Levenshtein distance between two words.
std::size_t edit_distance(const std::string& a, const std::string& b);

/// " (did you mean 'x'?)" for the closest of `known` within a small distance, else "".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& known);

/// "a, b, c".
std::string join(const std::vector<std::string>& words, const std::string& separator = ", ");

/// `text` without leading and trailing white space.
std::string_view trim(std::string_view text);

/// The current time in UTC as strftime formats it: "%Y-%m-%dT%H:%M:%SZ" (ISO 8601), "%Y-%m-%d".
std::string utc_now(const char* format);

/// The C++ name of a kernel symbol as its source writes it, without return type and parameters:
/// "cub_block_sum<128, 4>" for "_Z13cub_block_sumILi128ELi4EEvPKfPfi"; an extern "C" name or a
/// symbol that does not demangle stays as it is.
std::string kernel_name(const std::string& symbol);

} // namespace harness
