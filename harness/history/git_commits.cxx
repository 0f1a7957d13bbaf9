#include "harness/history/git_commits.hxx"

#include <algorithm>
#include <array>
#include <cerrno>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace harness::history {

namespace {

/// The standard output of `git -C repo args...` when it exits 0; its arguments go to git as they
/// are, never through a shell.
std::optional<std::string> git_output(const std::filesystem::path& repo, std::vector<std::string> args)
{
    args.insert(args.begin(), {"git", "-C", repo.empty() ? std::string(".") : repo.string()});
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) return std::nullopt;
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::close(out[0]);
        ::close(out[1]);
        return std::nullopt;
    }
    if (pid == 0) {
        const int null = ::open("/dev/null", O_RDWR);
        ::dup2(null, 0);
        ::dup2(out[1], 1);
        ::dup2(null, 2);
        ::execvp("git", argv.data());
        ::_exit(127);
    }
    ::close(out[1]);
    std::string text;
    std::array<char, 65536> buffer;
    for (;;) {
        const ssize_t n = ::read(out[0], buffer.data(), buffer.size());
        if (n > 0)
            text.append(buffer.data(), static_cast<std::size_t>(n));
        else if (n == 0 || errno != EINTR)
            break;
    }
    ::close(out[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
    return text;
}

std::string first_line(const std::string& text)
{
    return text.substr(0, text.find('\n'));
}

bool is_hex(const std::string& s)
{
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

} // namespace

std::optional<std::string> resolve_commit(const std::filesystem::path& repo, const std::string& revision)
{
    // "--end-of-options" keeps a revision that starts with '-' from being read as an option.
    const auto out = git_output(repo, {"rev-parse", "--verify", "--quiet", "--end-of-options", revision + "^{commit}"});
    if (!out) return std::nullopt;
    const std::string hash = first_line(*out);
    if (!is_hex(hash)) return std::nullopt;
    return hash;
}

std::optional<std::string> commit_date(const std::filesystem::path& repo, const std::string& commit)
{
    if (!is_hex(commit)) return std::nullopt;
    const auto out = git_output(repo, {"show", "-s", "--format=%cI", commit});
    if (!out || out->empty()) return std::nullopt;
    return first_line(*out);
}

std::vector<std::string> first_parent_order(const std::filesystem::path& repo)
{
    const auto out = git_output(repo, {"rev-list", "--first-parent", "--reverse", "HEAD"});
    std::vector<std::string> order;
    if (!out) return order;
    for (std::size_t at = 0; at < out->size();) {
        const std::size_t end = std::min(out->find('\n', at), out->size());
        if (end > at) order.push_back(out->substr(at, end - at));
        at = end + 1;
    }
    return order;
}

CommitOrder::CommitOrder(std::vector<std::string> order)
{
    for (std::size_t i = 0; i < order.size(); ++i) sorted_.emplace_back(std::move(order[i]), i);
    std::sort(sorted_.begin(), sorted_.end());
}

std::optional<std::size_t> CommitOrder::position(const std::string& commit) const
{
    if (commit.size() < 7 || !is_hex(commit)) return std::nullopt;
    const auto it = std::lower_bound(sorted_.begin(), sorted_.end(), std::pair<std::string, std::size_t>{commit, 0});
    if (it == sorted_.end() || !it->first.starts_with(commit)) return std::nullopt;
    // An ambiguous prefix names no commit.
    if (it->first != commit && std::next(it) != sorted_.end() && std::next(it)->first.starts_with(commit))
        return std::nullopt;
    return it->second;
}

} // namespace harness::history
