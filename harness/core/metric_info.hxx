#pragma once
// The shape of a row of the metric table (core/metric_table.hxx): what a figure is, where it comes
// from, how it is gated, and the roles that collectors, comparison and reports read from it.

#include <array>
#include <cstddef>
#include <optional>
#include <span>
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
    access_model,   ///< predicted from the kernel's PTX at the case's launch, not measured (analysis/access_model)
    disassembly,    ///< counted in the cubin's SASS (nvdisasm), per kernel; the static tier
};

/// How a metric relates to the theoretical occupancy: when one moves, comparison recomputes the
/// occupancy and describes the change as a cliff if the occupancy moved.
enum class OccupancyRole {
    none,
    limits,   ///< an input of the occupancy calculator (registers, shared memory, barriers)
    measures, ///< the occupancy itself (resident blocks, theoretical occupancy)
};

/// The per-source-line hotspots that explain a regression of a metric: those ranked by `metric`,
/// the ones of `access` first ("global load"; empty: any access). No metric: none explain it.
struct HotspotFamily {
    std::string_view metric;
    std::string_view access;
};

/// Where a metric shows among one report's per-case figures; nowhere when `order` is 0.
struct ReportPlace {
    int order = 0;                  ///< position among the report's figures, 1 first
    std::string_view label{};       ///< the HTML column heading, or the console part's format ("smem {:.0f}")
    bool only_when_nonzero = false; ///< shown only where it is nonzero (spills: only where they occur)
    bool with_companion = false;    ///< shown as the sum of the metric and its companion
};

/// How the figures of a variant's launches make the variant's own: a range-profiler counter is read
/// once per launch.
enum class LaunchCombine {
    sum,               ///< counts: the launches' figures added
    duration_weighted, ///< ratios and averages (achieved occupancy): each launch weighted by its share of the duration
};

/// How a hardware counter's readings become the figure (range_profiler and sass_metrics rows).
struct CounterReading {
    LaunchCombine launches = LaunchCombine::sum;
    bool percent = false; ///< the counter reads in percent and the figure is a fraction: the reading / 100
};

/// The figure's comparison with Nsight Compute's own (`harness crosscheck`), whose metric is the
/// row's source for a range-profiler counter and the source with its ".sum" rollup for a SASS
/// metric (profile/ncu_crosscheck). Not compared unless `compared`.
struct NcuCounterpart {
    bool compared = false;
    double tolerance = 0.0; ///< allowed difference: 0 = equal; < 1 relative; for fractions, absolute points / 100
    bool absolute = false;  ///< tolerance is absolute (occupancy), not relative
    double floor = 0.0;     ///< a difference up to this many units agrees whatever the relative tolerance says
};

/// The formula of a derived figure: `compute` of the figures `inputs` names (in order; unused ones
/// empty), or none where it has no value (a zero denominator). The row's `source` writes it for
/// readers; profile/derived_metrics evaluates it, in table order, so that a formula may read what
/// an earlier row derived.
struct Formula {
    std::array<std::string_view, 3> inputs{};
    std::optional<double> (*compute)(std::span<const double> inputs) = nullptr;

    constexpr std::size_t input_count() const
    {
        std::size_t n = 0;
        while (n < inputs.size() && !inputs[n].empty()) ++n;
        return n;
    }
};

/// Source lines are ranked by this figure, counted per instruction from the SASS metrics that make
/// it (profile/hotspots): the row's own source for a SASS metric, its formula's two inputs (actual,
/// ideal) for a derived excess. `access` names the lines' kind ("global", "local"), followed by the
/// instruction's own (load, store, atomic) where `by_instruction_kind`. No access: no ranking.
struct LineRanking {
    std::string_view access{};
    bool by_instruction_kind = false;
};

/// What comparison, the reports, the collectors and the tools beside them do with a metric beyond
/// gating it.
struct MetricRoles {
    HotspotFamily hotspot{};
    OccupancyRole occupancy = OccupancyRole::none;
    /// Computed from noisy range-profiler counters alone, so a regression may be where one process's
    /// buffers landed and is measured again in another (a range-profiler figure always is).
    bool from_noisy_counters = false;
    std::string_view companion{}; ///< a metric added to this one for display (dynamic to static shared memory)
    ReportPlace html{};           ///< a column of the HTML report's table of cases
    ReportPlace console{};        ///< a part of the console's line for each launch of a case
    CounterReading counter{};     ///< how a range-profiler or SASS counter's readings become the figure
    NcuCounterpart ncu{};         ///< its comparison with Nsight Compute
    Formula formula{};            ///< a derived figure's formula
    LineRanking lines{};          ///< the source lines it ranks, if any
};

/// One row of the metric table.
struct MetricInfo {
    std::string_view name;   ///< short name used in suites, CSV and baselines
    std::string_view source; ///< where the figure comes from (CUPTI metric name, API call, or a formula as text)
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
    MetricRoles roles{};
};

} // namespace harness
