#include "harness/cliff/steps.hxx"

#include "harness/core/error.hxx"
#include "harness/core/stats.hxx"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>

// How steps are found, and why so.
//
// At every gap between adjacent points a straight line is fitted to the `window` points left of
// it and another to as many points right of it, each extrapolated to the middle of the gap: the
// jump is the difference. Against a constant, a ramp or a curve would be a string of steps;
// against the local trend only a discontinuity is. Two lines, not one line with an offset, so that
// a kink (a roofline's knee, the GPU filling up) changes the slope without being a step; windows
// of equal reach, so that a curve's bend shifts both extrapolations alike and cancels in the jump.
// (Change-point methods that segment into constant means, as PELT for the history does, would cut
// a ramp into a staircase.)
//
// The lines are robust: Theil-Sen slopes (the median of the pairwise slopes) and the interquartile
// mean of the residuals, so that an outlier, or a few points of a neighbouring edge inside a
// window, move them little, where least squares would smear every edge over both windows.
//
// The scales are logarithmic where every value (every axis value) is positive. Power laws are
// straight lines on log-log axes (time per unit of work within a wave, 1/x; sqrt; a ramp through
// the origin), so the steep start of such a scan is no step, and a jump is a ratio, as depth is. A
// step is a step on any axes, while a curve is straight on some only (a + x^2 on linear ones), so a
// jump must show on linear scales too.
//
// The noise at a gap is the larger of the given noise of the points around it and the series' own
// scatter there (a robust spread of each point's distance from its neighbours' interpolation): a
// point's samples do not see what varies from point to point (clocks, placement, the L2's state),
// and a noise that is too small would turn every wiggle into a step. Where the windows are short
// (the ends of a scan, beside another edge) the jump is less certain and the noise is scaled up,
// so that every gap raises a false step as rarely as one in the middle of a scan.
//
// One edge, one step: the strongest gap is taken first, moved to the split within its windows
// that two lines fit best (beside another edge, the largest jump can be a point or two off), and
// widened over the points of a rise of a few points. The points an edge spans are then out of
// bounds for the windows of the gaps near it, which are measured again: a flank of the edge, which
// a window still saw, fades; an edge close beside it is measured on its own side and shows. Last,
// every edge is measured again between its neighbours, which the first ones taken did not know.

namespace harness::cliff {

namespace {

constexpr double exact_tolerance = 1e-9; ///< relative: what an exact series may differ by in rounding
constexpr double infinite = std::numeric_limits<double>::infinity();
/// Robust standard deviation from the median absolute value of a centred normal variable.
constexpr double mad_to_sigma = 1.4826;
/// A candidate is measured again, within bounds, if the first look gave it half the significance
/// asked for: a neighbouring edge inside its windows can hide half of it.
constexpr double candidate_fraction = 0.5;
/// How many windows either side of a gap the series' own scatter is taken over.
constexpr std::size_t scatter_windows = 4;
/// A point is in a rise when it lies beyond both levels, towards the other, by this many noises
/// (or half the jump, where that is less).
constexpr double level_tolerance_noises = 3.0;
/// The fewest points a side of a gap is fitted to: a line needs three for a slope worth
/// extrapolating (neither borrowing the other side's slope nor none holds on a steep curve), so
/// the first and last two gaps of a noisy series, and two points between edges, are not judged.
constexpr std::size_t min_side_points = 3;
/// The most points a rise may pass through between the old level and the new one: "a few"; a
/// longer run between two levels is a stretch of the trend, or treads of a finer staircase.
constexpr std::size_t max_rise_points = 4;

/// The finite points of a series, on the scales the fits use.
struct Series {
    std::vector<double> x, value, noise; ///< as given
    std::vector<double> u, t;            ///< x and value on the fits' scales
    bool log_x = false, log_value = false;

