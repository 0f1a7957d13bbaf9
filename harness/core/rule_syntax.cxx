#include "harness/core/rule_syntax.hxx"

#include "harness/core/enum_names.hxx"
#include "harness/core/text.hxx"

#include <cctype>
#include <cmath>
#include <fmt/format.h>
#include <optional>
#include <stdexcept>
#include <string>

namespace harness {

namespace {

/// A finite number filling all of `text`, or nullopt.
std::optional<double> parse_number(std::string_view text)
{
    return parse_decimal_number(text);
}

/// "5%" -> 5; the percent sign is required so that "rel 5" cannot mean 500 %.
double parse_percent(std::string_view text, std::string_view rule)
{
    text = trim(text);
    if (text.empty() || text.back() != '%')
        throw std::invalid_argument(fmt::format("'{}': give the tolerance as a percentage, e.g. '{} 5%'", rule,
                                                rule.substr(0, rule.find(' '))));
    const auto v = parse_number(text.substr(0, text.size() - 1));
    if (!v || *v < 0) throw std::invalid_argument(fmt::format("'{}': '{}' is not a percentage", rule, text));
    return *v;
}

constexpr const char* rule_help =
    "rules are 'exact', 'rel 5%', 'abs 0.05', 'samples 5%', 'report' or 'ignore'; rel and samples take an optional "
    "'min <value>' below which a change never counts, e.g. 'rel 5% min 1048576'";

} // namespace

Rule parse_rule(std::string_view text)
{
    const std::string_view t = trim(text);
    Rule r;
    r.text = std::string(t);
    const std::size_t space = t.find(' ');
    const std::string_view word = t.substr(0, space);
    const std::string_view rest = space == std::string_view::npos ? std::string_view{} : trim(t.substr(space));
    if (word == "exact" || word == "ignore" || word == "report") {
        if (!rest.empty()) throw std::invalid_argument(fmt::format("'{}': '{}' takes no tolerance", t, word));
        r.kind = word == "exact" ? RuleKind::exact : word == "report" ? RuleKind::report : RuleKind::ignore;
        return r;
    }
    if (word == "rel" || word == "samples") {
        r.kind = word == "rel" ? RuleKind::relative : RuleKind::samples;
        std::string_view percent = rest;
        if (const std::size_t min_at = rest.find(" min"); min_at != std::string_view::npos) {
            percent = trim(rest.substr(0, min_at));
            const auto v = parse_number(trim(rest.substr(min_at + 4)));
            if (!v || *v < 0)
                throw std::invalid_argument(fmt::format(
                    "'{}': 'min' takes a non-negative number in the metric's unit, e.g. '{} 5% min 1'", t, word));
            r.minimum = *v;
        }
        r.percent = parse_percent(percent, t);
        r.tolerance = r.percent / 100.0;
        return r;
    }
    if (word == "abs") {
        r.kind = RuleKind::absolute;
        const auto v = parse_number(rest);
        if (!v || *v < 0)
            throw std::invalid_argument(fmt::format("'{}': give a non-negative number, e.g. 'abs 0.05'", t));
        r.tolerance = *v;
        return r;
    }
    throw std::invalid_argument(fmt::format("unknown rule '{}'; {}", t, rule_help));
}

std::optional<ToleranceBand> tolerance_band(const Rule& rule)
{
    switch (rule.kind) {
    case RuleKind::exact: return ToleranceBand{ToleranceBand::Kind::relative, 0.0};
    case RuleKind::relative:
    case RuleKind::samples: return ToleranceBand{ToleranceBand::Kind::relative, rule.percent};
    case RuleKind::absolute: return ToleranceBand{ToleranceBand::Kind::absolute, rule.tolerance};
    case RuleKind::report:
    case RuleKind::ignore: return std::nullopt;
    }
    return std::nullopt;
}

namespace {
constexpr EnumName<ToleranceBand::Kind> tolerance_kind_names[] = {{ToleranceBand::Kind::relative, "relative"},
                                                                  {ToleranceBand::Kind::absolute, "absolute"}};
} // namespace

const char* tolerance_kind_name(ToleranceBand::Kind kind)
{
    return enum_name(tolerance_kind_names, kind);
}

std::optional<ToleranceBand::Kind> tolerance_kind_from_name(std::string_view name)
{
    return enum_from_name(tolerance_kind_names, name);
}

ExpectRule parse_expect(std::string_view text)
{
    const std::string_view t = trim(text);
    static constexpr std::pair<std::string_view, ExpectOp> ops[] = {{"==", ExpectOp::eq}, {"!=", ExpectOp::ne},
                                                                    {"<=", ExpectOp::le}, {">=", ExpectOp::ge},
                                                                    {"<", ExpectOp::lt},  {">", ExpectOp::gt}};
    for (const auto& [symbol, op] : ops) {
        if (!t.starts_with(symbol)) continue;
        const auto bound = parse_number(t.substr(symbol.size()));
        if (!bound)
            throw std::invalid_argument(
                fmt::format("'{}': expected a number after '{}', e.g. '{} 64'", t, symbol, symbol));
        return {op, *bound, fmt::format("{} {}", symbol, trim(t.substr(symbol.size())))};
    }
    throw std::invalid_argument(
        fmt::format("'{}': an expectation is an operator (==, !=, <, <=, >, >=) and a number, e.g. '<= 64'", t));
}

bool expect_holds(const ExpectRule& rule, double value)
{
    switch (rule.op) {
    case ExpectOp::eq: return value == rule.bound;
    case ExpectOp::ne: return value != rule.bound;
    case ExpectOp::lt: return value < rule.bound;
    case ExpectOp::le: return value <= rule.bound;
    case ExpectOp::gt: return value > rule.bound;
    case ExpectOp::ge: return value >= rule.bound;
    }
    return false;
}

} // namespace harness
