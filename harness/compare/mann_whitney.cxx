#include "harness/compare/mann_whitney.hxx"

#include <algorithm>
#include <cmath>
#include <vector>

namespace harness::compare {

namespace {

/// P(Z >= z) for a standard normal Z.
double upper_tail(double z)
{
    return 0.5 * std::erfc(z / std::sqrt(2.0));
}

} // namespace

MannWhitney mann_whitney(std::span<const double> a, std::span<const double> b)
{
    MannWhitney r;
    const double n_a = static_cast<double>(a.size());
    const double n_b = static_cast<double>(b.size());
    if (a.empty() || b.empty()) return r;

    // Rank the pooled sample; tied values share the mean of their ranks.
    struct Entry {
        double value;
        bool from_a;
    };
    std::vector<Entry> pooled;
    pooled.reserve(a.size() + b.size());
    for (double x : a) pooled.push_back({x, true});
    for (double y : b) pooled.push_back({y, false});
    std::sort(pooled.begin(), pooled.end(), [](const Entry& l, const Entry& r) { return l.value < r.value; });

    double rank_sum_a = 0.0;
    double tie_term = 0.0; // sum of t^3 - t over groups of t tied values
    for (std::size_t i = 0; i < pooled.size();) {
        std::size_t j = i;
        while (j < pooled.size() && pooled[j].value == pooled[i].value) ++j;
        const double t = static_cast<double>(j - i);
        const double mean_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
        for (std::size_t k = i; k < j; ++k)
            if (pooled[k].from_a) rank_sum_a += mean_rank;
        tie_term += t * t * t - t;
        i = j;
    }

    r.u_a = rank_sum_a - n_a * (n_a + 1.0) / 2.0;
    r.u_b = n_a * n_b - r.u_a;
    const double n = n_a + n_b;
    const double mean_u = n_a * n_b / 2.0;
    const double variance = n_a * n_b / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
    if (variance <= 0.0) return r; // every value tied: no evidence either way
    const double sd = std::sqrt(variance);
    const double d = r.u_a - mean_u;
    r.z = d / sd;
    // Continuity correction: move half a unit of U towards the mean.
    r.p_a_greater = std::min(1.0, upper_tail((d - 0.5) / sd));
    r.p_a_less = std::min(1.0, upper_tail((-d - 0.5) / sd));
    r.p_two_sided = std::min(1.0, 2.0 * upper_tail((std::abs(d) - 0.5) / sd));
    return r;
}

} // namespace harness::compare
