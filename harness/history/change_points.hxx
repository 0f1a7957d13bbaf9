#pragma once
// Where a series of figures over commits moved. Exact figures (counters, resources) repeat for a
// fixed kernel, so every step is a change. Noisy figures (time) are segmented by PELT (Killick,
// Fearnhead and Eckley, "Optimal detection of changepoints with a linear computational cost",
// JASA 2012) under a Gaussian change-in-mean cost whose variance is the measured noise, and a
// creep check (Mann-Kendall trend test with a Theil-Sen slope) flags a drift over any window of commits
// that no single step explains.

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

namespace harness::history {

/// One change: the series' level before and after point `index` (the first point after it).
struct ChangePoint {
    std::size_t index = 0;
    double before = 0.0; ///< mean of the segment before
    double after = 0.0;  ///< mean of the segment after
    /// |after - before| in units of the series' noise (one point's standard deviation); 0 for an
    /// exact series
    double noise_units = 0.0;
    double relative() const { return before != 0.0 ? (after - before) / before : 0.0; }
};

/// A drift over the last `window` points that a trend explains better than one step.
struct Creep {
    std::size_t first = 0;  ///< index of the window's first point
    std::size_t window = 0; ///< points in the window
    double total = 0.0;     ///< Theil-Sen slope times (window - 1), in the series' unit
    double start_level = 0.0;
    double mann_kendall_z = 0.0;
    double noise_units = 0.0; ///< |total| in units of the noise
    double relative() const { return start_level != 0.0 ? total / start_level : 0.0; }
};

/// How noisy series are judged; the defaults are calibrated by tests/unit/history_change_points_test.cxx.
struct ChangePointOptions {
    /// PELT's penalty per change point: penalty_per_log_n * ln(n) + penalty_constant, in units of
    /// the Gaussian cost (squared deviations over the noise variance).
    double penalty_per_log_n = 4.0;
    double penalty_constant = 16.0;
    std::size_t min_segment = 2; ///< a change needs this many points on each side
    /// Only the latest points are segmented: PELT prunes nothing in a series without changes, so
    /// its cost grows as the square of the points analysed.
    std::size_t max_points = 500;
    std::size_t creep_window = 10;
    double creep_min_z = 2.33;          ///< Mann-Kendall |z| (one-sided p < 0.01)
    double creep_min_noise_units = 4.0; ///< the drift's total against the noise
};

/// What a series holds.
struct SeriesAnalysis {
    std::vector<ChangePoint> change_points;
    std::optional<Creep> creep;
    double noise = 0.0; ///< one point's standard deviation, as used (0 for an exact series)
};

/// Exact series: every point that differs from the one before is a change.
SeriesAnalysis analyze_exact(std::span<const double> values);

/// Noisy series: `measured_noise` is one point's standard deviation as the runs measured it (the
/// spread of their samples); the noise used is the larger of it and the spread of the series
/// itself between neighbours (robust: a median), so that run-to-run noise the samples of one run
/// do not see raises no change.
SeriesAnalysis analyze_noisy(std::span<const double> values, double measured_noise,
                             const ChangePointOptions& options = {});

/// The optimal segmentation under PELT: the first index of every segment after the first.
std::vector<std::size_t> pelt_mean_changes(std::span<const double> values, double noise, double penalty,
                                           std::size_t min_segment);

/// One point's standard deviation from differences of neighbours: 1.4826 * median |x[i+1] - x[i]| / sqrt 2.
double neighbour_noise(std::span<const double> values);

/// The Mann-Kendall statistic's z score (continuity corrected, ties accounted for).
double mann_kendall_z(std::span<const double> values);

/// The Theil-Sen slope: the median of the pairwise slopes, per point.
double theil_sen_slope(std::span<const double> values);

/// The creep check alone, on every window of options.creep_window points; the largest drift found.
std::optional<Creep> find_creep(std::span<const double> values, double noise, const ChangePointOptions& options = {});

} // namespace harness::history
