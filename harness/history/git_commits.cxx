#include "harness/history/git_commits.hxx"

#include "harness/core/error.hxx"
#include "harness/core/git.hxx"

#include <algorithm>

namespace harness::history {

namespace {

/// The standard output of git run with `args` in `repo` (empty: this process's folder) when it
/// exits 0; nullopt when git is missing or fails: the history then does without git.
std::optional<std::string> git_answer(const std::filesystem::path& repo, const std::vector<std::string>& args)
{
    try {
        ProgramOutput r = run_git(repo.empty() ? std::filesystem::path(".") : repo, args);
        if (r.exit_code != 0) return std::nullopt;
        return std::move(r.out);
    } catch (const Error&) {
        return std::nullopt;
    }
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
    const auto out = git_answer(repo, {"rev-parse", "--verify", "--quiet", "--end-of-options", revision + "^{commit}"});
    if (!out) return std::nullopt;
    const std::string hash = first_line(*out);
    if (!is_hex(hash)) return std::nullopt;
    return hash;
}

std::optional<std::string> commit_date(const std::filesystem::path& repo, const std::string& commit)
{
    if (!is_hex(commit)) return std::nullopt;
    const auto out = git_answer(repo, {"show", "-s", "--format=%cI", commit});
    if (!out || out->empty()) return std::nullopt;
    return first_line(*out);
}

std::vector<std::string> first_parent_order(const std::filesystem::path& repo)
{
    const auto out = git_answer(repo, {"rev-list", "--first-parent", "--reverse", "HEAD"});
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
