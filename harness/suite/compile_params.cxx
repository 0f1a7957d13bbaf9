#include "harness/suite/compile_params.hxx"

#include <algorithm>
#include <cctype>

namespace harness::suite {

namespace {

bool identifier_start(char c)
{
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool identifier_char(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

/// Calls `on_identifier(begin, end)` for every identifier of `text`, and `on_other(begin, end)` for
/// every run of text between them (numbers, quoted strings, punctuation).
template <typename Identifier, typename Other>
void scan(std::string_view text, Identifier on_identifier, Other on_other)
{
    std::size_t i = 0, other = 0;
    while (i < text.size()) {
        const char c = text[i];
        if (c == '"' || c == '\'') {
            // A quoted literal, with escapes, to its closing quote or the end.
            ++i;
            while (i < text.size() && text[i] != c) i += text[i] == '\\' ? 2 : 1;
            i = std::min(i + 1, text.size());
        } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                   (c == '.' && i + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[i + 1])))) {
            // A number with its suffix, exponent or hex digits: 1e5, 0x1F, 2.5f, 1'000.
            ++i;
            while (i < text.size() &&
                   (identifier_char(text[i]) || text[i] == '.' || text[i] == '\'' ||
                    ((text[i] == '+' || text[i] == '-') &&
                     (text[i - 1] == 'e' || text[i - 1] == 'E' || text[i - 1] == 'p' || text[i - 1] == 'P'))))
                ++i;
        } else if (identifier_start(c)) {
            std::size_t end = i + 1;
            while (end < text.size() && identifier_char(text[end])) ++end;
            if (other < i) on_other(other, i);
            on_identifier(i, end);
            i = other = end;
        } else {
            ++i;
        }
    }
    if (other < text.size()) on_other(other, text.size());
}

} // namespace

std::vector<std::string> param_names_in(std::string_view text, const std::set<std::string, std::less<>>& params)
{
    std::vector<std::string> names;
    scan(
        text,
        [&](std::size_t b, std::size_t e) {
            const std::string_view name = text.substr(b, e - b);
            if (params.contains(name) && std::find(names.begin(), names.end(), name) == names.end())
                names.emplace_back(name);
        },
        [](std::size_t, std::size_t) {});
    return names;
}

std::string substitute_params(std::string_view text, const Bindings& point)
{
    std::string out;
    out.reserve(text.size());
    scan(
        text,
        [&](std::size_t b, std::size_t e) {
            const std::string_view name = text.substr(b, e - b);
            if (auto it = point.find(name); it != point.end())
                out += std::to_string(it->second);
            else
                out += name;
        },
        [&](std::size_t b, std::size_t e) { out += text.substr(b, e - b); });
    return out;
}

std::string resolve_entry(const std::string& entry, const Bindings& point)
{
    const std::size_t open = entry.find('<');
    if (open == std::string::npos) return entry;
    return entry.substr(0, open) + substitute_params(std::string_view(entry).substr(open), point);
}

std::map<std::string, std::string> resolve_defines(const VariantSpec& variant, const Bindings& point)
{
    if (variant.compile_params.empty()) return variant.defines;
    std::map<std::string, std::string> out;
    for (const auto& [name, value] : variant.defines) out[name] = substitute_params(value, point);
    return out;
}

std::string compile_params_text(const VariantSpec& variant, const Bindings& point)
{
    std::string text;
    for (const auto& name : variant.compile_params) {
        auto it = point.find(name);
        if (it == point.end()) continue;
        if (!text.empty()) text += ' ';
        text += name + "=" + std::to_string(it->second);
    }
    return text;
}

std::string compile_key(const VariantSpec& variant, const Bindings& point)
{
    if (variant.compile_params.empty()) return variant.name;
    return variant.name + "[" + compile_params_text(variant, point) + "]";
}

} // namespace harness::suite
