#pragma once
// A git repository seen from the outside: git runs as core/git runs it (an argument vector, no
// shell, so a revision a user typed is never interpreted), and commits are materialised in
// temporary worktrees that leave the user's work tree and index alone.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace harness::pipeline {

/// One commit's identity, as a report names it.
struct CommitInfo {
    std::string hash;        ///< the full object name
    std::string subject;     ///< the first line of its message
    std::string author_date; ///< ISO 8601, as `git log --format=%aI` prints it
};

/// The git repository that holds a folder.
class GitRepository {
public:
    /// The repository whose work tree holds `folder`; throws Error(environment) when git is missing or
    /// `folder` is not inside a work tree.
    static GitRepository containing(const std::filesystem::path& folder);

    /// The top of the work tree (absolute).
    const std::filesystem::path& top() const { return top_; }

    /// The full hash of the commit `rev` names, or nullopt when it names none. `rev` is checked by
    /// `git rev-parse --verify --quiet REV^{commit}`; a revision starting with '-' names none.
    std::optional<std::string> resolve_commit(const std::string& rev) const;

    /// The first-parent commits after `good` up to and including `bad`, oldest first.
    std::vector<std::string> first_parent_range(const std::string& good, const std::string& bad) const;

    /// Hash, subject and author date of `commit`.
    CommitInfo describe(const std::string& commit) const;

    /// Whether `commit` holds a file at `path` (relative to the top of the tree).
    bool has_file(const std::string& commit, const std::filesystem::path& path) const;

    /// Runs git in the repository with `args`; throws Error(environment) when git fails.
    std::string git(const std::vector<std::string>& args) const;

    /// The output of `git worktree list --porcelain`.
    std::string worktree_list() const;

private:
    explicit GitRepository(std::filesystem::path top) : top_(std::move(top)) {}
    std::filesystem::path top_;
};

/// A commit checked out, detached, in a temporary folder by `git worktree add`; removed with
/// `git worktree remove --force` and `git worktree prune` when it goes out of scope, also when an
/// error unwinds the stack.
class Worktree {
public:
    /// Throws Error(environment) when git cannot add the worktree.
    Worktree(const GitRepository& repository, const std::string& commit);
    ~Worktree();
    Worktree(const Worktree&) = delete;
    Worktree& operator=(const Worktree&) = delete;

    /// The checked-out tree.
    const std::filesystem::path& path() const { return path_; }

private:
    /// Removes the worktree if SIGINT or SIGTERM ends the process while it exists.
    void register_for_signals();
    /// Checks out the commit's submodules from the clone's own copies, never from the network.
    void add_submodules(const std::string& commit);
    /// Unregisters, removes the worktree and its folder; never throws.
    void remove() noexcept;

    const GitRepository& repository_;
    std::filesystem::path scratch_; ///< the temporary folder that holds `path_` (and the owner's pid)
    std::filesystem::path path_;
    void* registered_ = nullptr; ///< what the signal handler removes
};

/// A file's path inside `repository` (a suite's), from the path given: relative to the repository's top when the
/// file exists here, else taken as such. Throws Error(bad_input) when it leads outside the repository.
std::filesystem::path path_in_repository(const std::filesystem::path& file, const GitRepository& repository);

/// `text` with the folder `tree` (a worktree) taken out of the paths it names: a message names files as the commit
/// has them, not where the worktree lies.
std::string in_commit(std::string text, const std::filesystem::path& tree);

/// The folder of `tree` (a worktree of the repository whose top is `top`) that stands where the working folder
/// stands in the checkout, or `tree` itself when the working folder lies outside the repository: what a relative
/// module folder (`SGEMM_BUILD_DIR=build`) names at that commit.
std::filesystem::path working_folder_in(const std::filesystem::path& tree, const std::filesystem::path& top);

} // namespace harness::pipeline
