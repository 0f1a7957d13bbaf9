#pragma once
// The fast GPU scan's worker processes (docs/cliffs.md): series of points timed by ScanRunner, a
// series at a time, in workers kept by worker_supervisor, so that a series that faults or hangs
// fails alone and a fresh worker takes the rest.

#include "harness/compile/nvrtc_compiler.hxx"
#include "harness/run/gpu_session.hxx"
#include "harness/run/run_settings.hxx"
#include "harness/run/scan_runner.hxx"
#include "harness/suite/suite.hxx"

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace harness::run {

/// One series to scan: a kernel variant at its points along the axis, in axis order.
struct ScanJob {
    const suite::VariantSpec* variant = nullptr;
    std::vector<suite::Bindings> points;
};

/// What became of a job.
struct ScanJobResult {
    std::vector<ScanPoint> measured; ///< one per point, or fewer when the scan stopped early
    std::string failure;             ///< why the series failed; empty when it did not
};

/// What the scan's workers did.
struct ScanOutcome {
    std::vector<ScanJobResult> jobs; ///< one per job
    std::string not_run;             ///< why no job could run ("a scan worker did not start within ...")
    bool stopped = false;            ///< a worker ended before scanning anything: the jobs left did not run
    std::size_t workers = 0;         ///< worker processes started
};

/// Scans `jobs` of `suite` in order in worker processes on `device` (`modules` keyed by
/// suite::compile_key), each point timed as ScanTiming's defaults say: a job that faults or hangs
/// (a point that takes longer than `settings.timeout_s`, the suite's case timeout as resolved for
/// the run) fails with a message that says where, and a fresh worker takes the next.
ScanOutcome scan_isolated(const suite::Suite& suite, const std::map<std::string, compile::CompiledModule>& modules,
                          const std::vector<ScanJob>& jobs, const DeviceInfo& device, const RunSettings& settings);

} // namespace harness::run
