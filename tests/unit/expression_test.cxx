#include "harness/suite/expression.hxx"

#include <gtest/gtest.h>

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
