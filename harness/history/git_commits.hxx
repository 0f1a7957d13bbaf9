#pragma once
// What the history asks git: a revision's full hash and date, and the first-parent order of a
// branch. Asked at record and query time, never stored as order, so a rebased or merged branch
// orders its runs by the history it has now.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace harness::history {

/// The full hash of `revision` in the repository at `repo`, or nullopt (no git, no repository,
/// no such commit).
std::optional<std::string> resolve_commit(const std::filesystem::path& repo, const std::string& revision);

/// The committer date of `commit` (ISO 8601), or nullopt.
std::optional<std::string> commit_date(const std::filesystem::path& repo, const std::string& commit);

/// `git rev-list --first-parent HEAD`, oldest first; empty when git cannot say.
std::vector<std::string> first_parent_order(const std::filesystem::path& repo);

/// Orders commits: position in `order` (full hashes, oldest first); a commit may be given by a
/// prefix of at least 7 digits. nullopt for a commit not in `order`.
class CommitOrder {
public:
    explicit CommitOrder(std::vector<std::string> order);
    std::optional<std::size_t> position(const std::string& commit) const;
    bool empty() const { return sorted_.empty(); }

private:
    std::vector<std::pair<std::string, std::size_t>> sorted_;
};

} // namespace harness::history
