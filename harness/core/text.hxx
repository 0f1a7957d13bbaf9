#pragma once
// Small text helpers shared by error messages.

#include <string>
#include <vector>

namespace harness {

/// Levenshtein distance between two words.
std::size_t edit_distance(const std::string& a, const std::string& b);

/// " (did you mean 'x'?)" for the closest of `known` within a small distance, else "".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& known);

/// "a, b, c".
std::string join(const std::vector<std::string>& words, const std::string& separator = ", ");

} // namespace harness
