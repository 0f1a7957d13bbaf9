#include "harness/core/stats.hxx"

#include "harness/core/error.hxx"

#include <algorithm>
#include <fmt/format.h>
#include <vector>

namespace harness {

namespace {

void require_values(std::size_t count, const char* what)
{
    if (count == 0) throw Error(ErrorKind::internal, fmt::format("{} of no values", what));
}

} // namespace

double median(std::span<const double> values)
{
    require_values(values.size(), "median");
    std::vector<double> copy(values.begin(), values.end());
    return median_in_place(copy);
}

double median_in_place(std::span<double> values)
{
    require_values(values.size(), "median");
    // nth_element places the upper middle value; the lower one of an even count is the largest of
    // the half before it. Linear time, where sorting would take n log n.
    const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
    std::nth_element(values.begin(), middle, values.end());
    if (values.size() % 2 == 1) return *middle;
    return (*std::max_element(values.begin(), middle) + *middle) / 2.0;
}

double sorted_quantile(std::span<const double> sorted, double q)
{
    require_values(sorted.size(), "quantile");
    if (!(q >= 0.0 && q <= 1.0)) throw Error(ErrorKind::internal, fmt::format("quantile {} outside [0, 1]", q));
    const double at = q * static_cast<double>(sorted.size() - 1);
    const auto below = std::min(static_cast<std::size_t>(at), sorted.size() - 1);
    const double next = sorted[std::min(below + 1, sorted.size() - 1)];
    return sorted[below] + (at - static_cast<double>(below)) * (next - sorted[below]);
}

double quantile(std::span<const double> values, double q)
{
    std::vector<double> sorted(values.begin(), values.end());
    std::sort(sorted.begin(), sorted.end());
    return sorted_quantile(sorted, q);
}

} // namespace harness
