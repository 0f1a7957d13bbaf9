#include "harness/run/worker_supervisor.hxx"

#include "harness/core/child_process.hxx"

#include <nlohmann/json.hpp>
#include <utility>

namespace harness::run {

namespace {

/// How one worker's life went.
struct WorkerRun {
    std::optional<std::size_t> current; ///< the item it was running when it ended, if any
    std::size_t finished = 0;           ///< items it reported done or failed
    bool started = false;               ///< it sent its ready message
    std::string fatal;                  ///< its fatal message, if it sent one
    WorkerExit exit;
};

/// Passes one message of a worker on to `hooks`, keeping `run` up to date, and returns how long
/// the worker may take until its next message (nullopt: the deadline stays).
std::optional<double> follow_event(const WorkerEvent& event, const SupervisedWork& work, const WorkerHooks& hooks,
                                   std::vector<bool>& done, WorkerRun& run)
{
    switch (event.kind) {
    case WorkerEventKind::fatal: run.fatal = event.message; return std::nullopt;
    case WorkerEventKind::ready:
        run.started = true;
        if (hooks.on_ready) hooks.on_ready(event);
        return std::nullopt;
    case WorkerEventKind::begin:
        run.current = event.item;
        if (hooks.on_begin) hooks.on_begin(event.item);
        return work.deadline_s(event.kind, event.item);
    case WorkerEventKind::point:
        if (hooks.on_point) hooks.on_point(event.item, event.payload);
        return work.deadline_s(event.kind, event.item);
    case WorkerEventKind::done:
    case WorkerEventKind::failed:
        if (event.kind == WorkerEventKind::done && hooks.on_done) hooks.on_done(event.item, event.payload);
        if (event.kind == WorkerEventKind::failed && hooks.on_failed) hooks.on_failed(event.item, event.message);
        done.at(event.item) = true;
        ++run.finished;
        run.current.reset();
        return work.deadline_s(event.kind, event.item);
    }
    return std::nullopt;
}

/// Runs a worker for `positions` and follows its events until it exits or misses a deadline (the
/// start-up timeout before its first message, then each message's own).
WorkerRun run_worker(const SupervisedWork& work, const WorkerHooks& hooks, const std::vector<std::size_t>& positions,
                     std::vector<bool>& done)
{
    WorkerRun run;
    const ChildEnd child = follow_child(
        [&](int fd) { return work.worker(fd, positions); }, work.startup_timeout_s,
        [&](const nlohmann::json& message) { return follow_event(event_from_json(message), work, hooks, done, run); });
    run.exit = {child.timed_out, child.status};
    return run;
}

/// The items not reported yet, less those the caller settles itself (they count as done).
std::vector<std::size_t> next_positions(const SupervisedWork& work, std::vector<bool>& done)
{
    std::vector<std::size_t> left;
    for (std::size_t i = 0; i < done.size(); ++i)
        if (!done[i]) left.push_back(i);
    if (!work.select || left.empty()) return left;
    std::vector<std::size_t> chosen = work.select(left);
    for (const std::size_t i : left) done[i] = true;
    for (const std::size_t i : chosen) done.at(i) = false;
    return chosen;
}

} // namespace

SupervisedEnd supervise_workers(const SupervisedWork& work, const WorkerHooks& hooks)
{
    SupervisedEnd end;
    std::vector<bool> done(work.items, false);
    for (;;) {
        const std::vector<std::size_t> positions = next_positions(work, done);
        if (positions.empty()) return end;
        ++end.workers;
        const WorkerRun run = run_worker(work, hooks, positions, done);
        if (!run.fatal.empty()) {
            end.fatal = run.fatal;
            return end;
        }
        if (run.current) {
            done.at(*run.current) = true;
            if (hooks.on_lost) hooks.on_lost(*run.current, run.exit);
        } else if (run.finished == 0) {
            // A worker that died or hung before running any item would be restarted forever.
            end.stalled = run.exit;
            end.started = run.started;
            return end;
        }
    }
}

} // namespace harness::run
