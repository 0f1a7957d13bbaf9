#pragma once
// The metric table: every figure the harness measures or derives is declared here once.
// Reports, comparison rules, collectors and docs read this table; a new metric touches this file.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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

/// What comparison and the reports do with a metric beyond gating it.
struct MetricRoles {
    HotspotFamily hotspot{};
    OccupancyRole occupancy = OccupancyRole::none;
    /// Computed from noisy range-profiler counters alone, so a regression may be where one process's
    /// buffers landed and is measured again in another (a range-profiler figure always is).
    bool from_noisy_counters = false;
    std::string_view companion{}; ///< a metric added to this one for display (dynamic to static shared memory)
    ReportPlace html{};           ///< a column of the HTML report's table of cases
    ReportPlace console{};        ///< a part of the console's line for each launch of a case
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
    MetricRoles roles{};
};

/// The name of every metric, for code that reads or writes one: a misspelt identifier does not
/// compile, and a test checks that each constant names a row of the table and each row has one.
namespace metric {
inline constexpr const char* time_median = "time_median";
inline constexpr const char* time_min = "time_min";
inline constexpr const char* time_noise = "time_noise";
inline constexpr const char* time_samples = "time_samples";
inline constexpr const char* gflops = "gflops";
inline constexpr const char* bandwidth = "bandwidth";
inline constexpr const char* registers = "registers";
inline constexpr const char* static_shared_bytes = "static_shared_bytes";
inline constexpr const char* dynamic_shared_bytes = "dynamic_shared_bytes";
inline constexpr const char* spill_store_bytes = "spill_store_bytes";
inline constexpr const char* spill_load_bytes = "spill_load_bytes";
inline constexpr const char* barriers = "barriers";
inline constexpr const char* local_bytes = "local_bytes";
inline constexpr const char* blocks_per_sm = "blocks_per_sm";
inline constexpr const char* theoretical_occupancy = "theoretical_occupancy";
inline constexpr const char* verify_max_abs_error = "verify_max_abs_error";
inline constexpr const char* verify_max_rel_error = "verify_max_rel_error";
inline constexpr const char* global_ld_requests = "global_ld_requests";
inline constexpr const char* global_ld_sectors = "global_ld_sectors";
inline constexpr const char* global_st_requests = "global_st_requests";
inline constexpr const char* global_st_sectors = "global_st_sectors";
inline constexpr const char* shared_ld_wavefronts = "shared_ld_wavefronts";
inline constexpr const char* shared_st_wavefronts = "shared_st_wavefronts";
inline constexpr const char* shared_ld_instructions = "shared_ld_instructions";
inline constexpr const char* shared_st_instructions = "shared_st_instructions";
inline constexpr const char* shared_bank_conflicts_raw = "shared_bank_conflicts_raw";
inline constexpr const char* instructions = "instructions";
inline constexpr const char* fp32_add_thread_instructions = "fp32_add_thread_instructions";
inline constexpr const char* fp32_mul_thread_instructions = "fp32_mul_thread_instructions";
inline constexpr const char* fp32_fma_thread_instructions = "fp32_fma_thread_instructions";
inline constexpr const char* achieved_occupancy = "achieved_occupancy";
inline constexpr const char* dram_read_bytes = "dram_read_bytes";
inline constexpr const char* dram_write_bytes = "dram_write_bytes";
inline constexpr const char* global_sectors = "global_sectors";
inline constexpr const char* global_sectors_ideal = "global_sectors_ideal";
inline constexpr const char* shared_wavefronts = "shared_wavefronts";
inline constexpr const char* shared_wavefronts_ideal = "shared_wavefronts_ideal";
inline constexpr const char* local_sectors = "local_sectors";
inline constexpr const char* divergent_branch_targets = "divergent_branch_targets";
inline constexpr const char* global_ld_sectors_per_request = "global_ld_sectors_per_request";
inline constexpr const char* global_st_sectors_per_request = "global_st_sectors_per_request";
inline constexpr const char* excess_global_sectors = "excess_global_sectors";
inline constexpr const char* excess_global_sectors_pct = "excess_global_sectors_pct";
inline constexpr const char* excess_shared_wavefronts = "excess_shared_wavefronts";
inline constexpr const char* shared_conflict_ways = "shared_conflict_ways";
inline constexpr const char* flops = "flops";
inline constexpr const char* dram_bytes = "dram_bytes";
inline constexpr const char* arithmetic_intensity = "arithmetic_intensity";
inline constexpr const char* achieved_gflops = "achieved_gflops";
inline constexpr const char* predicted_global_ld_requests = "predicted_global_ld_requests";
inline constexpr const char* predicted_global_ld_sectors = "predicted_global_ld_sectors";
inline constexpr const char* predicted_global_st_requests = "predicted_global_st_requests";
inline constexpr const char* predicted_global_st_sectors = "predicted_global_st_sectors";
inline constexpr const char* predicted_global_sectors = "predicted_global_sectors";
inline constexpr const char* predicted_global_sectors_ideal = "predicted_global_sectors_ideal";
inline constexpr const char* predicted_shared_wavefronts = "predicted_shared_wavefronts";
inline constexpr const char* predicted_shared_wavefronts_ideal = "predicted_shared_wavefronts_ideal";
inline constexpr const char* predicted_global_ld_sectors_per_request = "predicted_global_ld_sectors_per_request";
inline constexpr const char* predicted_global_st_sectors_per_request = "predicted_global_st_sectors_per_request";
inline constexpr const char* predicted_excess_global_sectors = "predicted_excess_global_sectors";
inline constexpr const char* predicted_excess_shared_wavefronts = "predicted_excess_shared_wavefronts";
inline constexpr const char* sass_instructions = "sass_instructions";
inline constexpr const char* sass_global_ld_32 = "sass_global_ld_32";
inline constexpr const char* sass_global_ld_64 = "sass_global_ld_64";
inline constexpr const char* sass_global_ld_128 = "sass_global_ld_128";
inline constexpr const char* sass_global_st_32 = "sass_global_st_32";
inline constexpr const char* sass_global_st_64 = "sass_global_st_64";
inline constexpr const char* sass_global_st_128 = "sass_global_st_128";
inline constexpr const char* sass_shared_ld_32 = "sass_shared_ld_32";
inline constexpr const char* sass_shared_ld_64 = "sass_shared_ld_64";
inline constexpr const char* sass_shared_ld_128 = "sass_shared_ld_128";
inline constexpr const char* sass_shared_st_32 = "sass_shared_st_32";
inline constexpr const char* sass_shared_st_64 = "sass_shared_st_64";
inline constexpr const char* sass_shared_st_128 = "sass_shared_st_128";
inline constexpr const char* sass_ldsm = "sass_ldsm";
inline constexpr const char* sass_local_ld = "sass_local_ld";
inline constexpr const char* sass_local_st = "sass_local_st";
inline constexpr const char* sass_async_copies = "sass_async_copies";
inline constexpr const char* sass_tma = "sass_tma";
inline constexpr const char* sass_tensor = "sass_tensor";
inline constexpr const char* sass_fp32 = "sass_fp32";
inline constexpr const char* sass_fp64 = "sass_fp64";
inline constexpr const char* sass_mufu = "sass_mufu";
inline constexpr const char* sass_conversions = "sass_conversions";
inline constexpr const char* sass_branches = "sass_branches";
inline constexpr const char* sass_barriers = "sass_barriers";

/// Every constant above, in table order.
inline constexpr const char* all[] = {time_median,
                                      time_min,
                                      time_noise,
                                      time_samples,
                                      gflops,
                                      bandwidth,
                                      registers,
                                      static_shared_bytes,
                                      dynamic_shared_bytes,
                                      spill_store_bytes,
                                      spill_load_bytes,
                                      barriers,
                                      local_bytes,
                                      blocks_per_sm,
                                      theoretical_occupancy,
                                      verify_max_abs_error,
                                      verify_max_rel_error,
                                      global_ld_requests,
                                      global_ld_sectors,
                                      global_st_requests,
                                      global_st_sectors,
                                      shared_ld_wavefronts,
                                      shared_st_wavefronts,
                                      shared_ld_instructions,
                                      shared_st_instructions,
                                      shared_bank_conflicts_raw,
                                      instructions,
                                      fp32_add_thread_instructions,
                                      fp32_mul_thread_instructions,
                                      fp32_fma_thread_instructions,
                                      achieved_occupancy,
                                      dram_read_bytes,
                                      dram_write_bytes,
                                      global_sectors,
                                      global_sectors_ideal,
                                      shared_wavefronts,
                                      shared_wavefronts_ideal,
                                      local_sectors,
                                      divergent_branch_targets,
                                      global_ld_sectors_per_request,
                                      global_st_sectors_per_request,
                                      excess_global_sectors,
                                      excess_global_sectors_pct,
                                      excess_shared_wavefronts,
                                      shared_conflict_ways,
                                      flops,
                                      dram_bytes,
                                      arithmetic_intensity,
                                      achieved_gflops,
                                      predicted_global_ld_requests,
                                      predicted_global_ld_sectors,
                                      predicted_global_st_requests,
                                      predicted_global_st_sectors,
                                      predicted_global_sectors,
                                      predicted_global_sectors_ideal,
                                      predicted_shared_wavefronts,
                                      predicted_shared_wavefronts_ideal,
                                      predicted_global_ld_sectors_per_request,
                                      predicted_global_st_sectors_per_request,
                                      predicted_excess_global_sectors,
                                      predicted_excess_shared_wavefronts,
                                      sass_instructions,
                                      sass_global_ld_32,
                                      sass_global_ld_64,
                                      sass_global_ld_128,
                                      sass_global_st_32,
                                      sass_global_st_64,
                                      sass_global_st_128,
                                      sass_shared_ld_32,
                                      sass_shared_ld_64,
                                      sass_shared_ld_128,
                                      sass_shared_st_32,
                                      sass_shared_st_64,
                                      sass_shared_st_128,
                                      sass_ldsm,
                                      sass_local_ld,
                                      sass_local_st,
                                      sass_async_copies,
                                      sass_tma,
                                      sass_tensor,
                                      sass_fp32,
                                      sass_fp64,
                                      sass_mufu,
                                      sass_conversions,
                                      sass_branches,
                                      sass_barriers};
} // namespace metric

