#include "harness/pipeline/git_repository.hxx"

#include "harness/core/error.hxx"
#include "harness/core/text.hxx"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace harness::pipeline {

namespace fs = std::filesystem;

namespace {

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

/// The lines of `text`, without their line breaks.
std::vector<std::string> lines_of(const std::string& text)
{
    std::vector<std::string> lines;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(start, end - start);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        lines.push_back(std::move(line));
        start = end + 1;
    }
    return lines;
}

std::string trim_line_end(std::string text)
{
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    return text;
}

} // namespace

ProgramOutput run_program(const std::vector<std::string>& argv, const fs::path& cwd, bool capture)
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
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
}

GitRepository GitRepository::containing(const fs::path& folder)
{
    ProgramOutput found;
    try {
        found = run_program({"git", "-C", folder.string(), "rev-parse", "--show-toplevel"});
    } catch (const Error& e) {
        throw Error(ErrorKind::environment, fmt::format("git is needed to bisect: {}", e.what()));
    }
    const std::string top = trim_line_end(found.out);
    if (found.exit_code != 0 || top.empty())
        throw Error(ErrorKind::environment,
                    fmt::format("{} is not inside a git work tree: {}", folder.string(), trim(found.err)));
    return GitRepository(fs::path(top));
}

std::string GitRepository::git(const std::vector<std::string>& args) const
{
    std::vector<std::string> argv = {"git", "-C", top_.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    const ProgramOutput r = run_program(argv);
    if (r.exit_code != 0)
        throw Error(ErrorKind::environment, fmt::format("git {} failed: {}", join(args, " "), trim(r.err)));
    return r.out;
}

std::optional<std::string> GitRepository::resolve_commit(const std::string& rev) const
{
    // A revision that starts with '-' would be read as an option; none names a commit.
    if (rev.empty() || rev.starts_with('-')) return std::nullopt;
    const ProgramOutput r = run_program(
        {"git", "-C", top_.string(), "rev-parse", "--verify", "--quiet", "--end-of-options", rev + "^{commit}"});
    const std::string hash = trim_line_end(r.out);
    if (r.exit_code != 0 || hash.empty()) return std::nullopt;
    return hash;
}

std::vector<std::string> GitRepository::first_parent_range(const std::string& good, const std::string& bad) const
{
    std::vector<std::string> commits;
    for (const auto& line : lines_of(git({"rev-list", "--first-parent", "--reverse", good + ".." + bad})))
        if (!trim(line).empty()) commits.emplace_back(trim(line));
    return commits;
}

CommitInfo GitRepository::describe(const std::string& commit) const
{
    const std::string text = git({"log", "-1", "--no-show-signature", "--format=%H%n%aI%n%s", commit, "--"});
    const auto lines = lines_of(text);
    CommitInfo info;
    info.hash = lines.size() > 0 ? lines[0] : commit;
    info.author_date = lines.size() > 1 ? lines[1] : "";
    info.subject = lines.size() > 2 ? lines[2] : "";
    return info;
}

bool GitRepository::has_file(const std::string& commit, const fs::path& path) const
{
    const ProgramOutput r =
        run_program({"git", "-C", top_.string(), "cat-file", "-e", commit + ":" + path.generic_string()});
    return r.exit_code == 0;
}

std::string GitRepository::worktree_list() const
{
    return git({"worktree", "list", "--porcelain"});
}

Worktree::Worktree(const GitRepository& repository, const std::string& commit) : repository_(repository)
{
    std::string pattern = (fs::temp_directory_path() / "harness-bisect-XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
        throw Error(ErrorKind::environment,
                    fmt::format("cannot create a temporary folder {}: {}", pattern, std::strerror(errno)));
    scratch_ = pattern;
    path_ = scratch_ / "tree";
    const ProgramOutput r = run_program(
        {"git", "-C", repository_.top().string(), "worktree", "add", "--detach", "--quiet", path_.string(), commit});
    if (r.exit_code != 0) {
        std::error_code ec;
        fs::remove_all(scratch_, ec);
        run_program({"git", "-C", repository_.top().string(), "worktree", "prune"});
        throw Error(ErrorKind::environment,
                    fmt::format("git worktree add for commit {} failed: {}", commit.substr(0, 12), trim(r.err)));
    }
}

Worktree::~Worktree()
{
    // Never throws: this runs while an error unwinds too. What git cannot remove, prune forgets.
    try {
        run_program({"git", "-C", repository_.top().string(), "worktree", "remove", "--force", path_.string()});
        std::error_code ec;
        fs::remove_all(scratch_, ec);
        run_program({"git", "-C", repository_.top().string(), "worktree", "prune"});
    } catch (...) {
        std::error_code ec;
        fs::remove_all(scratch_, ec);
    }
}

} // namespace harness::pipeline
