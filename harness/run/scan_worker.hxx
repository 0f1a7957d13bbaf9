#pragma once
// The fast GPU scan's worker processes (docs/cliffs.md): series of points timed by ScanRunner, a
// series at a time, in workers kept by worker_supervisor, so that a series that faults or hangs
// fails alone and a fresh worker takes the rest.

#include "harness/compile/nvrtc_compiler.hxx"
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

/// How the scan's workers run.
struct ScanWorkerConfig {
    int device = 0;                   ///< the CUDA ordinal the worker runs on
    std::string pci_bus_id;           ///< the device's, as probed: the worker is confined to it
    double point_timeout_s = 30.0;    ///< a point that takes longer has hung: its series fails
    double startup_timeout_s = 120.0; ///< for a worker to create its context
    ScanTiming timing;                ///< batches per point and their size
};

/// What the scan's workers did.
struct ScanOutcome {
    std::vector<ScanJobResult> jobs; ///< one per job
    std::string not_run;             ///< why no job could run ("a scan worker did not start within 120 s")
    bool stopped = false;            ///< a worker ended before scanning anything: the jobs left did not run
    std::size_t workers = 0;         ///< worker processes started
};

/// Scans `jobs` of `suite` in order in worker processes (`modules` keyed by suite::compile_key): a
/// job that faults or hangs fails with a message that says where, and a fresh worker takes the next.
ScanOutcome scan_isolated(const suite::Suite& suite, const std::map<std::string, compile::CompiledModule>& modules,
                          const std::vector<ScanJob>& jobs, const ScanWorkerConfig& config);

} // namespace harness::run
