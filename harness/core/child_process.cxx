#include "harness/core/child_process.hxx"

#include "harness/core/error.hxx"
#include "harness/core/text.hxx"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <mutex>
#include <nlohmann/json.hpp>
#include <poll.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace harness {

std::pair<pid_t, int> fork_with_pipe(const std::string& what, const std::function<int(int fd)>& body, int thrown)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        throw Error(ErrorKind::environment, fmt::format("{}: pipe failed: {}", what, strerror(errno)));
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

namespace {

int wait_for(pid_t pid)
{
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
}

/// Reads `fd` to its end and closes it.
std::string read_to_end(int fd)
{
    std::string text;
    char chunk[65536];
    for (;;) {
        const ssize_t n = ::read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        text.append(chunk, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return text;
}

/// Variables that would point git at another repository, index or work tree than the one named.
bool is_repository_override(std::string_view entry)
{
    for (const char* name : {"GIT_DIR=", "GIT_WORK_TREE=", "GIT_INDEX_FILE=", "GIT_COMMON_DIR=", "GIT_PREFIX="})
        if (entry.starts_with(name)) return true;
    return false;
}

/// Closes a pair of pipe ends on every path out of run_program.
struct Pipe {
    int fd[2] = {-1, -1};
    ~Pipe()
    {
        for (int f : fd)
            if (f >= 0) ::close(f);
    }
    void close_end(int i)
    {
        if (fd[i] >= 0) ::close(fd[i]);
        fd[i] = -1;
    }
};

/// Reads both pipes until the child closes them (poll, so that neither fills and blocks the child).
void drain(int out_fd, int err_fd, std::string& out, std::string& err)
{
    pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
    std::string* sinks[2] = {&out, &err};
    int open = 2;
    char chunk[65536];
    while (open > 0) {
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || fds[i].revents == 0) continue;
            const ssize_t n = ::read(fds[i].fd, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                fds[i].fd = -1;
                --open;
                continue;
            }
            sinks[i]->append(chunk, static_cast<std::size_t>(n));
        }
    }
}

/// Throws the Error run_in_child throws for a child that ended with `status` without answering.
[[noreturn]] void child_failed(const std::string& what, int status)
{
    if (WIFSIGNALED(status))
        throw Error(ErrorKind::internal, fmt::format("{}: the child process was killed by signal {} ({})", what,
                                                     WTERMSIG(status), strsignal(WTERMSIG(status))));
    throw Error(ErrorKind::internal, fmt::format("{}: the child process failed", what));
}

/// The file descriptors open in this process.
std::vector<int> open_descriptors()
{
    std::vector<int> fds;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
        try {
            fds.push_back(std::stoi(entry.path().filename().string()));
        } catch (const std::exception&) {
        }
    }
    // The listing's own descriptor is closed by now; its number may be taken by the next open.
    std::erase_if(fds, [](int fd) { return ::fcntl(fd, F_GETFD) == -1; });
    return fds;
}

struct StayingChild {
    std::mutex mutex;
    pid_t pid = 0;
    pid_t parent = 0; ///< the process it stays for: a forked copy of that process must not end it
};

StayingChild& staying()
{
    static StayingChild child;
    return child;
}

void end_staying_child_locked(StayingChild& child)
{
    if (child.pid > 0 && child.parent == ::getpid()) {
        ::kill(child.pid, SIGKILL);
        wait_for(child.pid);
    }
    child.pid = 0;
}

/// The first byte a child answers with: whether it stays.
constexpr char stays_mark = 'S', ends_mark = 'E';

} // namespace

std::string run_in_staying_child(const std::string& what, const std::function<std::string(bool& stay)>& body)
{
    const pid_t parent = ::getpid();
    const auto [pid, answers] = fork_with_pipe(
        what,
        [&](int fd) {
            // What the parent had open is closed before the child idles, so that no pipe's end or
            // lock outlives the parent's own; what the body opened (the driver's devices) stays.
            const std::vector<int> inherited = open_descriptors();
            bool stay = false;
            std::string answer = body(stay);
            if (!stay) {
                write_all(fd, ends_mark + answer);
                return 0;
            }
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (::getppid() != parent) return 0;
            write_all(fd, stays_mark + answer);
            const int null = ::open("/dev/null", O_RDWR);
            for (const int f : inherited)
                if (f != null) {
                    if (f <= STDERR_FILENO && null >= 0)
                        ::dup2(null, f);
                    else
                        ::close(f);
                }
            if (null > STDERR_FILENO) ::close(null);
            for (;;) ::pause();
        },
        1);
    std::string answer = read_to_end(answers);
    if (answer.empty() || answer.front() != stays_mark) {
        const int status = wait_for(pid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || answer.empty()) child_failed(what, status);
        return answer.substr(1);
    }
    answer.erase(0, 1);
    StayingChild& child = staying();
    const std::lock_guard lock(child.mutex);
    end_staying_child_locked(child);
    child.pid = pid;
    child.parent = parent;
    static const bool registered = std::atexit([] { end_staying_child(); }) == 0;
    (void)registered;
    return answer;
}

int staying_child()
{
    StayingChild& child = staying();
    const std::lock_guard lock(child.mutex);
    return child.parent == ::getpid() ? child.pid : 0;
}

void end_staying_child()
{
    StayingChild& child = staying();
    const std::lock_guard lock(child.mutex);
    end_staying_child_locked(child);
}

ProgramOutput run_program(const std::vector<std::string>& argv, const std::filesystem::path& cwd, bool capture)
{
    if (argv.empty()) throw Error(ErrorKind::internal, "run_program: no program");
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::vector<char*> env;
    for (char** e = environ; e && *e; ++e)
        if (!is_repository_override(*e)) env.push_back(*e);
    env.push_back(nullptr);

    Pipe out, err;
    if (capture && (::pipe2(out.fd, O_CLOEXEC) != 0 || ::pipe2(err.fd, O_CLOEXEC) != 0))
        throw Error(ErrorKind::environment, fmt::format("{}: pipe failed: {}", argv[0], std::strerror(errno)));
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    if (capture) {
        posix_spawn_file_actions_adddup2(&actions, out.fd[1], STDOUT_FILENO);
        posix_spawn_file_actions_adddup2(&actions, err.fd[1], STDERR_FILENO);
    }
    if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
    pid_t pid = 0;
    std::fflush(nullptr);
    const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), env.data());
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0)
        throw Error(ErrorKind::environment,
                    fmt::format("cannot run {}: {}{}", escape_control_characters(argv[0]), std::strerror(spawned),
                                cwd.empty() ? "" : " (in " + cwd.string() + ")"));
    ProgramOutput result;
    if (capture) {
        out.close_end(1);
        err.close_end(1);
        drain(out.fd[0], err.fd[0], result.out, result.err);
    }
    const int status = wait_for(pid);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
}

std::string run_in_child(const std::string& what, const std::function<std::string()>& body)
{
    return run_in_staying_child(what, [&](bool&) { return body(); });
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