    std::size_t size() const { return x.size(); }
    /// A value on the fits' scale back in the series' unit.
    double level(double fitted) const { return log_value ? std::exp(fitted) : fitted; }
};

Series prepare(const std::vector<double>& x, const std::vector<double>& values, const std::vector<double>& noise)
{
    if (values.size() != x.size())
        throw Error(ErrorKind::internal,
                    fmt::format("find_steps: {} axis values but {} values in the series", x.size(), values.size()));
    if (!noise.empty() && noise.size() != x.size())
        throw Error(ErrorKind::internal,
                    fmt::format("find_steps: {} axis values but {} noise figures", x.size(), noise.size()));
    Series s;
    for (std::size_t i = 0; i < x.size(); ++i) {
        if (!std::isfinite(x[i]))
            throw Error(ErrorKind::bad_input, fmt::format("find_steps: axis value {} of point {}", x[i], i));
        if (i > 0 && !(x[i] > x[i - 1]))
            throw Error(
                ErrorKind::bad_input,
                fmt::format("find_steps: the axis must ascend, but point {} is {} after {}", i, x[i], x[i - 1]));
        if (!std::isfinite(values[i])) continue; // a point that did not run
        const double sigma = noise.empty() ? 0.0 : noise[i];
        if (!std::isfinite(sigma) || sigma < 0)
            throw Error(ErrorKind::internal, fmt::format("find_steps: noise {} at point {}", sigma, i));
        s.x.push_back(x[i]);
        s.value.push_back(values[i]);
        s.noise.push_back(sigma);
    }
    s.log_x = std::all_of(s.x.begin(), s.x.end(), [](double v) { return v > 0; });
    s.log_value = std::all_of(s.value.begin(), s.value.end(), [](double v) { return v > 0; });
    s.u = s.x;
    s.t = s.value;
    if (s.log_x) std::transform(s.u.begin(), s.u.end(), s.u.begin(), [](double v) { return std::log(v); });
    if (s.log_value) std::transform(s.t.begin(), s.t.end(), s.t.begin(), [](double v) { return std::log(v); });
    return s;
}

double depth_of(double before, double after)
{
    if (before != 0) return after / before - 1.0;
    return after == 0 ? 0.0 : std::copysign(infinite, after);
}

/// A straight line on the fits' scales, t = level + slope * (u - origin), fitted to points whose u
/// have their mean at `origin` and the variance `spread`.
struct Line {
    double origin = 0, level = 0, slope = 0, spread = 0;
    double count = 0; ///< of the points
    double at(double u) const { return level + slope * (u - origin); }
};

/// The new line minus the old at `u`.
double jump_at(const Line& old_level, const Line& new_level, double u)
{
    return new_level.at(u) - old_level.at(u);
}

/// Theil-Sen fits of t over u along stretches of one series. Where `every_window`, the fits of
/// every full window are made at once: each is the left window of one gap and the right window of
/// another.
class TrendFitter {
public:
    TrendFitter(const std::vector<double>& u, const std::vector<double>& t, std::size_t window, bool every_window)
        : u_(u), t_(t), window_(window)
    {
        for (std::size_t first = 0; every_window && first + window <= u.size(); ++first) {
            const std::size_t last = first + window - 1;
            full_.push_back(line(first, last, slope(first, last)));
        }
    }

    /// Lines over the points [left_first, left_last] and [right_first, right_last], each of three
    /// points or more.
    std::pair<Line, Line> sides(std::size_t left_first, std::size_t left_last, std::size_t right_first,
                                std::size_t right_last)
    {
        return {fit(left_first, left_last), fit(right_first, right_last)};
    }

private:
    Line fit(std::size_t first, std::size_t last)
    {
        if (last - first + 1 == window_ && first < full_.size()) return full_[first];
        return line(first, last, slope(first, last));
    }

    double pair_slope(std::size_t i, std::size_t j) const { return (t_[j] - t_[i]) / (u_[j] - u_[i]); }

