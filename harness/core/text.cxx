#include "harness/core/text.hxx"

#include <algorithm>
#include <cctype>
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

} // namespace harness
