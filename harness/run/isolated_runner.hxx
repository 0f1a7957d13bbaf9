#pragma once
// Runs cases in worker processes so that a kernel that faults or hangs fails only its own case.
// A fault poisons the CUDA context for good, and a hung kernel cannot be stopped from inside the
// process; a fresh worker for the remaining cases is the only clean way on.

#include "harness/compile/nvrtc_compiler.hxx"
#include "harness/core/case_result.hxx"
#include "harness/run/case_runner.hxx"
#include "harness/suite/sweep.hxx"

#include <functional>
#include <map>
#include <vector>

namespace harness::run {

/// Progress callbacks: a worker is ready (after `seconds` creating its context and profilers,
/// split into `parts`), a case (or its second half: see CaseRunner::start) starts, a case ends.
struct RunObserver {
    std::function<void(double seconds, const std::map<std::string, double>& parts)> on_worker_ready;
    std::function<void(std::size_t index)> on_begin;
    std::function<void(std::size_t index, const CaseResult& result)> on_result;
};

/// What the isolated runner needs besides the cases.
struct IsolatedRunConfig {
    int device = 0;
    std::string pci_bus_id; ///< the device's, as probed: the worker is confined to it (GpuSession)
    RunOptions options;
    double timeout_s = 30.0;          ///< per case, from the suite unless overridden
    double startup_timeout_s = 120.0; ///< for a worker to create its context
};

/// One suite's share of a run that may hold several: its cases, modules and case timeout.
struct SuiteWork {
    const suite::Suite* suite = nullptr;
    const std::vector<suite::Case>* cases = nullptr;
    const std::map<std::string, compile::CompiledModule>* modules = nullptr;
    double timeout_s = 30.0;
};

/// A case of one of a run's suites: indices into the SuiteWork list and its cases.
struct WorkItem {
    std::size_t suite = 0;
    std::size_t index = 0;
};

/// Runs `items` in order on `config.device` and returns one result per item. Workers serve every
/// suite (a context and its profilers cost more to set up than most cases take); a fault or hang
/// fails its own case, and a fresh worker takes the rest. The observer's indices are positions
/// in `items`; `config.timeout_s` gives way to each suite's own.
std::vector<CaseResult> run_isolated(const std::vector<SuiteWork>& work, const std::vector<WorkItem>& items,
                                     const IsolatedRunConfig& config, const RunObserver& observer);

/// Runs `cases` (every variant in `modules` compiled) and returns one result per case, in order.
/// Cases whose variant is missing from `modules` must be resolved by the caller beforehand.
/// Throws Error(environment) when no worker can start (no device, driver failure).
std::vector<CaseResult> run_isolated(const suite::Suite& suite, const std::vector<suite::Case>& cases,
                                     const std::map<std::string, compile::CompiledModule>& modules,
                                     const IsolatedRunConfig& config, const RunObserver& observer);

/// The result for a case that is not run because the reference failed at its point.
CaseResult unverifiable_case(const suite::Suite& suite, const suite::Case& c, const std::string& why);

} // namespace harness::run
