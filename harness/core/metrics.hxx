#pragma once
// The metric table: every figure the harness measures or derives is declared here once.
// Reports, comparison rules, collectors and docs read this table; a new metric touches this file.

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace harness {

/// Which way is better for a metric.
enum class Direction { lower_is_better, higher_is_better, neither };

/// Whether a figure repeats exactly for a fixed kernel and size (gate it tightly, key its baseline
/// by architecture) or is noisy (gate it statistically, key its baseline by GPU model).
enum class Stability { exact, noisy };

/// Which stage of a run produces a metric.
enum class Collector {
    timing,         ///< CUDA events in the unprofiled timing pass
    resources,      ///< cuFuncGetAttribute / occupancy calculator / ptxas report (also the static tier)
    verification,   ///< comparison with the reference variant
    range_profiler, ///< CUPTI Range Profiler, user replay; `source` is the CUPTI metric
    sass_metrics,   ///< CUPTI SASS Metrics API, per instruction; `source` is the CUPTI metric
    derived,        ///< computed from other metrics; `source` is the formula
};

/// One row of the metric table.
struct MetricInfo {
    std::string_view name;   ///< short name used in suites, CSV and baselines
    std::string_view source; ///< where the figure comes from (CUPTI metric name, API call or formula)
    std::string_view unit;
    Direction direction;
    Stability stability;
    Collector collector;
    /// Gating rule when the suite says nothing, in the suite's rule syntax: "exact" (cliffs and
    /// pathologies), "rel 5%", "abs 0.02", "samples 3%" (Mann-Whitney on the time samples plus a
    /// minimum effect), "report" (drift: a change is shown, never fails), "ignore".
    std::string_view default_rule;
    bool in_default_set; ///< collected when a suite does not list its metrics
    std::string_view description;
};

/// All metrics, in report order.
std::span<const MetricInfo> metric_table();

/// The row for `name`, or nullopt.
std::optional<MetricInfo> find_metric(std::string_view name);

const char* to_string(Direction direction);
const char* to_string(Stability stability);
const char* to_string(Collector collector);

/// The metric table as a Markdown table (docs/metrics.md holds it; a test keeps the two equal).
std::string metric_table_markdown();

/// The metric table as aligned plain text, one metric per line.
std::string metric_table_text();

} // namespace harness
