#include "harness/suite/compile_params.hxx"

#include "harness/core/text.hxx"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace harness::suite {

namespace {

bool identifier_start(char c)
{
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
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
                   (is_identifier_char(text[i]) || text[i] == '.' || text[i] == '\'' ||
                    ((text[i] == '+' || text[i] == '-') &&
                     (text[i - 1] == 'e' || text[i - 1] == 'E' || text[i - 1] == 'p' || text[i - 1] == 'P'))))
                ++i;
        } else if (identifier_start(c)) {
            std::size_t end = i + 1;
            while (end < text.size() && is_identifier_char(text[end])) ++end;
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

namespace {

/// `value` parsed as an expression whose names all satisfy `known`, else nullopt.
template <typename Known> std::optional<Expression> expression_over(std::string_view value, Known known)
{
    // C reads 010 as octal 8, the expression syntax as ten: such text stays text.
    for (std::size_t i = 0; i + 1 < value.size(); ++i)
        if (value[i] == '0' && std::isdigit(static_cast<unsigned char>(value[i + 1])) &&
            (i == 0 || !is_identifier_char(value[i - 1])))
            return std::nullopt;
    try {
        Expression e = Expression::parse(std::string(value));
        if (e.empty()) return std::nullopt;
        for (const auto& [name, offset] : e.names())
            if (!known(name)) return std::nullopt;
        return e;
    } catch (const ExpressionError&) {
        return std::nullopt;
    }
}

} // namespace

std::optional<Expression> define_expression(std::string_view value, const std::set<std::string, std::less<>>& params)
{
    return expression_over(value, [&](const std::string& name) { return params.contains(name); });
}

std::string resolve_define(std::string_view value, const Bindings& point)
{
    if (const auto e = expression_over(value, [&](const std::string& name) { return point.contains(name); })) {
        try {
            return std::to_string(e->evaluate(point));
        } catch (const ExpressionError&) {
            // The loader evaluates every define at every sweep point; text is the fallback only
            // for a point it did not see.
        }
    }
    return substitute_params(value, point);
}

std::string resolve_entry(const std::string& entry, const Bindings& point)
{
    const std::size_t open = entry.find('<');
    if (open == std::string::npos) return entry;
    return entry.substr(0, open) + substitute_params(std::string_view(entry).substr(open), point);
}

std::string launch_entry(const VariantSpec& variant, const LaunchSpec& launch, const Bindings& point)
{
    switch (variant.kind) {
    case VariantKind::source:
    case VariantKind::module:
    case VariantKind::triton:
    case VariantKind::cutile: return resolve_entry(launch.entry, point);
    case VariantKind::builtin: return variant.builtin; // a routine's name, no template arguments
    }
    return launch.entry;
}

std::filesystem::path kernel_source_file(const VariantSpec& variant)
{
    switch (variant.kind) {
    case VariantKind::source: return variant.source;
    case VariantKind::triton:
    case VariantKind::cutile: return variant.exported_from;
    case VariantKind::module:  // its line table names its sources (module_written names the module)
    case VariantKind::builtin: // a library's
        return {};
    }
    return {};
}

namespace {

/// A launch's label and whether another launch of its variant runs the same kernel.
struct LaunchLabel {
    std::string text;
    bool repeated = false;
};

std::vector<LaunchLabel> labels_of_launches(const VariantSpec& variant, const Bindings& point)
{
    if (variant.launches.size() < 2) return {};
    std::vector<std::string> entries;
    std::map<std::string, int> uses;
    for (const auto& launch : variant.launches) {
        entries.push_back(launch_entry(variant, launch, point));
        ++uses[entries.back()];
    }
    std::map<std::string, int> seen;
    std::vector<LaunchLabel> labels;
    for (const auto& entry : entries) {
        const bool repeated = uses[entry] > 1;
        labels.push_back({repeated ? fmt::format("{}#{}", entry, ++seen[entry]) : entry, repeated});
    }
    return labels;
}

} // namespace

std::vector<std::string> launch_labels(const VariantSpec& variant, const Bindings& point)
{
    std::vector<std::string> labels;
    for (auto& label : labels_of_launches(variant, point)) labels.push_back(std::move(label.text));
    return labels;
}

std::vector<CaseLaunch> case_launches(const Suite& suite, const VariantSpec& variant, const Bindings& point)
{
    std::string file = variant.module_written;
    if (const auto source = kernel_source_file(variant); !source.empty()) {
        std::error_code ec;
        const auto relative = std::filesystem::relative(source, suite.project_root, ec);
        file = ec || relative.empty() || relative.native().starts_with("..") ? source.string() : relative.string();
    }
    const std::vector<LaunchLabel> labels = labels_of_launches(variant, point);
    std::vector<CaseLaunch> out;
    for (std::size_t i = 0; i < variant.launches.size(); ++i) {
        CaseLaunch l;
        l.label = labels.empty() ? std::string() : labels[i].text;
        l.repeated = !labels.empty() && labels[i].repeated;
        l.entry = launch_entry(variant, variant.launches[i], point);
        l.file = file;
        out.push_back(std::move(l));
    }
    return out;
}

std::map<std::string, std::string> resolve_defines(const VariantSpec& variant, const Bindings& point)
{
    std::map<std::string, std::string> out;
    for (const auto& [name, value] : variant.defines) out[name] = resolve_define(value, point);
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
