// The expression parser and evaluator, alone: deep nesting and long chains reach it here without
// a YAML file around them.

#include "rules.hxx"
#include "targets.hxx"

#include "harness/suite/expression.hxx"

#include <cstdint>
#include <fmt/format.h>
#include <limits>

namespace harness::fuzz {

namespace {

/// An error's offset points into the text (the loader turns it into a column).
void require_offset(const suite::ExpressionError& error, const std::string& input)
{
    require(error.offset() <= input.size(), "error-offset-in-text",
            fmt::format("'{}' at offset {} of a {}-byte expression", error.what(), error.offset(), input.size()));
}

} // namespace

Reception run_expression(const std::string& input, const InputContext&)
{
    // Ordinary sizes, and the extremes that overflow checks must catch.
    static const suite::Bindings bindings[] = {
        {{"N", 4096}, {"M", 1000}, {"K", 64}, {"S", 8}, {"i", 5}},
        {{"N", std::numeric_limits<std::int64_t>::max()},
         {"M", std::numeric_limits<std::int64_t>::min()},
         {"K", 0},
         {"S", -1},
         {"i", -1}},
    };
    suite::Expression e;
    try {
        e = suite::Expression::parse(input);
    } catch (const suite::ExpressionError& error) {
        require_offset(error, input);
        return {false, error.what()};
    }
    for (const auto& [name, offset] : e.names())
        require(input.compare(offset, name.size(), name) == 0, "name-offset",
                fmt::format("the name '{}' is reported at offset {}, where the text does not hold it", excerpt(name),
                            offset));
    std::string refusal;
    for (const auto& b : bindings) {
        try {
            (void)e.evaluate(b);
        } catch (const suite::ExpressionError& error) {
            require_offset(error, input);
            refusal = error.what();
        }
    }
    return {refusal.empty(), refusal};
}

std::span<const std::string_view> expression_tokens()
{
    using namespace std::string_view_literals;
    // clang-format off
    static constexpr std::string_view tokens[] = {
        "ceil_div("sv, "min("sv, "max("sv, "floor("sv, "N"sv, "M"sv, "K"sv, "S"sv, "i"sv, "_"sv, "+"sv, "-"sv,
        "*"sv, "/"sv, "%"sv, "("sv, ")"sv, ","sv, " "sv, "--"sv, "- -"sv, "N*N*N*N*N"sv, "ceil_div(N, 0)"sv,
        "ceil_div(-1, 2)"sv, "(-9223372036854775807 - 1)"sv, "(-9223372036854775807-1) / -1"sv,
        "(-9223372036854775807-1) % -1"sv, "N+N+N+N+N+N+N+N"sv, "1e3"sv, "1.0"sv, "0x10"sv,
    };
    // clang-format on
    return tokens;
}

} // namespace harness::fuzz
