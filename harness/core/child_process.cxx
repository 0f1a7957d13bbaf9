#include "harness/core/child_process.hxx"

#include "harness/core/error.hxx"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace harness {

namespace {

int wait_for(pid_t pid)
{
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
}

/// Forks a child that runs `body` with the pipe's write end and exits with `body`'s value (or
/// `thrown` when it throws); returns its pid and the pipe's read end.
std::pair<pid_t, int> fork_with_pipe(const std::string& what, const std::function<int(int fd)>& body, int thrown)
{
    int fds[2];
    if (pipe(fds) != 0) throw Error(ErrorKind::environment, fmt::format("{}: pipe failed: {}", what, strerror(errno)));
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) {
        const int error = errno;
        ::close(fds[0]);
        ::close(fds[1]);
        throw Error(ErrorKind::environment, fmt::format("{}: fork failed: {}", what, strerror(error)));
    }
    if (pid == 0) {
        ::close(fds[0]);
        int code = thrown;
        try {
            code = body(fds[1]);
        } catch (...) {
        }
        ::_exit(code);
    }
    ::close(fds[1]);
    return {pid, fds[0]};
}

} // namespace

std::string run_in_child(const std::string& what, const std::function<std::string()>& body)
{
    const auto [pid, answers] = fork_with_pipe(
        what,
        [&](int fd) {
            write_all(fd, body());
            return 0;
        },
        1);
    std::string answer;
    char chunk[65536];
    for (;;) {
        const ssize_t n = ::read(answers, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        answer.append(chunk, static_cast<std::size_t>(n));
    }
    ::close(answers);
    const int status = wait_for(pid);
    if (WIFSIGNALED(status))
        throw Error(ErrorKind::internal, fmt::format("{}: the child process was killed by signal {} ({})", what,
                                                     WTERMSIG(status), strsignal(WTERMSIG(status))));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        throw Error(ErrorKind::internal, fmt::format("{}: the child process failed", what));
    return answer;
}

void write_all(int fd, const std::string& bytes)
{
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        done += static_cast<std::size_t>(n);
    }
}

std::string describe_exit(int status)
{
    if (WIFSIGNALED(status))
        return fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
    if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
    return "ended";
}

void write_event(int fd, const nlohmann::json& message)
{
    write_all(fd, message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

ChildEnd follow_child(const std::function<int(int fd)>& body, double first_deadline_s,
                      const std::function<std::optional<double>(const nlohmann::json&)>& on_message)
{
    using Clock = std::chrono::steady_clock;
    const auto after = [](double seconds) {
        return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    };
    const auto [pid, events] = fork_with_pipe("worker", body, 1);
    ChildEnd end;
    auto deadline = after(first_deadline_s);
    std::string buffer;
    try {
        for (;;) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
            if (left <= 0) {
                end.timed_out = true;
                break;
            }
            pollfd p{events, POLLIN, 0};
            const int ready = poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
            if (ready <= 0) continue; // a signal, or a second without news: check the deadline
            char chunk[65536];
            const ssize_t n = ::read(events, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break; // the child has exited
            buffer.append(chunk, static_cast<std::size_t>(n));
            for (std::size_t nl; (nl = buffer.find('\n')) != std::string::npos;) {
                const auto message = nlohmann::json::parse(buffer.substr(0, nl));
                buffer.erase(0, nl + 1);
                if (const auto next = on_message(message)) deadline = after(*next);
            }
        }
    } catch (...) {
        // The parent cannot follow the child any further: end it rather than leave it running.
        ::kill(pid, SIGKILL);
        ::close(events);
        wait_for(pid);
        throw;
    }
    if (end.timed_out) ::kill(pid, SIGKILL);
    ::close(events);
    end.status = wait_for(pid);
    return end;
}

} // namespace harness