/// All metrics, in report order.
std::span<const MetricInfo> metric_table();

/// The row for `name`, or nullopt. A launch's figure ("registers@rstd_kernel") has its metric's row.
std::optional<MetricInfo> find_metric(std::string_view name);

/// The metrics shown in a report (MetricRoles::html or ::console), in their order.
std::vector<MetricInfo> report_metrics(ReportPlace MetricRoles::*place);

/// A noisy figure read from the range profiler, or derived from such figures alone (dram_bytes):
/// one whose regression may come from where a process's buffers landed. A launch's figure
/// ("dram_bytes@rstd_kernel") is its metric's.
bool is_noisy_counter(std::string_view name);

/// A figure predicted from the kernel's PTX without a GPU (Collector::access_model), not measured;
/// a launch's figure ("predicted_excess_global_sectors@rstd_kernel") is its metric's.
bool is_predicted(std::string_view name);

/// The name of one launch's own figure in a variant of several launches: "registers@rstd_kernel".
/// `label` is the launch's label (suite::launch_labels), never empty.
std::string launch_metric_name(std::string_view metric, std::string_view label);

/// A figure's name split into its metric and the label of the launch it belongs to; the label is
/// empty for a variant's own figure ("registers" -> {"registers", ""}).
std::pair<std::string_view, std::string_view> split_launch_metric(std::string_view name);

const char* to_string(Direction direction);
const char* to_string(Stability stability);
const char* to_string(Collector collector);

/// The metric table as a Markdown table (docs/metrics.md holds it; a test keeps the two equal).
std::string metric_table_markdown();

/// The metric table as aligned plain text, one metric per line.
std::string metric_table_text();

} // namespace harness
