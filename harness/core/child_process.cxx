#include "harness/core/child_process.hxx"

#include "harness/core/error.hxx"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

namespace harness {

std::string run_in_child(const std::string& what, const std::function<std::string()>& body)
{
    int fds[2];
    if (pipe(fds) != 0) throw Error(ErrorKind::environment, fmt::format("{}: pipe failed: {}", what, strerror(errno)));
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) throw Error(ErrorKind::environment, fmt::format("{}: fork failed: {}", what, strerror(errno)));
    if (pid == 0) {
        ::close(fds[0]);
        int code = 0;
        try {
            const std::string answer = body();
            std::size_t done = 0;
            while (done < answer.size()) {
                const ssize_t n = ::write(fds[1], answer.data() + done, answer.size() - done);
                if (n < 0 && errno == EINTR) continue;
                if (n <= 0) break;
                done += static_cast<std::size_t>(n);
            }
        } catch (...) {
            code = 1;
        }
        ::_exit(code);
    }
    ::close(fds[1]);
    std::string answer;
    char chunk[65536];
    for (;;) {
        const ssize_t n = ::read(fds[0], chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        answer.append(chunk, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(status))
        throw Error(ErrorKind::internal, fmt::format("{}: the child process was killed by signal {} ({})", what,
                                                     WTERMSIG(status), strsignal(WTERMSIG(status))));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        throw Error(ErrorKind::internal, fmt::format("{}: the child process failed", what));
    return answer;
}

} // namespace harness
