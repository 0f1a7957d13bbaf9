#pragma once
// The metric table (core/metric_table.hxx) as code reads it: rows found by name, the names code
// writes, and the table's listings. Reports, comparison rules, collectors and docs read the table.

#include "harness/core/metric_info.hxx"
#include "harness/core/metric_table.hxx"

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace harness {

/// The names of metrics, for code that reads or writes one: each is its row's name, found in the
/// table when the code compiles, so a misspelt or removed name does not compile. A row that no code
/// names (most range-profiler counters) needs no constant.
namespace metric {

/// The row named `name`'s name; no row of that name is a compile error (not a constant expression).
consteval const char* named(std::string_view name)
{
    for (const auto& row : metric_rows::table)
        if (row.name == name) return row.name.data();
    throw "no row of the metric table has this name";
}

inline constexpr const char* time_median = named("time_median");
inline constexpr const char* time_min = named("time_min");
inline constexpr const char* time_noise = named("time_noise");
inline constexpr const char* time_samples = named("time_samples");
inline constexpr const char* gflops = named("gflops");
inline constexpr const char* bandwidth = named("bandwidth");
inline constexpr const char* registers = named("registers");
inline constexpr const char* static_shared_bytes = named("static_shared_bytes");
inline constexpr const char* dynamic_shared_bytes = named("dynamic_shared_bytes");
inline constexpr const char* spill_store_bytes = named("spill_store_bytes");
inline constexpr const char* spill_load_bytes = named("spill_load_bytes");
inline constexpr const char* barriers = named("barriers");
inline constexpr const char* local_bytes = named("local_bytes");
inline constexpr const char* blocks_per_sm = named("blocks_per_sm");
inline constexpr const char* theoretical_occupancy = named("theoretical_occupancy");
inline constexpr const char* verify_max_abs_error = named("verify_max_abs_error");
inline constexpr const char* verify_max_rel_error = named("verify_max_rel_error");
inline constexpr const char* global_ld_requests = named("global_ld_requests");
inline constexpr const char* global_ld_sectors = named("global_ld_sectors");
inline constexpr const char* global_st_requests = named("global_st_requests");
inline constexpr const char* global_st_sectors = named("global_st_sectors");
inline constexpr const char* shared_ld_wavefronts = named("shared_ld_wavefronts");
inline constexpr const char* shared_st_wavefronts = named("shared_st_wavefronts");
inline constexpr const char* shared_ld_instructions = named("shared_ld_instructions");
inline constexpr const char* shared_st_instructions = named("shared_st_instructions");
inline constexpr const char* shared_bank_conflicts_raw = named("shared_bank_conflicts_raw");
inline constexpr const char* instructions = named("instructions");
inline constexpr const char* fp32_add_thread_instructions = named("fp32_add_thread_instructions");
inline constexpr const char* fp32_mul_thread_instructions = named("fp32_mul_thread_instructions");
inline constexpr const char* fp32_fma_thread_instructions = named("fp32_fma_thread_instructions");
inline constexpr const char* achieved_occupancy = named("achieved_occupancy");
inline constexpr const char* dram_read_bytes = named("dram_read_bytes");
inline constexpr const char* dram_write_bytes = named("dram_write_bytes");
inline constexpr const char* global_sectors = named("global_sectors");
inline constexpr const char* global_sectors_ideal = named("global_sectors_ideal");
inline constexpr const char* shared_wavefronts = named("shared_wavefronts");
inline constexpr const char* shared_wavefronts_ideal = named("shared_wavefronts_ideal");
inline constexpr const char* local_sectors = named("local_sectors");
inline constexpr const char* divergent_branch_targets = named("divergent_branch_targets");
inline constexpr const char* global_ld_sectors_per_request = named("global_ld_sectors_per_request");
inline constexpr const char* global_st_sectors_per_request = named("global_st_sectors_per_request");
inline constexpr const char* excess_global_sectors = named("excess_global_sectors");
inline constexpr const char* excess_global_sectors_pct = named("excess_global_sectors_pct");
inline constexpr const char* excess_shared_wavefronts = named("excess_shared_wavefronts");
inline constexpr const char* shared_conflict_ways = named("shared_conflict_ways");
inline constexpr const char* flops = named("flops");
inline constexpr const char* dram_bytes = named("dram_bytes");
inline constexpr const char* arithmetic_intensity = named("arithmetic_intensity");
inline constexpr const char* achieved_gflops = named("achieved_gflops");
inline constexpr const char* predicted_global_ld_requests = named("predicted_global_ld_requests");
inline constexpr const char* predicted_global_ld_sectors = named("predicted_global_ld_sectors");
inline constexpr const char* predicted_global_st_requests = named("predicted_global_st_requests");
inline constexpr const char* predicted_global_st_sectors = named("predicted_global_st_sectors");
inline constexpr const char* predicted_global_sectors = named("predicted_global_sectors");
inline constexpr const char* predicted_global_sectors_ideal = named("predicted_global_sectors_ideal");
inline constexpr const char* predicted_shared_wavefronts = named("predicted_shared_wavefronts");
inline constexpr const char* predicted_shared_wavefronts_ideal = named("predicted_shared_wavefronts_ideal");
inline constexpr const char* predicted_global_ld_sectors_per_request = named("predicted_global_ld_sectors_per_request");
inline constexpr const char* predicted_global_st_sectors_per_request = named("predicted_global_st_sectors_per_request");
inline constexpr const char* predicted_excess_global_sectors = named("predicted_excess_global_sectors");
inline constexpr const char* predicted_excess_shared_wavefronts = named("predicted_excess_shared_wavefronts");
inline constexpr const char* sass_instructions = named("sass_instructions");
inline constexpr const char* sass_global_ld_32 = named("sass_global_ld_32");
inline constexpr const char* sass_global_ld_64 = named("sass_global_ld_64");
inline constexpr const char* sass_global_ld_128 = named("sass_global_ld_128");
inline constexpr const char* sass_global_st_32 = named("sass_global_st_32");
inline constexpr const char* sass_global_st_64 = named("sass_global_st_64");
inline constexpr const char* sass_global_st_128 = named("sass_global_st_128");
inline constexpr const char* sass_shared_ld_32 = named("sass_shared_ld_32");
inline constexpr const char* sass_shared_ld_64 = named("sass_shared_ld_64");
inline constexpr const char* sass_shared_ld_128 = named("sass_shared_ld_128");
inline constexpr const char* sass_shared_st_32 = named("sass_shared_st_32");
inline constexpr const char* sass_shared_st_64 = named("sass_shared_st_64");
inline constexpr const char* sass_shared_st_128 = named("sass_shared_st_128");
inline constexpr const char* sass_ldsm = named("sass_ldsm");
inline constexpr const char* sass_local_ld = named("sass_local_ld");
inline constexpr const char* sass_local_st = named("sass_local_st");
inline constexpr const char* sass_async_copies = named("sass_async_copies");
inline constexpr const char* sass_tma = named("sass_tma");
inline constexpr const char* sass_tensor = named("sass_tensor");
inline constexpr const char* sass_fp32 = named("sass_fp32");
inline constexpr const char* sass_fp64 = named("sass_fp64");
inline constexpr const char* sass_mufu = named("sass_mufu");
inline constexpr const char* sass_conversions = named("sass_conversions");
inline constexpr const char* sass_branches = named("sass_branches");
inline constexpr const char* sass_barriers = named("sass_barriers");

/// Every row's name, in table order.
consteval std::array<const char*, std::size(metric_rows::table)> every_name()
{
    std::array<const char*, std::size(metric_rows::table)> names{};
    for (std::size_t i = 0; i < names.size(); ++i) names[i] = metric_rows::table[i].name.data();
    return names;
}
inline constexpr auto all = every_name();
} // namespace metric

/// All metrics, in report order: metric_rows::table, unless a ScopedMetricTable stands in for it.
std::span<const MetricInfo> metric_table();

/// Puts another table in place of the metric table while it lives, so that a test can show what a
/// row added to the table reaches (profiler, reports, listings) with no other change. One at a
/// time, on one thread, with nothing else running.
class ScopedMetricTable {
public:
    explicit ScopedMetricTable(std::span<const MetricInfo> table);
    ~ScopedMetricTable();
    ScopedMetricTable(const ScopedMetricTable&) = delete;
    ScopedMetricTable& operator=(const ScopedMetricTable&) = delete;

private:
    std::span<const MetricInfo> previous_;
};

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
