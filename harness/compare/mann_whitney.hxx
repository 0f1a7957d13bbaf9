#pragma once
// The Mann-Whitney U test (Wilcoxon rank-sum): do two samples come from the same distribution?
// Distribution-free, so it suits kernel times, which are skewed and have outliers. Large-sample
// normal approximation with tie correction and continuity correction.

#include <span>

namespace harness::compare {

/// The result of comparing sample `a` with sample `b`.
struct MannWhitney {
    double u_a = 0.0;         ///< U of `a`: pairs (x in a, y in b) with x > y, ties counting one half
    double u_b = 0.0;         ///< n_a * n_b - u_a
    double z = 0.0;           ///< standardised u_a (positive: `a` tends to be larger)
    double p_two_sided = 1.0; ///< H1: the distributions differ
    double p_a_greater = 1.0; ///< H1: `a` tends to be larger than `b`
    double p_a_less = 1.0;    ///< H1: `a` tends to be smaller than `b`
};

/// Compares two samples; each needs at least one value (p = 1 otherwise).
MannWhitney mann_whitney(std::span<const double> a, std::span<const double> b);

} // namespace harness::compare
