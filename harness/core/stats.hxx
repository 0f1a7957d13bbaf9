#pragma once
// Order statistics of a sample, written once: the median and the quantiles that timing, comparison,
// bisect, cliff scans and the history all take.

#include <span>

namespace harness {

/// The median of `values`: the middle value, or the mean of the middle two for an even count.
/// Throws Error(internal) for no values: a caller that may have none says what stands for them.
double median(std::span<const double> values);

/// median() of `values`, reordering them instead of copying them: for a caller that reuses one
/// buffer in a loop.
double median_in_place(std::span<double> values);

/// The `q` quantile (0 <= q <= 1) of `values`: linear interpolation between the two values around
/// position q * (n - 1) of the sorted sample (R's type 7, numpy's default), so that quantile 0.5 is
/// the median. Throws Error(internal) for no values or a `q` outside [0, 1].
double quantile(std::span<const double> values, double q);

/// quantile() of values already sorted in ascending order, without copying them.
double sorted_quantile(std::span<const double> sorted, double q);

} // namespace harness
