#include "harness/core/text.hxx"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <cxxabi.h>
#include <fmt/format.h>
#include <memory>

namespace harness {

std::size_t edit_distance(const std::string& a, const std::string& b)
{
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
            diagonal = above;
        }
    }
    return row[b.size()];
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& known)
{
    std::string best;
    std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
    for (const auto& k : known) {
        // The distance is at least the difference in length: a word far longer than every known
        // one (a file can hold a key of megabytes) is answered without filling its table.
        const std::size_t length_gap = word.size() > k.size() ? word.size() - k.size() : k.size() - word.size();
        if (length_gap >= best_distance) continue;
        const std::size_t d = edit_distance(word, k);
        if (d < best_distance) best_distance = d, best = k;
    }
    return best.empty() ? std::string{} : fmt::format(" (did you mean '{}'?)", best);
}

std::string join(const std::vector<std::string>& words, const std::string& separator)
{
    std::string out;
    for (const auto& w : words) out += (out.empty() ? "" : separator) + w;
    return out;
}

bool is_identifier_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

std::string_view trim(std::string_view text)
{
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
    return text;
}

std::string utc_now(const char* format)
{
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char text[64];
    return std::strftime(text, sizeof text, format, &tm) > 0 ? std::string(text) : std::string();
}

std::string kernel_name(const std::string& symbol)
{
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> text(abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status),
                                                std::free);
    if (status != 0 || !text) return symbol;
    std::string_view name = text.get();
    // The parameter list: the last top-level parenthesis group.
    int depth = 0;
    for (std::size_t i = name.size(); i-- > 0;) {
        if (name[i] == ')') ++depth;
        if (name[i] == '(' && --depth == 0) {
            name = name.substr(0, i);
            break;
        }
    }
    // A template's return type comes first, separated by a space outside angle brackets.
    depth = 0;
    std::size_t start = 0;
    for (std::size_t i = 0; i < name.size(); ++i) {
        if (name[i] == '<') ++depth;
        if (name[i] == '>') --depth;
        if (name[i] == ' ' && depth == 0) start = i + 1;
    }
    return std::string(name.substr(start));
}

bool names_kernel(const std::string& kernel, std::string_view entry)
{
    const auto compact = [](std::string_view text) {
        std::string out;
        for (const char c : text)
            if (!std::isspace(static_cast<unsigned char>(c))) out += c;
        return out;
    };
    const std::string wanted = compact(entry);
    return compact(kernel) == wanted || compact(kernel_name(kernel)) == wanted;
}

std::optional<std::pair<char32_t, std::size_t>> utf8_code_point(std::string_view text, std::size_t at)
{
    if (at >= text.size()) return std::nullopt;
    const auto lead = static_cast<unsigned char>(text[at]);
    std::size_t extra = 0;
    char32_t min = 0;
    if (lead < 0x80) return std::pair{static_cast<char32_t>(lead), std::size_t{1}};
    if ((lead & 0xE0) == 0xC0) {
        extra = 1;
        min = 0x80;
    } else if ((lead & 0xF0) == 0xE0) {
        extra = 2;
        min = 0x800;
    } else if ((lead & 0xF8) == 0xF0) {
        extra = 3;
        min = 0x10000;
    } else {
        return std::nullopt;
    }
    char32_t code = lead & (0x3F >> extra);
    for (std::size_t k = 1; k <= extra; ++k) {
        if (at + k >= text.size()) return std::nullopt;
        const auto next = static_cast<unsigned char>(text[at + k]);
        if ((next & 0xC0) != 0x80) return std::nullopt;
        code = (code << 6) | (next & 0x3F);
    }
    if (code < min || (code >= 0xD800 && code <= 0xDFFF) || code > 0x10FFFF) return std::nullopt;
    return std::pair{code, extra + 1};
}

std::size_t control_character_offset(std::string_view text)
{
    for (std::size_t i = 0; i < text.size(); ++i)
        if (static_cast<unsigned char>(text[i]) < 0x20 || text[i] == 0x7F) return i;
    return std::string_view::npos;
}

namespace {

/// The marks and overrides that reorder text when it is shown (U+202E RIGHT-TO-LEFT OVERRIDE and
/// its kin): a name holding one shows as something else in a terminal or a summary.
bool is_bidi_control(std::uint32_t code)
{
    return code == 0x061C || code == 0x200E || code == 0x200F || (code >= 0x202A && code <= 0x202E) ||
           (code >= 0x2066 && code <= 0x2069);
}

} // namespace

std::string escape_control_characters(std::string_view text)
{
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const auto point = utf8_code_point(text, i);
        if (!point) {
            out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i]));
            ++i;
            continue;
        }
        const auto [code, length] = *point;
        if (code == 0)
            out += "\\0";
        else if ((code < 0x20 && code != '\t' && code != '\n') || code == 0x7F)
            out += fmt::format("\\x{:02x}", static_cast<unsigned>(code));
        else if ((code >= 0x80 && code <= 0x9F) || is_bidi_control(code))
            out += fmt::format("\\u{:04x}", static_cast<unsigned>(code));
        else
            out.append(text.substr(i, length));
        i += length;
    }
    return out;
}

std::optional<double> parse_decimal_number(std::string_view text)
{
    text = trim(text);
    if (text.size() > 1 && text.front() == '+' && text[1] != '-' && text[1] != '+') text.remove_prefix(1);
    if (text.empty()) return std::nullopt;
    double value = 0.0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (end != text.data() + text.size()) return std::nullopt;
    if (error == std::errc::result_out_of_range) {
        // Below the smallest subnormal the number rounds to zero (or that subnormal); above the
        // largest double it has no value.
        const std::string copy(text);
        value = std::strtod(copy.c_str(), nullptr);
    } else if (error != std::errc()) {
        return std::nullopt;
    }
    if (!std::isfinite(value)) return std::nullopt;
    return value;
}

std::optional<std::int64_t> parse_decimal_integer(std::string_view text)
{
    text = trim(text);
    if (text.size() > 1 && text.front() == '+' && text[1] != '-' && text[1] != '+') text.remove_prefix(1);
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, 10);
    if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

std::string first_line(const std::string& text)
{
    std::string line = text.substr(0, text.find('\n'));
    if (line.size() > 160) line = line.substr(0, 157) + "...";
    return escape_control_characters(line);
}

} // namespace harness
