#include "harness/suite/expression.hxx"

#include <gtest/gtest.h>

namespace expression_test {

using harness::suite::Bindings;
using harness::suite::Expression;
using harness::suite::ExpressionError;

namespace {

std::int64_t eval(const std::string& text, const Bindings& b = {})
{
    return Expression::parse(text).evaluate(b);
}

std::size_t error_offset(const std::string& text, const Bindings& b = {})
{
    try {
        Expression::parse(text).evaluate(b);
    } catch (const ExpressionError& e) {
        return e.offset();
    }
    ADD_FAILURE() << "no error for '" << text << "'";
    return 0;
}

} // namespace

TEST(Expression, ArithmeticFollowsPrecedence)
{
    EXPECT_EQ(eval("1 + 2 * 3"), 7);
    EXPECT_EQ(eval("(1 + 2) * 3"), 9);
    EXPECT_EQ(eval("10 - 4 - 3"), 3);
    EXPECT_EQ(eval("17 / 5"), 3);
    EXPECT_EQ(eval("17 % 5"), 2);
    EXPECT_EQ(eval("-3 * -(2 + 1)"), 9);
}

TEST(Expression, FunctionsAndParameters)
{
    const Bindings b = {{"N", 1000}, {"TILE", 32}};
    EXPECT_EQ(eval("ceil_div(N, TILE)", b), 32);
    EXPECT_EQ(eval("ceil_div(1024, TILE)", b), 32);
    EXPECT_EQ(eval("ceil_div(0, 4)"), 0);
    EXPECT_EQ(eval("min(N, 512) + max(TILE, 16)", b), 544);
    EXPECT_EQ(eval("2*N*N*N", b), 2000000000);
}

TEST(Expression, NamesAreListedWithOffsets)
{
    const auto names = Expression::parse("ceil_div(M, TILE) * N").names();
    ASSERT_EQ(names.size(), 3u);
    EXPECT_EQ(names[0].first, "M");
    EXPECT_EQ(names[0].second, 9u);
    EXPECT_EQ(names[2].first, "N");
}

TEST(Expression, ErrorsPointAtTheBadToken)
{
    EXPECT_EQ(error_offset("1 + $"), 4u);
    EXPECT_EQ(error_offset("ceil_div(N, 4"), 13u);
    EXPECT_EQ(error_offset("foo(1)"), 0u);
    EXPECT_EQ(error_offset("1 +"), 3u);
    EXPECT_EQ(error_offset("2 * M", {{"N", 1}}), 4u);
    EXPECT_EQ(error_offset("4 / (N - 1)", {{"N", 1}}), 2u);
    EXPECT_EQ(error_offset("min(1)"), 0u);
    EXPECT_EQ(error_offset("12abc"), 0u);
    EXPECT_EQ(error_offset("1 2"), 2u);
}

TEST(Expression, OverflowIsAnErrorNotAWrap)
{
    EXPECT_THROW(eval("9223372036854775807 + 1"), ExpressionError);
    EXPECT_THROW(eval("N * N * N", {{"N", 3000000}}), ExpressionError);
    EXPECT_THROW(eval("99999999999999999999"), ExpressionError);
    EXPECT_THROW(eval("ceil_div(4, 0)"), ExpressionError);
}

// A bound expression fixes every parameter once and evaluates at many values of one name, with
// the same values and the same errors as evaluating with that name bound.
TEST(Expression, BoundToOneFreeNameItEvaluatesAsWithBindings)
{
    const Bindings params = {{"N", 7}, {"i", 1000}}; // the free name wins over a parameter
    for (const std::string text : {"(i % 3) * N + i / 3", "ceil_div(i, N) - min(i, 4) * max(-i, -N)", "-i"}) {
        const auto e = Expression::parse(text);
        const auto bound = e.bind(params, "i");
        for (std::int64_t i = -20; i <= 40; ++i) {
            Bindings with_i = params;
            with_i["i"] = i;
            std::int64_t expected = 0;
            bool throws = false;
            try {
                expected = e.evaluate(with_i);
            } catch (const ExpressionError&) {
                throws = true;
            }
            if (throws)
                EXPECT_THROW(bound.evaluate(i), ExpressionError) << text << " at i = " << i;
            else
                EXPECT_EQ(bound.evaluate(i), expected) << text << " at i = " << i;
        }
    }
    // Errors keep their offsets.
    const auto divide = Expression::parse("N / (i - 2)").bind(params, "i");
    EXPECT_EQ(divide.evaluate(3), 7);
    try {
        divide.evaluate(2);
        ADD_FAILURE() << "no division-by-zero error";
    } catch (const ExpressionError& e) {
        EXPECT_EQ(e.offset(), 2u);
    }
    EXPECT_THROW(Expression::parse("i * 9223372036854775807").bind(params, "i").evaluate(2), ExpressionError);
    // A name neither free nor fixed is refused when binding, naming it.
    try {
        Expression::parse("i + M").bind(params, "i");
        ADD_FAILURE() << "no error for an unknown name";
    } catch (const ExpressionError& e) {
        EXPECT_EQ(e.offset(), 4u);
        EXPECT_NE(std::string(e.what()).find("'M'"), std::string::npos);
    }
    EXPECT_THROW(Expression().bind(params, "i"), ExpressionError);
}

} // namespace expression_test