    double slope(std::size_t first, std::size_t last)
    {
        scratch_.clear();
        for (std::size_t i = first; i <= last; ++i)
            for (std::size_t j = i + 1; j <= last; ++j) scratch_.push_back(pair_slope(i, j));
        return scratch_.empty() ? 0.0 : median_in_place(scratch_);
    }

    /// The line of slope `slope` through the points' residuals. Its level is their interquartile
    /// mean: as robust as the median to a quarter of stray points, and less spread under
    /// Gaussian noise (a median's efficiency is 64 %), which the false steps of a long scan
    /// depend on.
    Line line(std::size_t first, std::size_t last, double slope)
    {
        const auto count = static_cast<double>(last - first + 1);
        double mean = 0.0, spread = 0.0;
        for (std::size_t i = first; i <= last; ++i) mean += u_[i];
        mean /= count;
        for (std::size_t i = first; i <= last; ++i) spread += (u_[i] - mean) * (u_[i] - mean);
        scratch_.clear();
        for (std::size_t i = first; i <= last; ++i) scratch_.push_back(t_[i] - slope * (u_[i] - mean));
        std::sort(scratch_.begin(), scratch_.end());
        const std::size_t trim = scratch_.size() / 4;
        double sum = 0.0;
        for (std::size_t i = trim; i < scratch_.size() - trim; ++i) sum += scratch_[i];
        return {mean, sum / static_cast<double>(scratch_.size() - 2 * trim), slope, spread / count, count};
    }

    const std::vector<double>&u_, &t_;
    std::size_t window_;
    std::vector<Line> full_; ///< by the window's first point
    std::vector<double> scratch_;
};

/// One point's noise at a gap: on the fits' scale (relative where it is logarithmic), and in the
/// series' unit.
struct GapNoise {
    double fitted = 0, absolute = 0;
};

/// The noise at every gap (gap k lies between points k and k + 1).
std::vector<GapNoise> gap_noise(const Series& s, std::size_t window)
{
    const std::size_t n = s.size();
    // The given noise, averaged over both windows of the gap (prefix sums).
    std::vector<double> given_sum(n + 1, 0.0), given_fitted_sum(n + 1, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
        given_sum[i + 1] = given_sum[i] + s.noise[i];
        given_fitted_sum[i + 1] = given_fitted_sum[i] + (s.log_value ? s.noise[i] / s.value[i] : s.noise[i]);
    }
    // Each inner point's distance from the line through its neighbours, scaled to one point's noise.
    std::vector<double> scatter(n, 0.0);
    for (std::size_t i = 1; i + 1 < n; ++i) {
        const double left_weight = (s.u[i + 1] - s.u[i]) / (s.u[i + 1] - s.u[i - 1]);
        const double right_weight = 1.0 - left_weight;
        const double predicted = left_weight * s.t[i - 1] + right_weight * s.t[i + 1];
        scatter[i] =
            std::fabs(s.t[i] - predicted) / std::sqrt(1.0 + left_weight * left_weight + right_weight * right_weight);
    }
    // The scatter's median over four windows either side: the edges near the gap are a small share
    // of it, and a differences' scale estimate is itself noisy (over two windows either side, a
    // stretch of points that happen to alternate in sign doubles it now and then). It moves
    // slowly along the axis, so it is taken at every window's width and held between.
    std::vector<GapNoise> out(n - 1);
    std::vector<double> nearby;
    double own = 0.0;
    for (std::size_t k = 0; k + 1 < n; ++k) {
        if (k % window == 0) {
            const std::size_t centre = k + window / 2, reach = scatter_windows * window;
            const std::size_t wide_first = std::max<std::size_t>(1, centre >= reach ? centre - reach : 0);
            const std::size_t wide_last = std::min(n - 2, centre + reach);
            nearby.assign(scatter.begin() + static_cast<std::ptrdiff_t>(wide_first),
                          scatter.begin() + static_cast<std::ptrdiff_t>(std::max(wide_first, wide_last + 1)));
            own = nearby.size() >= 5 ? mad_to_sigma * median_in_place(nearby) : 0.0;
        }
        const std::size_t first = k + 1 >= window ? k + 1 - window : 0, last = std::min(n - 1, k + window);
        const auto count = static_cast<double>(last - first + 1);
        const double own_absolute = s.log_value ? own * std::exp((s.t[k] + s.t[k + 1]) / 2.0) : own;
        out[k].fitted = std::max((given_fitted_sum[last + 1] - given_fitted_sum[first]) / count, own);
        out[k].absolute = std::max((given_sum[last + 1] - given_sum[first]) / count, own_absolute);
    }
    return out;
}

/// The steps of an exact series: every change beyond rounding.
std::vector<Cliff> exact_steps(const Series& s)
{
    std::vector<Cliff> out;
    for (std::size_t k = 0; k + 1 < s.size(); ++k) {
        const double before = s.value[k], after = s.value[k + 1];
        if (std::fabs(after - before) <= exact_tolerance * std::max(std::fabs(before), std::fabs(after))) continue;
        Cliff c;
        c.x_before = s.x[k];
        c.x_after = s.x[k + 1];
        c.level_before = before;
        c.level_after = after;
        c.depth = depth_of(before, after);
        c.significance = infinite;
        out.push_back(c);
    }
    return out;
}

/// The edges of a noisy series, found one at a time from the strongest.
class EdgeFinder {
public:
    EdgeFinder(const Series& s, std::size_t window, double min_significance)
        : s_(s), window_(window), min_significance_(min_significance), fitter_(s.u, s.t, window, true),
          plain_fitter_(s.x, s.value, window, false), noise_(gap_noise(s, window))
    {
    }

