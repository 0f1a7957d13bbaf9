// core/stats: the one median and quantile of the tool, against values worked out by hand.

#include "harness/core/error.hxx"
#include "harness/core/stats.hxx"

#include <gtest/gtest.h>
#include <limits>
#include <vector>

namespace core_stats_test {

using namespace harness;

TEST(CoreStats, MedianOfAnOddCountIsTheMiddleValue)
{
    EXPECT_DOUBLE_EQ(median(std::vector<double>{7}), 7.0);
    EXPECT_DOUBLE_EQ(median(std::vector<double>{9, 1, 5}), 5.0);
    EXPECT_DOUBLE_EQ(median(std::vector<double>{3, -2, 100, 4, 4}), 4.0);
}

TEST(CoreStats, MedianOfAnEvenCountIsTheMeanOfTheMiddleTwo)
{
    EXPECT_DOUBLE_EQ(median(std::vector<double>{3, 1, 2, 10}), 2.5);
    EXPECT_DOUBLE_EQ(median(std::vector<double>{8, 2}), 5.0);
    EXPECT_DOUBLE_EQ(median(std::vector<double>{6, 1, 5, 2, 4, 3}), 3.5);
}

TEST(CoreStats, MedianLeavesItsInputAloneAndInPlaceReordersIt)
{
    const std::vector<double> values = {5, 4, 3, 2, 1, 0};
    EXPECT_DOUBLE_EQ(median(values), 2.5);
    EXPECT_EQ(values, (std::vector<double>{5, 4, 3, 2, 1, 0}));
    std::vector<double> buffer = values;
    EXPECT_DOUBLE_EQ(median_in_place(buffer), 2.5);
    EXPECT_NE(buffer, values) << "median_in_place reorders instead of copying";
}

TEST(CoreStats, NoValuesIsAnError)
{
    const std::vector<double> none;
    std::vector<double> buffer;
    EXPECT_THROW(median(none), Error);
    EXPECT_THROW(median_in_place(buffer), Error);
    EXPECT_THROW(quantile(none, 0.5), Error);
    EXPECT_THROW(sorted_quantile(none, 0.5), Error);
    try {
        median(none);
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::internal);
        EXPECT_STREQ(e.what(), "median of no values");
    }
}

TEST(CoreStats, QuantilesInterpolateBetweenOrderStatistics)
{
    // Sorted: 10 20 30 40 50; position q * 4.
    const std::vector<double> values = {50, 10, 40, 20, 30};
    EXPECT_DOUBLE_EQ(quantile(values, 0.0), 10.0);
    EXPECT_DOUBLE_EQ(quantile(values, 1.0), 50.0);
    EXPECT_DOUBLE_EQ(quantile(values, 0.25), 20.0);
    EXPECT_DOUBLE_EQ(quantile(values, 0.1), 14.0); // 10 + 0.4 * 10
    EXPECT_DOUBLE_EQ(quantile(values, 0.9), 46.0); // 40 + 0.6 * 10
    EXPECT_DOUBLE_EQ(quantile(values, 0.5), median(values));
    // An even count: the 0.5 quantile is the median too, the quartiles fall between values.
    const std::vector<double> even = {1, 2, 3, 4};
    EXPECT_DOUBLE_EQ(quantile(even, 0.5), 2.5);
    EXPECT_DOUBLE_EQ(quantile(even, 0.25), 1.75);
    EXPECT_DOUBLE_EQ(quantile(even, 0.75), 3.25);
    EXPECT_DOUBLE_EQ(sorted_quantile(even, 0.75), 3.25);
    EXPECT_DOUBLE_EQ(quantile(std::vector<double>{42}, 0.3), 42.0);
}

TEST(CoreStats, AQuantileOutsideZeroToOneIsAnError)
{
    const std::vector<double> values = {1, 2, 3};
    EXPECT_THROW(quantile(values, -0.1), Error);
    EXPECT_THROW(quantile(values, 1.5), Error);
    EXPECT_THROW(sorted_quantile(values, std::numeric_limits<double>::quiet_NaN()), Error);
}

} // namespace core_stats_test
