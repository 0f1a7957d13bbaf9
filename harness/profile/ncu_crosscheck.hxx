#pragma once
// Our counters next to Nsight Compute's for the same cases: the check that the figures that gate
// a build are the ones NVIDIA's own tool reports. Host-only: reads ncu's CSV and our results.

#include "harness/core/metrics.hxx"
#include "harness/core/run_report.hxx"

#include <string>
#include <vector>

namespace harness::profile {

/// One metric of ours and the ncu metric that measures the same thing, from the metric table's row
/// (MetricRoles::ncu, MetricRoles::counter).
struct CrosscheckMetric {
    std::string ours;      ///< metric-table name
    std::string ncu;       ///< ncu metric name (ncu_metric_name)
    double tolerance;      ///< allowed difference: 0 = equal; < 1 relative; for fractions, absolute points / 100
    bool absolute = false; ///< tolerance is absolute (occupancy), not relative
    double floor = 0.0;    ///< a difference up to this many units agrees whatever the relative tolerance says
    LaunchCombine launches = LaunchCombine::sum; ///< how a case's kernels combine, as ours do
    bool percent = false;                        ///< ncu's figure is in percent, ours a fraction
};

/// The Nsight Compute metric that measures the figure of row `m`: its source for a range-profiler
/// counter, its source with the ".sum" rollup for a SASS metric.
std::string ncu_metric_name(const MetricInfo& m);

/// The metrics compared: every row whose ncu counterpart is compared, counts first, then traffic
/// compared with a floor, then fractions compared in points. And the ncu names to pass to `ncu
/// --metrics`: those of the default set (what a run measures unless its suite lists metrics), or
/// only the DRAM metrics, for a single-pass run in which ncu saves and restores no memory.
std::vector<CrosscheckMetric> crosscheck_metrics();
std::string ncu_metric_list();
std::string ncu_dram_metric_list();

/// One kernel row of `ncu --csv --page raw`: its name (the NVTX range with --print-nvtx-rename
/// kernel) and metric values by ncu name.
struct NcuKernel {
    std::string name;
    std::map<std::string, double> values;
};

/// The largest ncu CSV file `harness crosscheck` reads.
inline constexpr std::size_t max_ncu_csv_bytes = 256 * 1024 * 1024;

/// Parses ncu's raw-page CSV (header row, optional units row, one row per kernel). Throws
/// Error(bad_input) naming the file when it has no "Kernel Name" column.
std::vector<NcuKernel> parse_ncu_csv(const std::string& text, const std::string& file);

/// One compared figure.
struct CrosscheckRow {
    std::string case_name; ///< "variant params"
    std::string metric;    ///< ours
    double ours = 0.0;
    double ncu = 0.0;
    bool within = false;
    /// Times only: the lowest and highest of ncu's runs (equal to `ncu` with one run), and whether
    /// ours lies within 2 % of that range, that is, no further from ncu than ncu's runs are from
    /// each other.
    double ncu_low = 0.0;
    double ncu_high = 0.0;
    bool within_ncu_spread = false;
};

/// Joins ncu's kernels with our cases by NVTX range name ("<variant> <params>"), summing a case's
/// kernels (per-launch ratios weighted by duration), and compares every metric we both have.
/// `ncu` holds the kernels of one or more ncu runs of the same program; for each case and metric
/// the last run that measured it is used (a DRAM-only run after a full one).
std::vector<CrosscheckRow> crosscheck(const harness::RunReport& ours, const std::vector<std::vector<NcuKernel>>& ncu);

/// Our time median of each case next to the sum of ncu's gpu__time_duration over the case's
/// kernels. ncu profiles each kernel once per run, so with several runs of the same program the
/// figure is the median of the runs' sums (a figure to read, not to gate). `within` is a
/// difference of at most 2 %.
std::vector<CrosscheckRow> time_vs_ncu(const harness::RunReport& ours, const std::vector<std::vector<NcuKernel>>& ncu);

/// The time table as text, with a tally of the cases of `min_us` or more: within 2 % of ncu's
/// median, and within 2 % of the range of ncu's runs.
std::string format_time_crosscheck(const std::vector<CrosscheckRow>& rows, double min_us);

/// The static tier's figures (from the cubin and the occupancy rules) next to the driver's for the
/// same kernels: registers, static shared and local bytes, resident blocks and theoretical
/// occupancy, which must be equal. `static_run` is a --static run; its rows for the GPU's
/// architecture are compared.
std::vector<CrosscheckRow> static_vs_driver(const harness::RunReport& static_run, const harness::RunReport& gpu_run);

/// The side-by-side table as text; `ours` and `theirs` name the two columns.
std::string format_crosscheck(const std::vector<CrosscheckRow>& rows, const std::string& ours = "harness",
                              const std::string& theirs = "ncu");

} // namespace harness::profile
