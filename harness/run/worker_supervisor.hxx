#pragma once
// Runs a list of items in worker processes, one worker at a time, so that an item that faults or
// hangs fails alone: a fault poisons the CUDA context for good, and a hung kernel cannot be stopped
// from inside the process, so a fresh worker takes the items left. Shared by the case worker
// (isolated_runner) and the scan worker (scan_worker); they speak worker_protocol.

#include "harness/run/worker_protocol.hxx"

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace harness::run {

/// How a worker ended while it was running an item, or before it ran any.
struct WorkerExit {
    bool timed_out = false; ///< it missed a deadline and was killed
    int status = 0;         ///< its wait status (core/child_process: describe_exit)
};

/// How long a worker may take to create its context and send its first message.
inline constexpr double worker_startup_timeout_s = 120.0;

/// What a supervisor runs and how long each step may take. Items are positions 0..items-1.
struct SupervisedWork {
    std::size_t items = 0;
    double startup_timeout_s = worker_startup_timeout_s; ///< from a worker's start to its first message
    /// The worker's body, in the child: runs `positions` in order, reporting over `fd` with
    /// WorkerEvents, and returns the child's exit status.
    std::function<int(int fd, const std::vector<std::size_t>& positions)> worker;
    /// How long the worker may take until its next message after one of `kind` about `item`: after
    /// a begin, until the item's first point or its end; after a point, until the next; after a
    /// done or failed, until the next item begins (the worker may first finish work it set aside).
    /// Nullopt keeps the deadline as it was. Taken by the caller from the run's settings.
    std::function<std::optional<double>(WorkerEventKind kind, std::size_t item)> deadline_s;
    /// Of the items no worker has reported yet (in order), those the next worker runs; the caller
    /// settles the others itself. Unset: all of them.
    std::function<std::vector<std::size_t>(const std::vector<std::size_t>& left)> select;
};

/// What the supervisor tells its caller, as it happens. Every hook may be left unset.
struct WorkerHooks {
    std::function<void(const WorkerEvent& ready)> on_ready;
    std::function<void(std::size_t item)> on_begin;
    std::function<void(std::size_t item, const nlohmann::json& point)> on_point;
    std::function<void(std::size_t item, const nlohmann::json& outcome)> on_done;
    std::function<void(std::size_t item, const std::string& message)> on_failed;
    /// The worker died or was killed while running `item`: the item is over, and a fresh worker
    /// takes the items left.
    std::function<void(std::size_t item, const WorkerExit& exit)> on_lost;
};

/// How supervising ended, when not every item was dealt with.
struct SupervisedEnd {
    std::string fatal; ///< a worker's fatal message: no worker can run the items
    /// A worker that ended without running an item: another would do the same. `started`: it had
    /// sent its ready message.
    std::optional<WorkerExit> stalled;
    bool started = false;
    std::size_t workers = 0; ///< how many worker processes ran
};

/// Runs work.items in worker processes until every item is done (reported, lost, or settled by
/// `select`), a worker sends a fatal message, or a worker ends having run nothing. Throws Error
/// when a worker's message is not of the protocol (the worker is killed first).
SupervisedEnd supervise_workers(const SupervisedWork& work, const WorkerHooks& hooks);

} // namespace harness::run
