// The suite loader: reading and checking single fields, each error naming file, line, column and field.

#include "harness/core/arch_limits.hxx"
#include "harness/core/error.hxx"
#include "harness/core/input_files.hxx"
#include "harness/core/metrics.hxx"
#include "harness/core/readable_path.hxx"
#include "harness/core/text.hxx"
#include "harness/suite/builtin_signatures.hxx"
#include "harness/suite/compile_params.hxx"
#include "harness/suite/loader.hxx"
#include "harness/suite/suite.hxx"
#include "harness/suite/sweep.hxx"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <fstream>
#include <limits>
#include <regex>
#include <set>
#include <sstream>
#include <yaml-cpp/yaml.h>

namespace harness::suite {

namespace fs = std::filesystem;

namespace {

/// The number of values of a range of `gaps` gaps, gaps + 1, in words that cannot wrap:
/// "18446744073709551616" for the whole int64 span.
std::string value_count_text(std::uint64_t gaps)
{
    if (gaps < std::numeric_limits<std::uint64_t>::max()) return std::to_string(gaps + 1);
    return "18446744073709551616";
}

} // namespace

void Loader::fail(const YAML::Node& node, const std::string& field, const std::string& message) const
{
    const auto mark = node.Mark();
    if (mark.is_null()) throw InputError(file_.string(), 0, 0, field, message);
    throw InputError(file_.string(), mark.line + 1, mark.column + 1, field, message);
}

/// A map whose keys are single values, each given once (YAML would keep only the first).
void Loader::expect_map(const YAML::Node& node, const std::string& field) const
{
    if (!node.IsMap()) fail(node, field, "expected a map");
    std::set<std::string> seen;
    for (const auto& kv : node) {
        if (!kv.first.IsScalar()) fail(kv.first, field, "a key must be a single value");
        if (!seen.insert(kv.first.Scalar()).second)
            fail(kv.first, prefixed(field, kv.first.Scalar()), "given twice (YAML would keep only the first)");
    }
}

void Loader::check_keys(const YAML::Node& node, const std::string& field, const std::vector<std::string>& allowed,
                        const std::vector<std::string>& required) const
{
    expect_map(node, field);
    for (const auto& kv : node) {
        const std::string key = kv.first.as<std::string>();
        if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
            fail(kv.first, prefixed(field, key),
                 "unknown key" + did_you_mean(key, allowed) + "; allowed: " + join(allowed));
    }
    for (const auto& key : required)
        if (!node[key]) fail(node, prefixed(field, key), "missing required key");
}

std::string Loader::prefixed(const std::string& field, const std::string& key)
{
    return field.empty() ? key : field + "." + key;
}

std::string Loader::scalar(const YAML::Node& node, const std::string& field) const
{
    if (!node.IsScalar()) fail(node, field, "expected a single value");
    return node.Scalar();
}

double Loader::number(const YAML::Node& node, const std::string& field) const
{
    const std::string text = scalar(node, field);
    if (const auto v = parse_decimal_number(text)) return *v;
    fail(node, field, fmt::format("expected a finite number, got '{}'", text));
}

std::int64_t Loader::integer(const YAML::Node& node, const std::string& field) const
{
    const std::string text = scalar(node, field);
    // Decimal, as in expressions: 010 is ten, never C's octal eight.
    if (const auto v = parse_decimal_integer(text)) return *v;
    fail(node, field, fmt::format("expected an integer, got '{}'", text));
}

std::int64_t Loader::integer_in(const YAML::Node& node, const std::string& field, std::int64_t low,
                                std::int64_t high) const
{
    const std::int64_t v = integer(node, field);
    if (v < low || v > high) fail(node, field, fmt::format("{} is outside {}..{}", v, low, high));
    return v;
}

double Loader::number_in(const YAML::Node& node, const std::string& field, double low, double high) const
{
    const double v = number(node, field);
    if (v < low || v > high) fail(node, field, fmt::format("{} is outside {}..{}", v, low, high));
    return v;
}

/// Parses an expression and checks that it reads only `names`.
Expression Loader::expression(const YAML::Node& node, const std::string& field,
                              const std::set<std::string, std::less<>>& names) const
{
    return expression_text(node, scalar(node, field), field, names);
}

/// Same, for `text` that starts where `node` starts.
Expression Loader::expression_text(const YAML::Node& node, const std::string& text, const std::string& field,
                                   const std::set<std::string, std::less<>>& names) const
{
    // A quoted scalar's mark points at the quote.
    const int quote = node.Tag() == "!" ? 1 : 0;
    auto fail_at = [&](std::size_t offset, const std::string& message) {
        const auto mark = node.Mark();
        throw InputError(file_.string(), mark.line + 1, mark.column + 1 + quote + static_cast<int>(offset), field,
                         fmt::format("{} in '{}' at column {}", message, text, offset + 1));
    };
    Expression e;
    try {
        e = Expression::parse(text);
    } catch (const ExpressionError& err) {
        fail_at(err.offset(), err.what());
    }
    for (const auto& [name, offset] : e.names())
        if (!names.contains(name)) {
            std::vector<std::string> known(names.begin(), names.end());
            fail_at(offset, fmt::format("unknown name '{}'{}", name, did_you_mean(name, known)));
        }
    return e;
}

std::vector<Expression> Loader::dims(const YAML::Node& node, const std::string& field,
                                     const std::set<std::string, std::less<>>& names) const
{
    std::vector<Expression> out;
    if (node.IsScalar()) {
        out.push_back(expression(node, field, names));
        return out;
    }
    if (!node.IsSequence()) fail(node, field, "expected 1 to 3 expressions, e.g. [ceil_div(N, 256)] or [16, 16]");
    // A flow sequence splits `[ceil_div(N, 16), 4]` at every comma, also inside parentheses:
    // join the pieces back until the parentheses balance.
    std::string pending;
    std::optional<YAML::Node> first;
    int depth = 0;
    for (std::size_t i = 0; i < node.size(); ++i) {
        const std::string piece = scalar(node[i], fmt::format("{}[{}]", field, out.size()));
        if (!first) first = node[i];
        pending += (pending.empty() ? "" : ", ") + piece;
        for (char c : piece) depth += c == '(' ? 1 : c == ')' ? -1 : 0;
        if (depth > 0 && i + 1 < node.size()) continue;
        out.push_back(expression_text(*first, pending, fmt::format("{}[{}]", field, out.size()), names));
        pending.clear();
        first.reset();
        depth = 0;
    }
    if (out.empty() || out.size() > 3)
        fail(node, field, "expected 1 to 3 expressions, e.g. [ceil_div(N, 256)] or [16, 16]");
    return out;
}

/// A metric name from the metric table, or an error with a suggestion.
std::string Loader::metric_name(const YAML::Node& key, const std::string& field) const
{
    const std::string name = scalar(key, field);
    if (name.find('@') == std::string::npos && find_metric(name)) return name;
    std::vector<std::string> known;
    for (const auto& m : metric_table()) known.emplace_back(m.name);
    fail(key, field,
         fmt::format("unknown metric '{}'{} (`harness metrics` lists them; see docs/metrics.md)", name,
                     did_you_mean(name, known)));
}

/// `compare: {metric: "rel 5%", ...}`
std::vector<CompareSpec> Loader::compare_rules(const YAML::Node& node, const std::string& field) const
{
    expect_map(node, field);
    std::vector<CompareSpec> out;
    for (const auto& kv : node) {
        const std::string metric = metric_name(kv.first, prefixed(field, kv.first.Scalar()));
        const std::string f = prefixed(field, metric);
        Rule rule;
        try {
            rule = parse_rule(scalar(kv.second, f));
        } catch (const std::invalid_argument& e) {
            fail(kv.second, f, e.what());
        }
        // Only the median time keeps its samples (CaseResult::time_samples_us).
        if (rule.kind == RuleKind::samples && metric != metric::time_median)
            fail(kv.second, f, "'samples' needs the time samples, which only time_median has; use 'rel' or 'abs'");
        out.push_back({metric, rule, where(kv.second)});
    }
    return out;
}

/// `expect: {metric: "<= 64", cliff_count: {measured: ">= 4"}, ...}`
std::vector<ExpectSpec> Loader::expectations(const YAML::Node& node, const std::string& field) const
{
    expect_map(node, field);
    std::vector<ExpectSpec> out;
    for (const auto& kv : node) {
        // The cliff expectations judge the maps along the scanned axis (docs/cliffs.md).
        const bool cliff = is_cliff_expectation(kv.first.Scalar());
        if (cliff && !scanned_)
            fail(kv.first, prefixed(field, kv.first.Scalar()),
                 "the suite scans no parameter, so it has no cliffs to judge; give one parameter "
                 "`{scan: [first, last]}`");
        const std::string metric =
            cliff ? kv.first.Scalar() : metric_name(kv.first, prefixed(field, kv.first.Scalar()));
        const std::string f = prefixed(field, metric);
        if (!kv.second.IsMap()) {
            out.push_back({metric, condition(kv.second, f), where(kv.second)});
            continue;
        }
        // `{measured: ..., exact: ...}`: a cliff rule for each kind of map.
        if (!cliff)
            fail(kv.second, f,
                 fmt::format("expected a condition, e.g. '<= 64'; only {} and {} take a condition per kind of map "
                             "({{measured: ..., exact: ...}})",
                             cliff_count_expectation, cliff_depth_expectation));
        check_keys(kv.second, f, {cliff_maps_name(CliffMaps::measured), cliff_maps_name(CliffMaps::exact)});
        if (kv.second.size() == 0)
            fail(kv.second, f, "expected a condition for the measured maps, the exact maps or both");
        for (const auto maps : {CliffMaps::measured, CliffMaps::exact})
            if (const YAML::Node rule = kv.second[cliff_maps_name(maps)])
                out.push_back({metric, condition(rule, prefixed(f, cliff_maps_name(maps))), where(rule), maps});
    }
    return out;
}

ExpectRule Loader::condition(const YAML::Node& node, const std::string& field) const
{
    try {
        return parse_expect(scalar(node, field));
    } catch (const std::invalid_argument& e) {
        fail(node, field, e.what());
    }
}

std::vector<std::string> Loader::string_list(const YAML::Node& node, const std::string& field) const
{
    std::vector<std::string> out;
    if (node.IsScalar()) {
        out.push_back(node.Scalar());
        return out;
    }
    if (!node.IsSequence()) fail(node, field, "expected a list");
    for (std::size_t i = 0; i < node.size(); ++i) out.push_back(scalar(node[i], fmt::format("{}[{}]", field, i)));
    return out;
}

SourceLocation Loader::where(const YAML::Node& node) const
{
    const auto mark = node.Mark();
    return mark.is_null() ? SourceLocation{} : SourceLocation{mark.line + 1, mark.column + 1};
}

Tolerance Loader::tolerance(const YAML::Node& node, const std::string& field, Tolerance base) const
{
    check_keys(node, field, {"rel", "abs"});
    // A relative tolerance of 1 already accepts any output of the reference's sign.
    if (node["rel"]) base.rel = number_in(node["rel"], field + ".rel", 0.0, 1.0);
    if (node["abs"]) base.abs = non_negative(node["abs"], field + ".abs");
    return base;
}

double Loader::non_negative(const YAML::Node& node, const std::string& field) const
{
    const double v = number(node, field);
    if (v < 0) fail(node, field, "must not be negative");
    return v;
}

ParamSpec Loader::param(const std::string& name, const YAML::Node& node, const std::string& field) const
{
    static const std::regex identifier("[A-Za-z_][A-Za-z0-9_]*");
    ParamSpec p;
    p.name = name;
    // The length first: std::regex recurses once per character.
    if (name.size() > max_name_length || !std::regex_match(name, identifier))
        fail(node, field.substr(0, 200), "a parameter name must be an identifier of at most 100 characters");
    if (name == "i") fail(node, field, "'i' is reserved for buffer index expressions");
    if (node.IsSequence()) {
        if (node.size() == 0) fail(node, field, "needs at least one value");
        if (node.size() > max_param_values)
            fail(node, field, fmt::format("{} values, more than the {} allowed", node.size(), max_param_values));
        for (std::size_t k = 0; k < node.size(); ++k)
            p.values.push_back(integer(node[k], fmt::format("{}[{}]", field, k)));
    } else if (node.IsMap() && node["scan"]) {
        scan(p, node, field);
    } else if (node.IsMap()) {
        check_keys(node, field, {"from", "to", "step", "mul"}, {"from", "to"});
        const std::int64_t from = integer(node["from"], field + ".from");
        const std::int64_t to = integer(node["to"], field + ".to");
        if (to < from) fail(node, field, "'to' is below 'from'");
        if (node["step"] && node["mul"]) fail(node, field, "give 'step' or 'mul', not both");
        if (node["mul"]) {
            const std::int64_t mul = integer(node["mul"], field + ".mul");
            if (mul < 2) fail(node["mul"], field + ".mul", "must be at least 2");
            if (from < 1) fail(node["from"], field + ".from", "must be positive with 'mul'");
            for (std::int64_t v = from; v <= to; v *= mul) {
                p.values.push_back(v);
                if (v > to / mul) break;
            }
        } else {
            const std::int64_t step = node["step"] ? integer(node["step"], field + ".step") : 1;
            if (step < 1) fail(node["step"], field + ".step", "must be positive");
            // Counted before a value is built, in unsigned arithmetic: to - from may exceed INT64_MAX.
            // The gaps are counted, not the values: over the whole int64 span, gaps + 1 wraps to 0.
            const std::uint64_t span = static_cast<std::uint64_t>(to) - static_cast<std::uint64_t>(from);
            const std::uint64_t gaps = span / static_cast<std::uint64_t>(step);
            if (gaps >= max_param_values)
                fail(node, field,
                     fmt::format("the range has {} values, more than the {} allowed", value_count_text(gaps),
                                 max_param_values));
            const std::uint64_t count = gaps + 1;
            for (std::uint64_t k = 0; k < count; ++k)
                p.values.push_back(
                    static_cast<std::int64_t>(static_cast<std::uint64_t>(from) + k * static_cast<std::uint64_t>(step)));
        }
    } else {
        p.values.push_back(integer(node, field));
    }
    return p;
}

/// `{scan: [first, last], step: k, pitch: "..."}`: every value from first to last, k apart. The
/// pitch is an expression of every parameter, read once they are all known (Loader::suite).
void Loader::scan(ParamSpec& p, const YAML::Node& node, const std::string& field) const
{
    check_keys(node, field, {"scan", "step", "pitch"}, {"scan"});
    const YAML::Node range = node["scan"];
    if (!range.IsSequence() || range.size() != 2)
        fail(range, field + ".scan", "expected [first, last], e.g. [1, 4096] (both ends inclusive)");
    const std::int64_t from = integer(range[0], field + ".scan[0]");
    const std::int64_t to = integer(range[1], field + ".scan[1]");
    if (to < from)
        fail(range, field + ".scan",
             fmt::format("[{}, {}] is reversed: the first value must not exceed the last", from, to));
    const std::int64_t step = node["step"] ? integer(node["step"], field + ".step") : 1;
    if (step < 1) fail(node["step"], field + ".step", fmt::format("{}: the step must be positive", step));
    // Counted before a value is built, in unsigned arithmetic: to - from may exceed INT64_MAX.
    const std::uint64_t span = static_cast<std::uint64_t>(to) - static_cast<std::uint64_t>(from);
    const std::uint64_t gaps = span / static_cast<std::uint64_t>(step);
    if (gaps >= max_param_values)
        fail(range, field + ".scan",
             fmt::format("the scan has {} values, more than the {} a parameter may have (every value is a case)",
                         value_count_text(gaps), max_param_values));
    const std::uint64_t count = gaps + 1;
    p.scanned = true;
    for (std::uint64_t k = 0; k < count; ++k)
        p.values.push_back(
            static_cast<std::int64_t>(static_cast<std::uint64_t>(from) + k * static_cast<std::uint64_t>(step)));
}

/// `path` relative to the suite's folder, made absolute with symbolic links resolved.
fs::path Loader::resolve(const YAML::Node& node, const std::string& field, const std::string& path) const
{
    std::error_code ec;
    fs::path out = fs::weakly_canonical(dir_ / path, ec);
    if (ec) fail(node, field, fmt::format("cannot resolve '{}': {}", path.substr(0, 200), ec.message()));
    return out;
}

/// Refuses a source or include folder outside the project, unless the user allowed it.
void Loader::check_inside_project(const YAML::Node& node, const std::string& field, const fs::path& path) const
{
    // Never the project's repository, wherever sources may lie.
    if (in_git_folder(resolved_path(path), resolved_path(root_)))
        fail(node, field, fmt::format("{} {}", path.string(), path_refusal(PathVerdict::in_git_folder)));
    if (options_.sources_anywhere || is_inside(path, root_)) return;
    fail(node, field,
         fmt::format("{} lies outside the project {} (the nearest folder above the suite that holds kernels/, "
                     "baselines/ or .git); pass --sources-anywhere to allow it",
                     path.string(), root_.string()));
}

/// The value of `e` at sweep point `point`, or an error naming the field and the point.
std::int64_t Loader::value_at(const YAML::Node& node, const std::string& field, const Expression& e,
                              std::size_t point) const
{
    try {
        return e.evaluate(points_[point]);
    } catch (const ExpressionError& err) {
        fail(node, field, fmt::format("{} in '{}' at {}", err.what(), e.text(), point_texts_[point]));
    }
}

/// An expression of the sweep (flops, bytes) is computable at every point.
void Loader::check_computable(const YAML::Node& node, const std::string& field, const Expression& e) const
{
    for (const std::size_t p : checked_points_) value_at(node, field, e, p);
}

} // namespace harness::suite
