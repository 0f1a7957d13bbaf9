#include "rules.hxx"

#include "harness/core/arch_limits.hxx"
#include "harness/core/input_files.hxx"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <set>
#include <yaml-cpp/yaml.h>

namespace harness::fuzz {

void require(bool holds, const char* rule, const std::string& detail)
{
    if (!holds) throw RuleBroken(rule, detail);
}

bool is_utf8(std::string_view text)
{
    std::size_t i = 0;
    while (i < text.size()) {
        const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
        const unsigned char lead = byte(i);
        std::size_t length = 0;
        std::uint32_t code = 0;
        if (lead < 0x80)
            length = 1, code = lead;
        else if ((lead & 0xe0) == 0xc0)
            length = 2, code = lead & 0x1f;
        else if ((lead & 0xf0) == 0xe0)
            length = 3, code = lead & 0x0f;
        else if ((lead & 0xf8) == 0xf0)
            length = 4, code = lead & 0x07;
        else
            return false;
        if (i + length > text.size()) return false;
        for (std::size_t k = 1; k < length; ++k) {
            if ((byte(i + k) & 0xc0) != 0x80) return false;
            code = (code << 6) | (byte(i + k) & 0x3f);
        }
        static constexpr std::uint32_t shortest[] = {0, 0, 0x80, 0x800, 0x10000};
        if (code < shortest[length] || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return false;
        i += length;
    }
    return true;
}

bool is_printable_ascii(std::string_view text)
{
    for (char c : text)
        if (c < 0x20 || c > 0x7e) return false;
    return true;
}

bool has_control_character(std::string_view text)
{
    for (char c : text)
        if ((c >= 0 && c < 0x20) || c == 0x7f) return true;
    return false;
}

bool is_folder_name(std::string_view name)
{
    const auto allowed = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
    };
    return !name.empty() && name != "." && name != ".." && name.size() <= 255 &&
           std::all_of(name.begin(), name.end(), allowed);
}

bool is_arch_name(std::string_view arch)
{
    // An architecture the harness knows, as the loaders require.
    return harness::find_arch_limits(arch) != nullptr && harness::name_problem(arch).empty();
}

namespace {

std::optional<std::string> duplicate_key(const YAML::Node& node, int depth, std::size_t& budget)
{
    if (depth > 200 || budget == 0) return std::nullopt;
    --budget;
    if (node.IsSequence()) {
        for (const auto& item : node)
            if (auto found = duplicate_key(item, depth + 1, budget)) return found;
    } else if (node.IsMap()) {
        std::set<std::string> keys;
        for (const auto& kv : node) {
            if (kv.first.IsScalar() && !keys.insert(kv.first.Scalar()).second) {
                const auto mark = kv.first.Mark();
                return fmt::format("'{}' at line {}", excerpt(kv.first.Scalar()), mark.line + 1);
            }
            if (auto found = duplicate_key(kv.second, depth + 1, budget)) return found;
        }
    }
    return std::nullopt;
}

} // namespace

std::optional<std::string> duplicate_key(const YAML::Node& document)
{
    std::size_t budget = 100000;
    return duplicate_key(document, 0, budget);
}

void require_yaml_text(const std::string& text, const YAML::Node& document)
{
    require(is_utf8(text), "utf8", "accepted a file that is not UTF-8 text");
    if (const auto key = duplicate_key(document)) require(false, "unique-keys", "accepted the key " + *key + " twice");
}

std::string excerpt(std::string_view text, std::size_t limit)
{
    std::string out;
    for (std::size_t i = 0; i < text.size() && i < limit; ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x20 || c >= 0x7f)
            out += fmt::format("\\x{:02x}", c);
        else
            out += static_cast<char>(c);
    }
    if (text.size() > limit) out += fmt::format("... ({} bytes)", text.size());
    return out;
}

} // namespace harness::fuzz
