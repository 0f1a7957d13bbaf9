#pragma once
// What a worker process tells its supervisor (worker_supervisor) over its event pipe, shared by the
// case worker (isolated_runner) and the scan worker (scan_worker). Each message is one line of JSON
// (core/child_process: write_event, follow_child) naming its kind; an item is named by its position
// in the supervisor's list, and what it measured travels as JSON its own worker writes and reads.

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace harness::run {

/// The kinds of message, in the order a worker sends them.
enum class WorkerEventKind {
    fatal,  ///< the worker cannot start (no device, no counters): no item can run; `message` says why
    ready,  ///< the worker is set up, after `seconds` split into `parts`
    begin,  ///< it starts `item`: from here the item's own deadline holds
    point,  ///< one measured part of `item` (`payload`), more to come
    done,   ///< `item` is finished; `payload` is its outcome (null where the points were all)
    failed, ///< `item` failed in a way the worker survived; `message` says why
};

/// The name of `kind` on the pipe ("fatal", "ready", ...).
std::string_view worker_event_name(WorkerEventKind kind);

/// One message from a worker.
struct WorkerEvent {
    WorkerEventKind kind = WorkerEventKind::ready;
    std::size_t item = 0;                ///< begin, point, done, failed
    std::string message;                 ///< fatal, failed
    double seconds = 0;                  ///< ready
    std::map<std::string, double> parts; ///< ready: where its start-up time went
    nlohmann::json payload;              ///< point, done
};

/// The JSON of one message, as it goes over the pipe.
nlohmann::json event_json(const WorkerEvent& event);

/// The message `message` holds. Throws Error(internal) naming what is wrong with one that is not a
/// message of this protocol (an unknown kind, a field missing or of the wrong type).
WorkerEvent event_from_json(const nlohmann::json& message);

/// One message as a line of the pipe, newline included.
std::string encode_event(const WorkerEvent& event);

/// The message of one line of the pipe (its newline may be left off). Throws Error(internal) for a
/// line that is not JSON (garbled, or cut short) or not a message of this protocol.
WorkerEvent decode_event(std::string_view line);

/// The worker's side of the pipe: each call sends one message. A supervisor that is gone is not
/// an error: the worker has no one left to tell.
class WorkerEvents {
public:
    explicit WorkerEvents(int fd) : fd_(fd) {}

    void fatal(const std::string& message) const;
    void ready(double seconds, const std::map<std::string, double>& parts = {}) const;
    void begin(std::size_t item) const;
    void point(std::size_t item, nlohmann::json payload) const;
    void done(std::size_t item, nlohmann::json payload = nullptr) const;
    void failed(std::size_t item, const std::string& message) const;

private:
    void send(const WorkerEvent& event) const;
    int fd_;
};

} // namespace harness::run