    /// Every edge at least `min_significance` noises high.
    std::vector<Cliff> edges()
    {
        const std::size_t n = s_.size();
        std::vector<double> significance(n - 1, 0.0);
        for (std::size_t k = 0; k + 1 < n; ++k) significance[k] = gap_significance(k);
        // The strongest gap first; an edge taken bounds the windows of the gaps near it, which are
        // measured again, so that its flanks fade and a neighbouring edge shows on its own side.
        std::vector<bool> tried(n - 1, false);
        while (true) {
            std::size_t k = n;
            for (std::size_t g = 0; g + 1 < n; ++g)
                if (!tried[g] && significance[g] >= candidate_fraction * min_significance_ && significance[g] > 0 &&
                    (k == n || significance[g] > significance[k]))
                    k = g;
            if (k == n) break;
            const Bounds b = bounds(k, k + 1);
            const auto span = locate(k, b.lo, b.hi);
            if (!span) {
                tried[k] = true;
                continue;
            }
            spans_.insert(std::upper_bound(spans_.begin(), spans_.end(), *span), *span);
            const std::size_t first = span->before > window_ ? span->before - window_ : 0;
            const std::size_t last = std::min(n - 2, span->after + window_);
            for (std::size_t g = first; g <= last; ++g) significance[g] = gap_significance(g);
        }
        // Edges taken early were measured before their neighbours were known: each again, between them.
        std::vector<Cliff> out;
        for (const auto& span : spans_) {
            const Bounds b = bounds(span.before, span.after, &span);
            if (auto c = measure(span, b.lo, b.hi)) out.push_back(*c);
        }
        return out;
    }

private:
    /// An edge's points: the last at the old level and the first at the new one.
    struct Span {
        std::size_t before = 0, after = 0;
        auto operator<=>(const Span&) const = default;
    };

    struct Bounds {
        std::size_t lo = 0, hi = 0; ///< the points the windows may use
        bool inside = false;        ///< the gap lies within an edge taken
    };

