#include "harness/run/scan_worker.hxx"

#include "harness/core/child_process.hxx"
#include "harness/run/driver.hxx"
#include "harness/run/worker_supervisor.hxx"

#include <chrono>
#include <fmt/format.h>
#include <memory>
#include <nlohmann/json.hpp>

namespace harness::run {

namespace {

/// The body of a scan worker: scans the jobs at `positions` in order, reporting over `fd`. A fault
/// poisons the context: the worker reports it and ends, and the supervisor starts another.
int scan_worker(const suite::Suite& suite, const std::map<std::string, compile::CompiledModule>& modules,
                const std::vector<ScanJob>& jobs, const std::vector<std::size_t>& positions, const DeviceInfo& device,
                int fd)
{
    const WorkerEvents events(fd);
    const auto started = std::chrono::steady_clock::now();
    std::unique_ptr<GpuSession> session;
    try {
        session = std::make_unique<GpuSession>(device.ordinal, device.pci_bus_id);
    } catch (const std::exception& e) {
        events.fatal(e.what());
        return 3;
    }
    events.ready(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    ScanRunner runner(*session, suite, modules);
    const ScanTiming timing;
    for (const std::size_t j : positions) {
        events.begin(j);
        try {
            runner.scan(*jobs[j].variant, jobs[j].points, timing, [&](const ScanPoint& p) { events.point(j, p); });
            events.done(j);
        } catch (const CudaError& e) {
            events.failed(j, fmt::format("kernel fault: {}", e.what()));
            if (e.poisons_context()) return 0;
        } catch (const std::exception& e) {
            events.failed(j, e.what());
        }
    }
    return 0;
}

/// Why a job failed whose worker died or was killed while scanning it, and where on the axis.
std::string lost_job(const suite::Suite& suite, const ScanJob& job, const ScanJobResult& result, const WorkerExit& exit,
                     double timeout_s)
{
    const std::string& axis = suite.scanned_param()->name;
    const std::size_t at = result.measured.size();
    const std::string place =
        at < job.points.size() ? fmt::format("{}={}", axis, job.points[at].at(axis)) : std::string("its end");
    return exit.timed_out
               ? fmt::format("a point did not finish within {:g} s at {}; its worker was killed", timeout_s, place)
               : fmt::format("the worker died at {}: {}", place, describe_exit(exit.status));
}

} // namespace

ScanOutcome scan_isolated(const suite::Suite& suite, const std::map<std::string, compile::CompiledModule>& modules,
                          const std::vector<ScanJob>& jobs, const DeviceInfo& device, const RunSettings& settings)
{
    ScanOutcome outcome;
    outcome.jobs.resize(jobs.size());
    SupervisedWork work;
    work.items = jobs.size();
    work.worker = [&](int fd, const std::vector<std::size_t>& positions) {
        return scan_worker(suite, modules, jobs, positions, device, fd);
    };
    // A point has the case timeout; before the first, buffers are drawn and filled, and each end
    // of the axis is run once for calibration: three times as long.
    const double timeout_s = settings.timeout_s;
    work.deadline_s = [timeout_s](WorkerEventKind kind, std::size_t) -> std::optional<double> {
        return kind == WorkerEventKind::begin ? 3 * timeout_s : timeout_s;
    };

    WorkerHooks hooks;
    hooks.on_point = [&](std::size_t j, const nlohmann::json& point) {
        outcome.jobs[j].measured.push_back(point.get<ScanPoint>());
    };
    hooks.on_failed = [&](std::size_t j, const std::string& message) {
        outcome.jobs[j].failure = message;
        outcome.jobs[j].measured.clear();
    };
    hooks.on_lost = [&](std::size_t j, const WorkerExit& exit) {
        outcome.jobs[j].failure = lost_job(suite, jobs[j], outcome.jobs[j], exit, timeout_s);
    };

    const SupervisedEnd end = supervise_workers(work, hooks);
    outcome.workers = end.workers;
    if (!end.fatal.empty())
        outcome.not_run = end.fatal;
    else if (end.stalled && !end.started)
        outcome.not_run =
            end.stalled->timed_out
                ? fmt::format("a scan worker did not start within {:g} s", work.startup_timeout_s)
                : fmt::format("a scan worker failed before scanning: {}", describe_exit(end.stalled->status));
    else if (end.stalled)
        outcome.stopped = true;
    return outcome;
}

} // namespace harness::run
