#pragma once
// The fast GPU scan: a suite's scanned axis timed point by point in a worker process of its own,
// unverified and unprofiled, and drawn as cliff maps of time (or time per unit of work) whose
// steps the launch model explains with the GPU's SM count (docs/cliffs.md). The scan's two ends
// stay full cases of the run: verified, timed and profiled as every case is.

#include "harness/cliff/launch_model.hxx"
#include "harness/compile/compile_suite.hxx"
#include "harness/compile/kernel_cache.hxx"
#include "harness/core/cliff_map.hxx"
#include "harness/core/run_report.hxx"
#include "harness/run/gpu_session.hxx"
#include "harness/run/run_settings.hxx"
#include "harness/run/scan_runner.hxx"
#include "harness/suite/sweep.hxx"

#include <string>
#include <vector>

namespace harness::pipeline {

/// Whether a GPU run of `suite` measures its scanned axis with the fast scan rather than case by
/// case: a suite that scans, in a run that times (not --verify-only, not under an external
/// profiler), holds the whole axis (no shard) and is not a rerun of chosen cases.
bool scans_on_gpu(const suite::Suite& suite, const run::RunSettings& settings, const ShardInfo& shard);

/// The cases of `cases` that stay full cases when the axis is scanned: those at the scan's first
/// and last value, for every value of the other parameters. All of `cases` when the suite scans
/// nothing.
std::vector<suite::Case> scan_end_cases(const suite::Suite& suite, std::vector<suite::Case> cases);

/// One variant's points along the axis, at fixed values of the other parameters, as measured.
struct ScanSeries {
    std::string variant;
    std::string others;                   ///< suite::others_text of the points
    std::vector<suite::Bindings> points;  ///< in axis order
    std::vector<run::ScanPoint> measured; ///< one per point, or fewer when the scan stopped early
};

/// The cliff map of `series` on a GPU of `gpu.sm_count` SMs (`arch`): the figure "time_per_work"
/// (us per GFLOP, or per GB, from the variant's `flops`, else `bytes`) or, without either, "time"
/// (us), with its noise in the same unit, at every point that ran; the steps up at least the
/// suite's `cliffs: {min_depth}` deep, each explained by cliff::explain_cliff, and where the axis
/// has a `pitch`, the steps of its alignment comb that the whole series hides (cliff::add_comb_steps).
CliffMap gpu_cliff_map(const suite::Suite& suite, const ScanSeries& series, const std::string& arch,
                       const cliff::GpuShape& gpu);

/// Scans every kernel variant of `suite` (of `settings.variants`; none: all) along its axis, one map
/// per variant and combination of the other parameters, in a forked worker on `device` (a fault or
/// a point that takes longer than `settings.timeout_s` fails its own map, with a note, and a fresh
/// worker takes the rest). `modules` are the suite's compiled modules for `device`; `settings` are
/// resolved for the suite. Notes say what was skipped, what failed and what the scan cost.
std::vector<CliffMap> scan_suite_gpu(const suite::Suite& suite, const compile::SuiteModules& modules,
                                     const run::DeviceInfo& device, const run::RunSettings& settings,
                                     std::vector<std::string>& notes);

/// Gives a GPU run's report of `suite` the maps of its scan (scan_suite_gpu), with the run's
/// device, case timeout and variants (`settings`, resolved for the suite), and the scan's notes.
/// Cliffs explained as alignment are then confirmed with counters: the points either side run as
/// full cases, profiled, and their global load sectors per request join the explanation.
void add_gpu_cliff_maps(harness::RunReport& report, const suite::Suite& suite, const compile::SuiteModules& modules,
                        const run::DeviceInfo& device, const run::RunSettings& settings,
                        const compile::CompileCache* cache);

} // namespace harness::pipeline
