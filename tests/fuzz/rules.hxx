#pragma once
// Checks on what a parser accepted: each names the rule an accepted input broke (docs/fuzzing.md).

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace YAML {
class Node;
}

namespace harness::fuzz {

/// An accepted input that breaks one of the target's rules: the parser should have refused it.
class RuleBroken : public std::runtime_error {
public:
    RuleBroken(std::string rule, const std::string& detail) : std::runtime_error(detail), rule_(std::move(rule)) {}
    /// The rule's short name, e.g. "unique-keys"; findings of one rule count as one.
    const std::string& rule() const { return rule_; }

private:
    std::string rule_;
};

/// Throws RuleBroken(rule, detail) unless `holds`.
void require(bool holds, const char* rule, const std::string& detail);

/// Whether `text` is well-formed UTF-8: no stray continuation bytes, overlong forms, surrogates, or
/// code points past U+10FFFF.
bool is_utf8(std::string_view text);

/// Whether every byte is printable ASCII (0x20 to 0x7e).
bool is_printable_ascii(std::string_view text);

/// Whether `text` holds a control character (below 0x20, or 0x7f).
bool has_control_character(std::string_view text);

/// Whether `name` can be one folder or file name: [A-Za-z0-9_.-]+, neither "." nor "..", and at
/// most 255 bytes (NAME_MAX), since suites and architectures become folders and files.
bool is_folder_name(std::string_view name);

/// Whether `arch` is written like a GPU architecture: sm_90, sm_100a.
bool is_arch_name(std::string_view arch);

/// A key that one map of the document holds twice, as "'key' at line L"; YAML 1.2 requires unique
/// keys, and a loader that looks a key up sees only one of the two. Walks at most 100000 nodes, so
/// that aliases cannot make the walk exponential.
std::optional<std::string> duplicate_key(const YAML::Node& document);

/// The rules every YAML input keeps: UTF-8 text, unique keys.
void require_yaml_text(const std::string& text, const YAML::Node& document);

/// `text` shortened to `limit` bytes with its control characters escaped, for messages.
std::string excerpt(std::string_view text, std::size_t limit = 80);

} // namespace harness::fuzz
