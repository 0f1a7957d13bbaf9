// The worker protocol that the case and scan workers share (worker_protocol): every kind of message
// survives the pipe's framing, and a garbled or cut-short line is an error that says so. The
// supervisor (worker_supervisor), with fake workers that need no GPU: items run in order, a worker
// that crashes or hangs fails its own item and a fresh worker takes the rest, a fatal message or a
// worker that runs nothing stops it, and a worker that breaks the protocol is an error.

#include "harness/core/child_process.hxx"
#include "harness/core/error.hxx"
#include "harness/run/worker_protocol.hxx"
#include "harness/run/worker_supervisor.hxx"

#include <chrono>
#include <csignal>
#include <functional>
#include <gtest/gtest.h>
#include <optional>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <vector>

namespace worker_protocol_test {

using namespace harness;
using namespace harness::run;

namespace {

void pause_for(double seconds)
{
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

double seconds_since(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// The message `event` becomes on the far side of the pipe.
WorkerEvent through_the_pipe(const WorkerEvent& event)
{
    const std::string line = encode_event(event);
    EXPECT_EQ(line.find('\n'), line.size() - 1) << "one message is one line";
    return decode_event(line);
}

/// What a supervisor told its hooks, in order, as text: "begin 0", "done 0 {...}", "lost 1 ...".
struct Seen {
    std::vector<std::string> events;
    WorkerHooks hooks()
    {
        WorkerHooks h;
        h.on_ready = [this](const WorkerEvent&) { events.push_back("ready"); };
        h.on_begin = [this](std::size_t item) { events.push_back("begin " + std::to_string(item)); };
        h.on_point = [this](std::size_t item, const nlohmann::json& point) {
            events.push_back("point " + std::to_string(item) + " " + point.dump());
        };
        h.on_done = [this](std::size_t item, const nlohmann::json& outcome) {
            events.push_back("done " + std::to_string(item) + " " + outcome.dump());
        };
        h.on_failed = [this](std::size_t item, const std::string& message) {
            events.push_back("failed " + std::to_string(item) + " " + message);
        };
        h.on_lost = [this](std::size_t item, const WorkerExit& exit) {
            events.push_back("lost " + std::to_string(item) + (exit.timed_out ? " timed out" : " died"));
        };
        return h;
    }
};

/// Deadlines by the kind of the last message: `begin` (by item) after a begin, `point` after a
/// point (none: the deadline stays), `between` after an item's end.
std::function<std::optional<double>(WorkerEventKind, std::size_t)>
deadlines(std::function<double(std::size_t)> begin, std::optional<double> point, double between)
{
    return [=](WorkerEventKind kind, std::size_t item) -> std::optional<double> {
        if (kind == WorkerEventKind::begin) return begin(item);
        if (kind == WorkerEventKind::point) return point;
        return between;
    };
}

/// Work of `items` items with short deadlines, run by `worker`.
SupervisedWork fake_work(std::size_t items,
                         std::function<int(int fd, const std::vector<std::size_t>& positions)> worker)
{
    SupervisedWork work;
    work.items = items;
    work.startup_timeout_s = 5.0;
    work.worker = std::move(worker);
    work.deadline_s = deadlines([](std::size_t) { return 5.0; }, std::nullopt, 5.0);
    return work;
}

} // namespace

TEST(WorkerProtocol, EveryKindOfMessageSurvivesThePipe)
{
    WorkerEvent fatal;
    fatal.kind = WorkerEventKind::fatal;
    fatal.message = "cannot read hardware counters: ERR_NVGPUCTRPERM";
    const WorkerEvent fatal_read = through_the_pipe(fatal);
    EXPECT_EQ(fatal_read.kind, WorkerEventKind::fatal);
    EXPECT_EQ(fatal_read.message, fatal.message);

    WorkerEvent ready;
    ready.kind = WorkerEventKind::ready;
    ready.seconds = 0.25;
    ready.parts = {{"context", 0.125}, {"counter check", 0.0625}};
    const WorkerEvent ready_read = through_the_pipe(ready);
    EXPECT_EQ(ready_read.kind, WorkerEventKind::ready);
    EXPECT_DOUBLE_EQ(ready_read.seconds, 0.25);
    EXPECT_EQ(ready_read.parts, ready.parts);

    WorkerEvent begin;
    begin.kind = WorkerEventKind::begin;
    begin.item = 41;
    const WorkerEvent begin_read = through_the_pipe(begin);
    EXPECT_EQ(begin_read.kind, WorkerEventKind::begin);
    EXPECT_EQ(begin_read.item, 41u);

    WorkerEvent point;
    point.kind = WorkerEventKind::point;
    point.item = 3;
    point.payload = {{"x", 4096}, {"time_us", 12.5}};
    const WorkerEvent point_read = through_the_pipe(point);
    EXPECT_EQ(point_read.kind, WorkerEventKind::point);
    EXPECT_EQ(point_read.item, 3u);
    EXPECT_EQ(point_read.payload, point.payload);

    WorkerEvent done;
    done.kind = WorkerEventKind::done;
    done.item = 7;
    done.payload = {{"status", "passed"}, {"message", "line\nbreak"}};
    const WorkerEvent done_read = through_the_pipe(done);
    EXPECT_EQ(done_read.kind, WorkerEventKind::done);
    EXPECT_EQ(done_read.item, 7u);
    EXPECT_EQ(done_read.payload, done.payload);

    WorkerEvent done_alone;
    done_alone.kind = WorkerEventKind::done;
    done_alone.item = 8;
    EXPECT_TRUE(through_the_pipe(done_alone).payload.is_null()) << "a done without an outcome has none";

    WorkerEvent failed;
    failed.kind = WorkerEventKind::failed;
    failed.item = 2;
    failed.message = "kernel fault: an illegal memory access was encountered";
    const WorkerEvent failed_read = through_the_pipe(failed);
    EXPECT_EQ(failed_read.kind, WorkerEventKind::failed);
    EXPECT_EQ(failed_read.item, 2u);
    EXPECT_EQ(failed_read.message, failed.message);
}

TEST(WorkerProtocol, KindsHaveTheirNamesOnThePipe)
{
    EXPECT_EQ(worker_event_name(WorkerEventKind::fatal), "fatal");
    EXPECT_EQ(worker_event_name(WorkerEventKind::ready), "ready");
    EXPECT_EQ(worker_event_name(WorkerEventKind::begin), "begin");
    EXPECT_EQ(worker_event_name(WorkerEventKind::point), "point");
    EXPECT_EQ(worker_event_name(WorkerEventKind::done), "done");
    EXPECT_EQ(worker_event_name(WorkerEventKind::failed), "failed");
    WorkerEvent begin;
    begin.kind = WorkerEventKind::begin;
    begin.item = 5;
    EXPECT_EQ(event_json(begin), nlohmann::json({{"event", "begin"}, {"item", 5}}));
}

TEST(WorkerProtocol, AGarbledOrCutShortMessageIsAnError)
{
    WorkerEvent done;
    done.kind = WorkerEventKind::done;
    done.item = 1;
    done.payload = {{"status", "passed"}};
    const std::string line = encode_event(done);
    for (std::size_t cut = 1; cut + 1 < line.size(); ++cut)
        EXPECT_THROW(decode_event(line.substr(0, cut)), Error) << "cut at " << cut << ": " << line.substr(0, cut);
    EXPECT_THROW(decode_event(""), Error);
    EXPECT_THROW(decode_event("\xff\xfe garbage"), Error);

    const auto message_of = [](std::string_view text) {
        try {
            decode_event(text);
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::internal);
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(message_of(R"({"event":"begin","item":)").find("not JSON"), std::string::npos);
    EXPECT_NE(message_of(R"({"event":"result","item":1})").find("unknown kind of message 'result'"), std::string::npos);
    EXPECT_NE(message_of(R"({"item":1})").find("not one of its protocol"), std::string::npos);
    EXPECT_NE(message_of(R"({"event":"begin"})").find("not one of its protocol"), std::string::npos);
    EXPECT_NE(message_of(R"({"event":"begin","item":"one"})").find("not one of its protocol"), std::string::npos);
    EXPECT_NE(message_of(R"({"event":"failed","item":1})").find("not one of its protocol"), std::string::npos);
    EXPECT_NE(message_of(R"([1,2,3])").find("not one of its protocol"), std::string::npos);
    EXPECT_NO_THROW(decode_event(R"({"event":"done","item":1,"payload":null})"));
}

TEST(WorkerSupervisor, RunsEveryItemInOrderInOneWorker)
{
    Seen seen;
    const SupervisedEnd end = supervise_workers(fake_work(3,
                                                          [](int fd, const std::vector<std::size_t>& positions) {
                                                              const WorkerEvents events(fd);
                                                              events.ready(0.5);
                                                              for (const std::size_t i : positions) {
                                                                  events.begin(i);
                                                                  events.point(i, {{"x", i}});
                                                                  events.done(i, {{"value", i * 10}});
                                                              }
                                                              return 0;
                                                          }),
                                                seen.hooks());
    EXPECT_TRUE(end.fatal.empty());
    EXPECT_FALSE(end.stalled);
    EXPECT_EQ(end.workers, 1u);
    EXPECT_EQ(seen.events, (std::vector<std::string>{"ready", "begin 0", R"(point 0 {"x":0})", R"(done 0 {"value":0})",
                                                     "begin 1", R"(point 1 {"x":1})", R"(done 1 {"value":10})",
                                                     "begin 2", R"(point 2 {"x":2})", R"(done 2 {"value":20})"}));
}

TEST(WorkerSupervisor, AnItemThatKillsItsWorkerFailsAloneAndAFreshWorkerTakesTheRest)
{
    Seen seen;
    std::vector<std::vector<std::size_t>> given;
    SupervisedWork work = fake_work(4, [](int fd, const std::vector<std::size_t>& positions) {
        const WorkerEvents events(fd);
        events.ready(0);
        for (const std::size_t i : positions) {
            events.begin(i);
            if (i == 1) std::raise(SIGSEGV);
            // A failure the worker survives is the item's own, not the worker's.
            if (i == 2)
                events.failed(i, "no such kernel");
            else
                events.done(i);
        }
        return 0;
    });
    // Which items each worker is given, as the supervisor chooses them.
    work.select = [&](const std::vector<std::size_t>& left) {
        given.push_back(left);
        return left;
    };
    const SupervisedEnd end = supervise_workers(work, seen.hooks());
    EXPECT_TRUE(end.fatal.empty());
    EXPECT_FALSE(end.stalled);
    EXPECT_EQ(end.workers, 2u);
    EXPECT_EQ(given, (std::vector<std::vector<std::size_t>>{{0, 1, 2, 3}, {2, 3}}));
    EXPECT_EQ(seen.events,
              (std::vector<std::string>{"ready", "begin 0", "done 0 null", "begin 1", "lost 1 died", "ready", "begin 2",
                                        "failed 2 no such kernel", "begin 3", "done 3 null"}));
}

TEST(WorkerSupervisor, AnItemThatHangsIsKilledAtItsDeadline)
{
    Seen seen;
    SupervisedWork work = fake_work(3, [](int fd, const std::vector<std::size_t>& positions) {
        const WorkerEvents events(fd);
        events.ready(0);
        for (const std::size_t i : positions) {
            events.begin(i);
            if (i == 0) pause_for(30);
            events.done(i);
        }
        return 0;
    });
    work.deadline_s = deadlines([](std::size_t item) { return item == 0 ? 0.3 : 5.0; }, std::nullopt, 5.0);
    const auto start = std::chrono::steady_clock::now();
    const SupervisedEnd end = supervise_workers(work, seen.hooks());
    EXPECT_LT(seconds_since(start), 5.0);
    EXPECT_EQ(end.workers, 2u);
    EXPECT_EQ(seen.events, (std::vector<std::string>{"ready", "begin 0", "lost 0 timed out", "ready", "begin 1",
                                                     "done 1 null", "begin 2", "done 2 null"}));
}

TEST(WorkerSupervisor, EachMessageSetsTheDeadlineItsKindCalls)
{
    // Points 0.2 s apart, each allowed 0.5 s, in an item whose begin allows only 0.3 s.
    SupervisedWork work = fake_work(1, [](int fd, const std::vector<std::size_t>&) {
        const WorkerEvents events(fd);
        events.ready(0);
        events.begin(0);
        for (int p = 0; p < 5; ++p) {
            pause_for(0.2);
            events.point(0, p);
        }
        events.done(0);
        return 0;
    });
    work.deadline_s = deadlines([](std::size_t) { return 0.3; }, 0.5, 5.0);
    Seen seen;
    supervise_workers(work, seen.hooks());
    ASSERT_FALSE(seen.events.empty());
    EXPECT_EQ(seen.events.back(), "done 0 null");

    // Between items, the worker has the deadline that follows an item's end.
    SupervisedWork slow = fake_work(2, [](int fd, const std::vector<std::size_t>& positions) {
        const WorkerEvents events(fd);
        events.ready(0);
        for (const std::size_t i : positions) {
            events.begin(i);
            events.done(i);
            pause_for(30);
        }
        return 0;
    });
    slow.deadline_s = deadlines([](std::size_t) { return 5.0; }, std::nullopt, 0.3);
    Seen stalled;
    const SupervisedEnd end = supervise_workers(slow, stalled.hooks());
    // The first worker was killed after item 0, between items: no item is lost; the second runs item 1.
    EXPECT_EQ(end.workers, 2u);
    EXPECT_EQ(stalled.events,
              (std::vector<std::string>{"ready", "begin 0", "done 0 null", "ready", "begin 1", "done 1 null"}));
}

TEST(WorkerSupervisor, AFatalMessageStopsEveryItem)
{
    Seen seen;
    const SupervisedEnd end = supervise_workers(fake_work(3,
                                                          [](int fd, const std::vector<std::size_t>&) {
                                                              WorkerEvents(fd).fatal("no CUDA device");
                                                              return 3;
                                                          }),
                                                seen.hooks());
    EXPECT_EQ(end.fatal, "no CUDA device");
    EXPECT_EQ(end.workers, 1u);
    EXPECT_TRUE(seen.events.empty());
}

TEST(WorkerSupervisor, AWorkerThatRunsNothingIsNotRestartedForever)
{
    // Dies before saying it is ready.
    const SupervisedEnd died =
        supervise_workers(fake_work(2, [](int, const std::vector<std::size_t>&) { return 3; }), WorkerHooks{});
    ASSERT_TRUE(died.stalled);
    EXPECT_FALSE(died.started);
    EXPECT_FALSE(died.stalled->timed_out);
    EXPECT_EQ(describe_exit(died.stalled->status), "exited with status 3");
    EXPECT_EQ(died.workers, 1u);

    // Ready, then gone without an item.
    const SupervisedEnd quit = supervise_workers(fake_work(2,
                                                           [](int fd, const std::vector<std::size_t>&) {
                                                               WorkerEvents(fd).ready(0);
                                                               return 0;
                                                           }),
                                                 WorkerHooks{});
    ASSERT_TRUE(quit.stalled);
    EXPECT_TRUE(quit.started);
    EXPECT_EQ(quit.workers, 1u);

    // Silent past the start-up timeout.
    SupervisedWork silent = fake_work(2, [](int, const std::vector<std::size_t>&) {
        pause_for(30);
        return 0;
    });
    silent.startup_timeout_s = 0.3;
    const auto start = std::chrono::steady_clock::now();
    const SupervisedEnd hung = supervise_workers(silent, WorkerHooks{});
    EXPECT_LT(seconds_since(start), 5.0);
    ASSERT_TRUE(hung.stalled);
    EXPECT_TRUE(hung.stalled->timed_out);
    EXPECT_FALSE(hung.started);
}

TEST(WorkerSupervisor, ItemsTheCallerSettlesAreNotRun)
{
    Seen seen;
    SupervisedWork work = fake_work(4, [](int fd, const std::vector<std::size_t>& positions) {
        const WorkerEvents events(fd);
        events.ready(0);
        for (const std::size_t i : positions) {
            events.begin(i);
            events.done(i);
        }
        return 0;
    });
    work.select = [](const std::vector<std::size_t>& left) {
        std::vector<std::size_t> odd;
        for (const std::size_t i : left)
            if (i % 2 == 1) odd.push_back(i);
        return odd;
    };
    supervise_workers(work, seen.hooks());
    EXPECT_EQ(seen.events, (std::vector<std::string>{"ready", "begin 1", "done 1 null", "begin 3", "done 3 null"}));

    // Nothing left to run: no worker starts.
    work.select = [](const std::vector<std::size_t>&) { return std::vector<std::size_t>{}; };
    EXPECT_EQ(supervise_workers(work, WorkerHooks{}).workers, 0u);
}

TEST(WorkerSupervisor, AWorkerThatBreaksTheProtocolIsAnError)
{
    const auto start = std::chrono::steady_clock::now();
    const SupervisedWork work = fake_work(2, [](int fd, const std::vector<std::size_t>&) {
        WorkerEvents(fd).ready(0);
        write_all(fd, "{\"event\":\"begin\",\"item\":\n");
        pause_for(30);
        return 0;
    });
    EXPECT_THROW(supervise_workers(work, WorkerHooks{}), std::exception);
    EXPECT_LT(seconds_since(start), 5.0) << "the worker is killed, not waited for";

    const SupervisedWork unknown = fake_work(2, [](int fd, const std::vector<std::size_t>&) {
        write_all(fd, "{\"event\":\"result\",\"index\":0}\n");
        return 0;
    });
    EXPECT_THROW(supervise_workers(unknown, WorkerHooks{}), Error);
}

} // namespace worker_protocol_test
