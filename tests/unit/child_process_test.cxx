// Children that answer once (run_in_child), that answer and stay (run_in_staying_child), and
// workers followed by their events (follow_child): messages arrive whole and in order, deadlines
// move with them, a child that hangs is killed, one that crashes or throws is reaped with its
// status, none is left running when the parent cannot follow it, and a staying child holds
// nothing the parent had open.

#include "harness/core/child_process.hxx"
#include "harness/core/error.hxx"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace child_process_test {

using namespace harness;
using nlohmann::json;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void pause_for(double seconds)
{
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

} // namespace

TEST(RunInChild, ReturnsTheAnswerOrSaysHowTheChildDied)
{
    EXPECT_EQ(run_in_child("answer", [] { return std::string(300000, 'x'); }).size(), 300000u);
    // Any bytes come back as given, whatever they start or end with.
    const std::string odd = std::string("S\0E", 3) + std::string(1, '\0');
    EXPECT_EQ(run_in_child("odd", [&] { return odd; }), odd);
    EXPECT_EQ(run_in_child("empty", [] { return std::string(); }), "");
    try {
        run_in_child("crash", []() -> std::string {
            std::raise(SIGSEGV);
            return "";
        });
        ADD_FAILURE() << "a crashed child answered";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("crash: the child process was killed by signal 11"), std::string::npos)
            << e.what();
    }
    EXPECT_THROW(run_in_child("throw", []() -> std::string { throw std::runtime_error("no"); }), Error);
}

TEST(RunInStayingChild, StaysOnlyWhenAskedHoldsNothingOfTheParentsAndEndsWhenTold)
{
    // A child that is not asked to stay answers and is reaped, as run_in_child's.
    EXPECT_EQ(run_in_staying_child("plain", [](bool&) { return std::string("answer"); }), "answer");
    EXPECT_EQ(staying_child(), 0);
    EXPECT_THROW(run_in_staying_child("throw", [](bool&) -> std::string { throw std::runtime_error("no"); }), Error);
    EXPECT_EQ(staying_child(), 0);

    // A pipe open in the parent when the child is forked: once the parent closes its write end,
    // its reader sees the end, so the staying child holds no copy of it.
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const std::string answer = run_in_staying_child("stay", [&](bool& stay) {
        const int opened_by_body = ::dup(STDERR_FILENO); // stands for the driver's own descriptors
        stay = true;
        return fmt::format("{} {}", opened_by_body, std::string(100000, 'y'));
    });
    const auto space = answer.find(' ');
    ASSERT_NE(space, std::string::npos);
    EXPECT_EQ(answer.substr(space + 1), std::string(100000, 'y'));
    const int opened_by_body = std::stoi(answer.substr(0, space));
    const int first = staying_child();
    ASSERT_GT(first, 0);
    EXPECT_EQ(::kill(first, 0), 0) << "the child did not stay";
    ::close(fds[1]);
    pollfd p{fds[0], POLLIN, 0};
    ASSERT_EQ(poll(&p, 1, 5000), 1) << "the staying child still holds the parent's pipe";
    char byte = 0;
    EXPECT_EQ(::read(fds[0], &byte, 1), 0);
    ::close(fds[0]);
    // What the body itself opened stays open in the child.
    EXPECT_TRUE(std::filesystem::exists(fmt::format("/proc/{}/fd/{}", first, opened_by_body)));
    EXPECT_FALSE(std::filesystem::exists(fmt::format("/proc/{}/fd/{}", first, fds[0])));

    // A second staying child ends the first; ending it leaves none.
    run_in_staying_child("again", [](bool& stay) {
        stay = true;
        return std::string("x");
    });
    const int second = staying_child();
    EXPECT_GT(second, 0);
    EXPECT_NE(second, first);
    EXPECT_EQ(::kill(first, 0), -1) << "the first staying child was not ended";
    end_staying_child();
    EXPECT_EQ(staying_child(), 0);
    EXPECT_EQ(::kill(second, 0), -1) << "the staying child was not ended";
}

