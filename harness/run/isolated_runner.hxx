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

/// One suite's share of a run that may hold several: its cases, its modules, and its settings
/// (resolved for the suite), whose case timeout is the deadline of each of its cases and whose
/// timing budget is each case's.
struct SuiteWork {
    const suite::Suite* suite = nullptr;
    const std::vector<suite::Case>* cases = nullptr;
    const std::map<std::string, compile::CompiledModule>* modules = nullptr;
    const RunSettings* settings = nullptr;
};

/// A case of one of a run's suites: indices into the SuiteWork list and its cases.
struct WorkItem {
    std::size_t suite = 0;
    std::size_t index = 0;
};

/// Runs `items` in order on `device`, each case measured as `options` say, and returns one result
/// per item. Workers serve every suite (a context and its profilers cost more to set up than most
/// cases take); a fault or hang fails its own case, and a fresh worker takes the rest. The
/// observer's indices are positions in `items`. Throws Error(environment) when no worker can start
/// (no device, driver failure).
std::vector<CaseResult> run_isolated(const std::vector<SuiteWork>& work, const std::vector<WorkItem>& items,
                                     const DeviceInfo& device, const RunOptions& options, const RunObserver& observer);

/// The result for a case that is not run because the reference failed at its point.
CaseResult unverifiable_case(const suite::Suite& suite, const suite::Case& c, const std::string& why);

} // namespace harness::run