    /// How far the windows of an edge from point `before` to point `after` may reach between the
    /// edges taken (but `own`, the edge itself where it is one of them).
    Bounds bounds(std::size_t before, std::size_t after, const Span* own = nullptr) const
    {
        Bounds b{0, s_.size() - 1, false};
        for (const auto& span : spans_) {
            if (&span == own) continue;
            b.inside = b.inside || (span.before <= before && before < span.after);
            if (span.after <= before) b.lo = std::max(b.lo, span.after);
            if (span.before >= after) b.hi = std::min(b.hi, span.before);
        }
        return b;
    }

    /// The significance of the jump at gap k between the edges taken; 0 inside one.
    double gap_significance(std::size_t k)
    {
        const Bounds b = bounds(k, k + 1);
        if (b.inside) return 0.0;
        const auto levels = fit(k, k + 1, b.lo, b.hi);
        if (!levels) return 0.0;
        const double significance = significance_of(*levels, (s_.u[k] + s_.u[k + 1]) / 2.0, noise_[k].fitted);
        // The other scales only where the gap could be a candidate: they cost fits of their own.
        if (significance < candidate_fraction * min_significance_) return significance;
        return significance * seen_on_plain_scales(k, k + 1, b.lo, b.hi, significance);
    }

    /// The old and new levels either side of the points [before, after], from windows within
    /// [lo, hi] of as many points each (a curve's bend cancels between windows of equal reach
    /// only); none where a side would have fewer than `min_side_points`.
    std::optional<std::pair<Line, Line>> fit(std::size_t before, std::size_t after, std::size_t lo, std::size_t hi,
                                             TrendFitter* on = nullptr)
    {
        if (before < lo || after > hi) return std::nullopt;
        const std::size_t points = std::min({window_, before - lo + 1, hi - after + 1});
        if (points < min_side_points) return std::nullopt;
        return (on ? *on : fitter_).sides(before + 1 - points, before, after, after + points - 1);
    }

    /// How much of the significance `significance`, seen on the fits' scales for the edge from
    /// point `before` to point `after`, linear scales see as well (1 where the fits' are linear
    /// anyway). A step is a step however the axes are drawn, but a curve is straight on some only:
    /// 1/x on logarithmic ones, a + x^2 on linear ones. At the start of a scan, where the points
    /// sample such a curve coarsely, the wrong axes would see its bend as a jump.
    double seen_on_plain_scales(std::size_t before, std::size_t after, std::size_t lo, std::size_t hi,
                                double significance)
    {
        if ((!s_.log_x && !s_.log_value) || significance <= 0) return 1.0;
        const auto levels = fit(before, after, lo, hi, &plain_fitter_);
        if (!levels) return 1.0;
        const double plain = significance_of(*levels, (s_.x[before] + s_.x[after]) / 2.0, noise_[before].absolute);
        return std::min(1.0, plain / significance);
    }

    /// The jump between `levels` at u over the noise it carries: one point's noise `noise`, scaled
    /// up where the windows are short or of unequal reach (a series' ends, beside another edge),
    /// so that such a gap raises a false step no more often than one in the middle of a scan.
    double significance_of(const std::pair<Line, Line>& levels, double u, double noise) const
    {
        return ratio(jump_at(levels.first, levels.second, u), noise * noise_scale(levels.first, levels.second, u));
    }

    static double ratio(double jump, double noise)
    {
        if (noise > 0) return std::fabs(jump) / noise;
        return std::fabs(jump) > exact_tolerance ? infinite : 0.0;
    }

    /// The spread of the jump at u over that between two full windows of evenly spaced points
    /// (each 1/w + 3w / (w^2 - 1) noises squared), as least squares would have them; at least 1.
    double noise_scale(const Line& old_level, const Line& new_level, double u) const
    {
        const auto variance_at = [&](const Line& line) {
            const double reach = u - line.origin;
            return line.spread > 0 ? (1.0 + reach * reach / line.spread) / line.count : 1.0 / line.count;
        };
        const double variance = variance_at(old_level) + variance_at(new_level);
        const auto w = static_cast<double>(window_);
        const double full = 2.0 * (1.0 / w + 3.0 * w / (w * w - 1.0));
        return std::max(1.0, std::sqrt(variance / full));
    }