namespace {

/// Forks a process that makes a staying child, tells its pid over a pipe, then ends as `end` says
/// ("exit": returns from main, as a run does; "killed": waits to be killed). Returns the process
/// and the staying child's pid. The test process is made a subreaper, so that the staying child,
/// orphaned, is reparented to it and can be reaped here.
std::pair<pid_t, pid_t> fork_with_staying_child(const std::string& end)
{
    int fds[2];
    if (pipe(fds) != 0) return {-1, -1};
    const pid_t process = fork();
    if (process == 0) {
        ::close(fds[0]);
        run_in_staying_child("held", [](bool& stay) {
            stay = true;
            return std::string("x");
        });
        const int held = staying_child();
        write_all(fds[1], std::to_string(held) + "\n");
        ::close(fds[1]);
        if (end == "exit") std::exit(0); // atexit ends the staying child
        for (;;) ::pause();
    }
    ::close(fds[1]);
    std::string text;
    char chunk[64];
    for (ssize_t n; (n = ::read(fds[0], chunk, sizeof chunk)) > 0;) text.append(chunk, static_cast<std::size_t>(n));
    ::close(fds[0]);
    return {process, text.empty() ? -1 : std::stoi(text)};
}

/// Whether `pid` ended (reaped here, or gone) within `seconds`.
bool ends_within(pid_t pid, double seconds)
{
    const auto start = std::chrono::steady_clock::now();
    while (seconds_since(start) < seconds) {
        int status = 0;
        const pid_t reaped = waitpid(pid, &status, WNOHANG);
        if (reaped == pid || (reaped < 0 && errno == ECHILD && ::kill(pid, 0) != 0)) return true;
        pause_for(0.02);
    }
    return false;
}

} // namespace

TEST(RunInStayingChild, EndsWithTheProcessThatMadeItWhetherItExitsOrIsKilled)
{
    ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    for (const std::string end : {"exit", "killed"}) {
        const auto [process, held] = fork_with_staying_child(end);
        ASSERT_GT(process, 0) << end;
        ASSERT_GT(held, 0) << end;
        if (end == "killed") ::kill(process, SIGKILL);
        int status = 0;
        ASSERT_EQ(waitpid(process, &status, 0), process) << end;
        EXPECT_TRUE(ends_within(held, 10.0)) << "the staying child outlived the process that made it (" << end << ")";
    }
    prctl(PR_SET_CHILD_SUBREAPER, 0);
}

TEST(FollowChild, PassesEveryMessageWholeAndInOrderAndReapsTheChild)
{
    const std::string long_text(200000, 'a'); // several reads of the pipe
    std::vector<json> seen;
    const ChildEnd end = follow_child(
        [&](int fd) {
            write_event(fd, {{"event", "ready"}});
            write_event(fd, {{"event", "long"}, {"text", long_text}});
            write_event(fd, {{"event", "odd"}, {"text", "line\nbreak \xff"}});
            return 7;
        },
        5.0,
        [&](const json& message) {
            seen.push_back(message);
            return std::nullopt;
        });
    EXPECT_FALSE(end.timed_out);
    ASSERT_TRUE(WIFEXITED(end.status));
    EXPECT_EQ(WEXITSTATUS(end.status), 7);
    EXPECT_EQ(describe_exit(end.status), "exited with status 7");
    ASSERT_EQ(seen.size(), 3u);
    EXPECT_EQ(seen[0].at("event"), "ready");
    EXPECT_EQ(seen[1].at("text").get<std::string>(), long_text);
    // Text that is not UTF-8 is replaced, not lost with its message.
    EXPECT_EQ(seen[2].at("text").get<std::string>().substr(0, 11), "line\nbreak ");
}

