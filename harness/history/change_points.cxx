#include "harness/history/change_points.hxx"

#include "harness/core/stats.hxx"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

namespace harness::history {

namespace {

double mean_of(std::span<const double> v)
{
    return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

/// Sums of squared deviations from the mean of any stretch, from prefix sums.
class SegmentCost {
public:
    explicit SegmentCost(std::span<const double> values)
        : sum_(values.size() + 1, 0.0), squares_(values.size() + 1, 0.0)
    {
        // Centred on the first value, so that large levels with small steps keep their precision.
        const double origin = values.empty() ? 0.0 : values[0];
        for (std::size_t i = 0; i < values.size(); ++i) {
            const double x = values[i] - origin;
            sum_[i + 1] = sum_[i] + x;
            squares_[i + 1] = squares_[i] + x * x;
        }
    }
    /// Σ (x - mean)² over [begin, end).
    double operator()(std::size_t begin, std::size_t end) const
    {
        const double n = static_cast<double>(end - begin);
        const double s = sum_[end] - sum_[begin];
        return std::max(0.0, squares_[end] - squares_[begin] - s * s / n);
    }

private:
    std::vector<double> sum_, squares_;
};

std::vector<ChangePoint> describe(std::span<const double> values, const std::vector<std::size_t>& cuts, double noise)
{
    std::vector<ChangePoint> out;
    std::vector<std::size_t> bounds = {0};
    bounds.insert(bounds.end(), cuts.begin(), cuts.end());
    bounds.push_back(values.size());
    for (std::size_t k = 1; k + 1 < bounds.size(); ++k) {
        ChangePoint c;
        c.index = bounds[k];
        c.before = mean_of(values.subspan(bounds[k - 1], bounds[k] - bounds[k - 1]));
        c.after = mean_of(values.subspan(bounds[k], bounds[k + 1] - bounds[k]));
        c.noise_units = noise > 0.0 ? std::fabs(c.after - c.before) / noise : 0.0;
        out.push_back(c);
    }
    return out;
}

} // namespace

SeriesAnalysis analyze_exact(std::span<const double> values)
{
    SeriesAnalysis a;
    for (std::size_t i = 1; i < values.size(); ++i)
        if (values[i] != values[i - 1]) a.change_points.push_back({i, values[i - 1], values[i], 0.0});
    return a;
}

double neighbour_noise(std::span<const double> values)
{
    if (values.size() < 3) return 0.0;
    std::vector<double> d;
    for (std::size_t i = 1; i < values.size(); ++i) d.push_back(std::fabs(values[i] - values[i - 1]));
    return 1.4826 * median_in_place(d) / std::sqrt(2.0);
}

std::vector<std::size_t> pelt_mean_changes(std::span<const double> values, double noise, double penalty,
                                           std::size_t min_segment)
{
    const std::size_t n = values.size();
    const std::size_t m = std::max<std::size_t>(min_segment, 1);
    if (n < 2 * m || noise <= 0.0) return {};
    const SegmentCost cost(values);
    const double scale = 1.0 / (noise * noise);
    constexpr double unset = std::numeric_limits<double>::infinity();
    // best[t]: the least penalised cost of values[0, t); last[t]: where its last segment starts.
    std::vector<double> best(n + 1, unset);
    std::vector<std::size_t> last(n + 1, 0);
    best[0] = -penalty;
    std::vector<std::size_t> candidates = {0};
    for (std::size_t t = m; t <= n; ++t) {
        // A segment may start at t - m once that leaves m points before it too.
        if (t >= 2 * m) candidates.push_back(t - m);
        double chosen = unset;
        for (std::size_t tau : candidates) {
            if (best[tau] == unset || t - tau < m) continue;
            const double c = best[tau] + cost(tau, t) * scale + penalty;
            if (c < chosen) {
                chosen = c;
                last[t] = tau;
            }
        }
        best[t] = chosen;
        // PELT's pruning: a start that cannot beat the best now never will (the cost only grows).
        std::erase_if(candidates, [&](std::size_t tau) {
            return best[tau] != unset && t - tau >= m && best[tau] + cost(tau, t) * scale > best[t];
        });
    }
    std::vector<std::size_t> cuts;
    for (std::size_t t = n; t > 0 && last[t] > 0; t = last[t]) cuts.push_back(last[t]);
    std::reverse(cuts.begin(), cuts.end());
    return cuts;
}

double mann_kendall_z(std::span<const double> values)
{
    const std::size_t n = values.size();
    if (n < 3) return 0.0;
    double s = 0.0;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j) s += (values[j] > values[i]) - (values[j] < values[i]);
    std::map<double, std::size_t> ties;
    for (double v : values) ++ties[v];
    const double nn = static_cast<double>(n);
    double variance = nn * (nn - 1) * (2 * nn + 5);
    for (const auto& [value, count] : ties) {
        const double t = static_cast<double>(count);
        variance -= t * (t - 1) * (2 * t + 5);
    }
    variance /= 18.0;
    if (variance <= 0.0 || s == 0.0) return 0.0;
    return (s > 0 ? s - 1.0 : s + 1.0) / std::sqrt(variance);
}

double theil_sen_slope(std::span<const double> values)
{
    std::vector<double> slopes;
    for (std::size_t i = 0; i < values.size(); ++i)
        for (std::size_t j = i + 1; j < values.size(); ++j)
            slopes.push_back((values[j] - values[i]) / static_cast<double>(j - i));
    return slopes.empty() ? 0.0 : median_in_place(slopes);
}

namespace {

/// The creep check on the `k` points from `first`.
std::optional<Creep> creep_in(std::span<const double> values, std::size_t first, std::size_t k, double noise,
                              const ChangePointOptions& options)
{
    const auto window = values.subspan(first, k);
    Creep c;
    c.first = first;
    c.window = k;
    c.mann_kendall_z = mann_kendall_z(window);
    const double slope = theil_sen_slope(window);
    c.total = slope * static_cast<double>(k - 1);
    c.noise_units = std::fabs(c.total) / noise;
    if (std::fabs(c.mann_kendall_z) < options.creep_min_z || c.noise_units < options.creep_min_noise_units)
        return std::nullopt;
    // A creep is a drift that no single step explains: a straight line must fit the window better
    // than the best one-step split of it.
    const SegmentCost cost(window);
    double step_fit = cost(0, k);
    for (std::size_t cut = 1; cut < k; ++cut) step_fit = std::min(step_fit, cost(0, cut) + cost(cut, k));
    const double xm = static_cast<double>(k - 1) / 2.0;
    const double ym = mean_of(window);
    double sxy = 0.0, sxx = 0.0;
    for (std::size_t i = 0; i < k; ++i) {
        sxy += (static_cast<double>(i) - xm) * (window[i] - ym);
        sxx += (static_cast<double>(i) - xm) * (static_cast<double>(i) - xm);
    }
    const double b = sxy / sxx;
    double line_fit = 0.0;
    for (std::size_t i = 0; i < k; ++i) {
        const double r = window[i] - (ym + b * (static_cast<double>(i) - xm));
        line_fit += r * r;
    }
    if (line_fit >= step_fit) return std::nullopt;
    c.start_level = ym - b * xm;
    return c;
}

} // namespace

std::optional<Creep> find_creep(std::span<const double> values, double noise, const ChangePointOptions& options)
{
    const std::size_t k = std::min(options.creep_window, values.size());
    if (k < 6 || noise <= 0.0) return std::nullopt;
    // Every window of k commits, the latest first: a creep that stopped a few commits ago is still
    // one. The largest drift against the noise is the one shown.
    std::optional<Creep> found;
    for (std::size_t first = values.size() - k + 1; first-- > 0;)
        if (auto c = creep_in(values, first, k, noise, options); c && (!found || c->noise_units > found->noise_units))
            found = c;
    return found;
}

SeriesAnalysis analyze_noisy(std::span<const double> values, double measured_noise, const ChangePointOptions& options)
{
    SeriesAnalysis a;
    a.noise = std::max(measured_noise, neighbour_noise(values));
    if (a.noise <= 0.0) {
        // A series that never moved, or moved only in steps: nothing to set a penalty from.
        if (values.size() >= 2) return analyze_exact(values);
        return a;
    }
    const std::size_t skip = values.size() > options.max_points ? values.size() - options.max_points : 0;
    const auto recent = values.subspan(skip);
    const double n = static_cast<double>(recent.size());
    const double penalty = options.penalty_per_log_n * std::log(std::max(n, 2.0)) + options.penalty_constant;
    a.change_points = describe(recent, pelt_mean_changes(recent, a.noise, penalty, options.min_segment), a.noise);
    for (auto& c : a.change_points) c.index += skip;
    a.creep = find_creep(values, a.noise, options);
    return a;
}

} // namespace harness::history