    /// Where the edge found at gap k begins and ends, if it is `min_significance` high.
    std::optional<Span> locate(std::size_t k, std::size_t lo, std::size_t hi)
    {
        const std::size_t split = best_split(k, lo, hi);
        const auto levels = fit(split, split + 1, lo, hi);
        if (!levels || significance_of(*levels, (s_.u[split] + s_.u[split + 1]) / 2.0, noise_[split].fitted) <
                           candidate_fraction * min_significance_)
            return std::nullopt;
        // Widen to the points in the rise, then fit the levels without them; twice, since the
        // first fits still saw some of those points.
        Span span{split, split + 1};
        auto lines = *levels;
        for (int pass = 0; pass < 2; ++pass) {
            const auto wider = widen(split, lines, noise_[split].fitted, lo, hi);
            if (!wider) return std::nullopt;
            if (*wider == span) break;
            span = *wider;
            if (const auto refit = fit(span.before, span.after, lo, hi)) lines = *refit;
        }
        if (!measure(span, lo, hi)) return std::nullopt;
        return span;
    }

    /// The gap, within the windows of gap k, where two straight lines (least squares), one each
    /// side, leave the least residual. Beside another edge, the gap of largest jump can be a point
    /// or two off its own edge, since both windows see some of the other; the best split is not.
    std::size_t best_split(std::size_t k, std::size_t lo, std::size_t hi) const
    {
        const std::size_t first = std::max(lo, k + 1 >= window_ ? k + 1 - window_ : 0);
        const std::size_t last = std::min(hi, k + window_);
        if (last < first + 2 * min_side_points - 1) return k;
        // Prefix sums over the stretch, centred on its first point for precision.
        struct Sums {
            double n = 0, u = 0, t = 0, uu = 0, ut = 0, tt = 0;
        };
        std::vector<Sums> prefix(last - first + 2);
        for (std::size_t i = first; i <= last; ++i) {
            const double u = s_.u[i] - s_.u[first], t = s_.t[i] - s_.t[first];
            const Sums& p = prefix[i - first];
            prefix[i - first + 1] = {p.n + 1, p.u + u, p.t + t, p.uu + u * u, p.ut + u * t, p.tt + t * t};
        }
        const auto residual = [&](std::size_t from, std::size_t to) { // points [from, to]
            const Sums& a = prefix[from - first];
            const Sums& b = prefix[to - first + 1];
            const double n = b.n - a.n, su = b.u - a.u, st = b.t - a.t;
            const double suu = b.uu - a.uu - su * su / n, sut = b.ut - a.ut - su * st / n,
                         stt = b.tt - a.tt - st * st / n;
            return suu > 0 ? stt - sut * sut / suu : stt;
        };
        std::size_t best = k;
        double least = infinite;
        for (std::size_t split = first + min_side_points - 1; split + min_side_points <= last; ++split) {
            const double r = residual(first, split) + residual(split + 1, last);
            if (r < least) {
                least = r;
                best = split;
            }
        }
        return best;
    }

    /// The edge over `span` measured from windows within [lo, hi], if it is `min_significance` high.
    std::optional<Cliff> measure(const Span& span, std::size_t lo, std::size_t hi)
    {
        const auto levels = fit(span.before, span.after, lo, hi);
        if (!levels) return std::nullopt;
        const auto& [old_level, new_level] = *levels;
        // Both levels where the rise is half done: at its ends they would differ by the trend over
        // the rise as well, which on a steep stretch is no step.
        const double middle = (s_.u[span.before] + s_.u[span.after]) / 2.0;
        Cliff c;
        c.x_before = s_.x[span.before];
        c.x_after = s_.x[span.after];
        c.level_before = s_.level(old_level.at(middle));
        c.level_after = s_.level(new_level.at(middle));
        c.depth = depth_of(c.level_before, c.level_after);
        const GapNoise& noise = noise_[span.before];
        c.significance =
            ratio(c.level_after - c.level_before, noise.absolute * noise_scale(old_level, new_level, middle));
        c.significance *=
            seen_on_plain_scales(span.before, span.after, lo, hi, significance_of(*levels, middle, noise.fitted));
        if (c.significance < min_significance_) return std::nullopt;
        return c;
    }