TEST(FollowChild, AChildThatMissesItsDeadlineIsKilled)
{
    const auto start = std::chrono::steady_clock::now();
    int messages = 0;
    const ChildEnd end = follow_child(
        [](int fd) {
            write_event(fd, {{"event", "begin"}});
            pause_for(30);
            return 0;
        },
        5.0,
        [&](const json&) {
            ++messages;
            return std::optional<double>(0.3);
        });
    EXPECT_TRUE(end.timed_out);
    EXPECT_EQ(messages, 1);
    ASSERT_TRUE(WIFSIGNALED(end.status));
    EXPECT_EQ(WTERMSIG(end.status), SIGKILL);
    EXPECT_NE(describe_exit(end.status).find("killed by signal 9"), std::string::npos);
    EXPECT_LT(seconds_since(start), 5.0);

    // Before its first message, the first deadline holds.
    const ChildEnd silent = follow_child(
        [](int) {
            pause_for(30);
            return 0;
        },
        0.3, [](const json&) { return std::optional<double>(60.0); });
    EXPECT_TRUE(silent.timed_out);
}

TEST(FollowChild, EachMessageMovesTheDeadline)
{
    // Eight messages 0.1 s apart take longer than one deadline of 0.6 s, but none is late.
    int messages = 0;
    const ChildEnd end = follow_child(
        [](int fd) {
            for (int i = 0; i < 8; ++i) {
                write_event(fd, {{"event", "point"}, {"i", i}});
                pause_for(0.1);
            }
            return 0;
        },
        0.6,
        [&](const json& message) {
            EXPECT_EQ(message.at("i"), messages);
            ++messages;
            return std::optional<double>(0.6);
        });
    EXPECT_FALSE(end.timed_out);
    EXPECT_EQ(messages, 8);
    EXPECT_TRUE(WIFEXITED(end.status) && WEXITSTATUS(end.status) == 0);

    // A message that keeps the deadline does not extend it.
    const ChildEnd kept = follow_child(
        [](int fd) {
            for (int i = 0; i < 8; ++i) {
                write_event(fd, {{"event", "note"}});
                pause_for(0.1);
            }
            return 0;
        },
        0.6, [](const json&) { return std::nullopt; });
    EXPECT_TRUE(kept.timed_out);
}

TEST(FollowChild, ACrashOrAThrowIsTheChildsStatus)
{
    const ChildEnd crashed = follow_child(
        [](int fd) {
            write_event(fd, {{"event", "begin"}});
            std::raise(SIGSEGV);
            return 0;
        },
        5.0, [](const json&) { return std::nullopt; });
    EXPECT_FALSE(crashed.timed_out);
    ASSERT_TRUE(WIFSIGNALED(crashed.status));
    EXPECT_EQ(WTERMSIG(crashed.status), SIGSEGV);

    const ChildEnd thrown = follow_child([](int) -> int { throw std::runtime_error("no context"); }, 5.0,
                                         [](const json&) { return std::nullopt; });
    EXPECT_TRUE(WIFEXITED(thrown.status));
    EXPECT_EQ(WEXITSTATUS(thrown.status), 1);
}

TEST(FollowChild, AParentThatCannotFollowEndsTheChildAndSaysWhy)
{
    pid_t child = 0;
    const auto start = std::chrono::steady_clock::now();
    EXPECT_THROW(follow_child(
                     [](int fd) {
                         write_event(fd, {{"event", "pid"}, {"pid", ::getpid()}});
                         write_event(fd, {{"event", "begin"}});
                         pause_for(30);
                         return 0;
                     },
                     5.0,
                     [&](const json& message) -> std::optional<double> {
                         if (message.at("event") == "pid") child = message.at("pid").get<pid_t>();
                         if (message.at("event") == "begin") throw Error(ErrorKind::internal, "cannot follow");
                         return std::nullopt;
                     }),
                 Error);
    EXPECT_LT(seconds_since(start), 5.0);
    ASSERT_GT(child, 0);
    // Killed and reaped: no such process is left, not even a zombie.
    errno = 0;
    EXPECT_EQ(::kill(child, 0), -1);
    EXPECT_EQ(errno, ESRCH);
}

} // namespace child_process_test
