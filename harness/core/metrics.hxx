#pragma once
// The metric table: every figure the harness measures or derives is declared here once.
// Reports, comparison rules and docs read this table; a new metric touches this file only.

#include <optional>
#include <span>
#include <string_view>

namespace harness {

/// Which way is better for a metric.
enum class Direction { lower_is_better, higher_is_better, neither };

/// Whether a figure repeats exactly for a fixed kernel and size (gate it tightly) or is noisy.
enum class Stability { exact, noisy };

/// One row of the metric table.
struct MetricInfo {
    std::string_view name;     ///< short name used in suites, CSV and baselines
    std::string_view source;   ///< where the figure comes from
    std::string_view unit;
    Direction direction;
    Stability stability;
    double default_rel_tolerance;  ///< relative tolerance used for gating when the suite says nothing
    std::string_view description;
};

/// All metrics, in report order.
std::span<const MetricInfo> metric_table();

/// The row for `name`, or nullopt.
std::optional<MetricInfo> find_metric(std::string_view name);

} // namespace harness