    /// The last point at the old level and the first at the new one around gap k, over points in a
    /// rise between the levels (a few at most). Where that fails (the levels' windows still see a
    /// neighbouring edge, so that its tread looks like a rise), gap k itself if its points lie
    /// nearer their own sides' levels; else none (a gap in a stretch that only bends).
    std::optional<Span> widen(std::size_t k, const std::pair<Line, Line>& lines, double noise, std::size_t lo,
                              std::size_t hi) const
    {
        const auto& [old_level, new_level] = lines;
        const double jump = jump_at(old_level, new_level, s_.u[k]);
        const double tolerance = std::min(level_tolerance_noises * noise, 0.5 * std::fabs(jump));
        const auto off = [&](const Line& line, std::size_t i) { return s_.t[i] - line.at(s_.u[i]); };
        const auto nearer_old = [&](std::size_t i) {
            return std::fabs(off(old_level, i)) < std::fabs(off(new_level, i));
        };
        const auto in_rise = [&](std::size_t i) {
            // Beyond the old level towards the new one and short of it, by more than the tolerance.
            return std::copysign(1.0, jump) * off(old_level, i) > tolerance &&
                   std::copysign(1.0, jump) * off(new_level, i) < -tolerance;
        };
        std::size_t before = k;
        // The gap may lie beside the edge: back over points at the new level, or on over points at the old one.
        while (before > lo && k - before < max_rise_points && !in_rise(before) && !nearer_old(before)) --before;
        while (before + 1 < hi && before + 1 - k < max_rise_points && !in_rise(before + 1) && nearer_old(before + 1))
            ++before;
        const std::size_t rise_end = before;
        while (before > lo && rise_end - before < max_rise_points && in_rise(before)) --before;
        std::size_t after = before + 1;
        while (after < hi && after - before <= max_rise_points && in_rise(after)) ++after;
        if (!in_rise(before) && nearer_old(before) && !in_rise(after) && !nearer_old(after)) return Span{before, after};
        if (nearer_old(k) && !nearer_old(k + 1)) return Span{k, k + 1};
        return std::nullopt;
    }

    const Series& s_;
    std::size_t window_;
    double min_significance_;
    TrendFitter fitter_;          ///< on the fits' scales
    TrendFitter plain_fitter_;    ///< on linear scales, where the fits' are logarithmic
    std::vector<GapNoise> noise_; ///< per gap
    std::vector<Span> spans_;     ///< the edges taken, in axis order
};

bool wanted(const Cliff& c, const StepOptions& options)
{
    if (!(std::fabs(c.depth) >= options.min_depth)) return false;
    if (!options.worse_only) return true;
    return options.higher_is_better ? c.depth < 0 : c.depth > 0;
}

} // namespace

std::vector<Cliff> find_steps(const std::vector<double>& x, const std::vector<double>& values,
                              const std::vector<double>& noise, const StepOptions& options)
{
    const Series s = prepare(x, values, noise);
    if (s.size() < 2) return {};
    const bool exact = std::all_of(s.noise.begin(), s.noise.end(), [](double v) { return v == 0; });
    std::vector<Cliff> found =
        exact ? exact_steps(s)
              : EdgeFinder(s, std::max(options.window, min_side_points), options.min_significance).edges();
    std::erase_if(found, [&](const Cliff& c) { return !wanted(c, options); });
    std::sort(found.begin(), found.end(), [](const Cliff& a, const Cliff& b) { return a.x_before < b.x_before; });
    return found;
}

} // namespace harness::cliff
