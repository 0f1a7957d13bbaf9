#include "harness/pipeline/git_repository.hxx"

#include "harness/core/error.hxx"
#include "harness/core/git.hxx"
#include "harness/core/text.hxx"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <fstream>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace harness::pipeline {

namespace fs = std::filesystem;

namespace {

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

} // namespace

GitRepository GitRepository::containing(const fs::path& folder)
{
    ProgramOutput found;
    try {
        found = run_git(folder, {"rev-parse", "--show-toplevel"});
    } catch (const Error& e) {
        throw Error(ErrorKind::environment, fmt::format("git is needed to bisect: {}", e.what()));
    }
    const std::string top = without_line_end(found.out);
    if (found.exit_code != 0 || top.empty())
        throw Error(ErrorKind::environment,
                    fmt::format("{} is not inside a git work tree: {}", folder.string(), trim(found.err)));
    return GitRepository(fs::path(top));
}

std::string GitRepository::git(const std::vector<std::string>& args) const
{
    return git_output(top_, args);
}

std::optional<std::string> GitRepository::resolve_commit(const std::string& rev) const
{
    // A revision that starts with '-' would be read as an option, one that starts with '^' is a
    // negative revision and one with ".." a range: none names one commit. rev-parse prints
    // "^<hash>" for a negative one, which a later rev-list would refuse.
    if (rev.empty() || rev.starts_with('-') || rev.starts_with('^') || rev.find("..") != std::string::npos ||
        std::any_of(rev.begin(), rev.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f || c == ' '; }))
        return std::nullopt;
    const ProgramOutput r = run_git(top_, {"rev-parse", "--verify", "--quiet", "--end-of-options", rev + "^{commit}"});
    const std::string hash = without_line_end(r.out);
    const bool is_hash = (hash.size() == 40 || hash.size() == 64) &&
                         std::all_of(hash.begin(), hash.end(), [](char c) { return std::isxdigit(c) != 0; });
    if (r.exit_code != 0 || !is_hash) return std::nullopt;
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
    const ProgramOutput r = run_git(top_, {"cat-file", "-e", commit + ":" + path.generic_string()});
    return r.exit_code == 0;
}

std::string GitRepository::worktree_list() const
{
    return git({"worktree", "list", "--porcelain"});
}

namespace {

/// A step's worktree, as the signal handler needs it: argument vectors built before any signal,
/// so that the handler only forks and executes (async-signal-safe).
struct ActiveWorktree {
    std::vector<std::string> remove_args, prune_args, rm_args;
    std::vector<char*> remove_argv, prune_argv, rm_argv;
};
ActiveWorktree* active_worktree = nullptr;
struct sigaction previous_int, previous_term;

void run_and_wait(char* const* argv)
{
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::execvp(argv[0], argv);
        ::_exit(127);
    }
    if (pid > 0)
        while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
        }
}

/// SIGINT or SIGTERM during a step: the worktree is removed and unregistered, then the signal
/// ends the process as it would have.
void remove_worktree_on_signal(int signal)
{
    if (ActiveWorktree* w = active_worktree) {
        active_worktree = nullptr;
        run_and_wait(w->remove_argv.data());
        run_and_wait(w->rm_argv.data());
        run_and_wait(w->prune_argv.data());
    }
    ::sigaction(signal == SIGINT ? SIGINT : SIGTERM, signal == SIGINT ? &previous_int : &previous_term, nullptr);
    ::raise(signal);
}

std::vector<char*> argv_of(std::vector<std::string>& args)
{
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    return argv;
}

/// SIGINT and SIGTERM blocked for the object's lifetime; one that comes meanwhile is delivered
/// when the mask is restored.
class StopSignalsHeld {
public:
    StopSignalsHeld()
    {
        sigset_t stop_signals;
        sigemptyset(&stop_signals);
        sigaddset(&stop_signals, SIGINT);
        sigaddset(&stop_signals, SIGTERM);
        ::pthread_sigmask(SIG_BLOCK, &stop_signals, &before_);
    }
    ~StopSignalsHeld() { ::pthread_sigmask(SIG_SETMASK, &before_, nullptr); }
    StopSignalsHeld(const StopSignalsHeld&) = delete;
    StopSignalsHeld& operator=(const StopSignalsHeld&) = delete;

private:
    sigset_t before_;
};

/// The file in a step's scratch folder that names the process that made it.
constexpr const char* owner_file = "owner.pid";

/// The repository that registered the worktree at `tree`, from the `gitdir: <common>/worktrees/<id>`
/// line of its .git file; empty when that cannot be read.
fs::path registering_repository(const fs::path& tree)
{
    std::ifstream in(tree / ".git");
    std::string line;
    if (!std::getline(in, line) || !line.starts_with("gitdir: ")) return {};
    const fs::path worktree_dir = fs::path(line.substr(8)).lexically_normal();
    if (!worktree_dir.is_absolute() || worktree_dir.parent_path().filename() != "worktrees") return {};
    return worktree_dir.parent_path().parent_path();
}

/// Scratch folders of steps whose process is gone (killed before it could clean up), removed, and
/// their worktrees unregistered from the repository that added them (this one or another).
void remove_abandoned_worktrees(const fs::path& top)
{
    std::error_code ec;
    std::vector<fs::path> to_prune = {top};
    for (const auto& entry : fs::directory_iterator(fs::temp_directory_path(), ec)) {
        const std::string name = entry.path().filename().string();
        if (!name.starts_with("harness-bisect-")) continue;
        // Only this user's folders (a shared $TMPDIR holds other users' bisects too), never a link.
        struct stat st {};
        if (::lstat(entry.path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) continue;
        std::ifstream in(entry.path() / owner_file);
        long pid = 0;
        if (!(in >> pid) || pid <= 0) continue; // not ours to judge: made by an older version
        if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM) continue; // still running
        const fs::path repository = registering_repository(entry.path() / "tree");
        fs::remove_all(entry.path(), ec);
        if (!repository.empty() && std::find(to_prune.begin(), to_prune.end(), repository) == to_prune.end())
            to_prune.push_back(repository);
    }
    // Pruning forgets the worktrees whose folders are gone; it is cheap, and also catches a folder
    // that an earlier step removed before its repository could be pruned.
    run_git(top, {"worktree", "prune"});
    for (std::size_t i = 1; i < to_prune.size(); ++i)
        if (fs::is_directory(to_prune[i] / "worktrees", ec))
            run_git({}, {"--git-dir=" + to_prune[i].string(), "worktree", "prune"});
}

} // namespace

Worktree::Worktree(const GitRepository& repository, const std::string& commit) : repository_(repository)
{
    remove_abandoned_worktrees(repository_.top());
    {
        // From the folder's creation until the signal handler knows the worktree, SIGINT and SIGTERM
        // wait: one that came before would leave the folder, one while git adds the worktree would
        // leave it registered. git, started meanwhile, inherits the mask and finishes its work.
        const StopSignalsHeld held;
        std::string pattern = (fs::temp_directory_path() / "harness-bisect-XXXXXX").string();
        if (!::mkdtemp(pattern.data()))
            throw Error(ErrorKind::environment,
                        fmt::format("cannot create a temporary folder {}: {}", pattern, std::strerror(errno)));
        scratch_ = pattern;
        path_ = scratch_ / "tree";
        std::ofstream(scratch_ / owner_file) << ::getpid() << "\n";
        // run_git turns hooks off: a step must not run the repository's post-checkout hook.
        const ProgramOutput r =
            run_git(repository_.top(), {"worktree", "add", "--detach", "--quiet", path_.string(), commit});
        if (r.exit_code != 0) {
            std::error_code ec;
            fs::remove_all(scratch_, ec);
            run_git(repository_.top(), {"worktree", "prune"});
            throw Error(ErrorKind::environment,
                        fmt::format("git worktree add for commit {} failed: {}", commit.substr(0, 12), trim(r.err)));
        }
        register_for_signals();
    }
    try {
        add_submodules(commit);
    } catch (...) {
        remove();
        throw;
    }
}

void Worktree::register_for_signals()
{
    auto* w = new ActiveWorktree;
    const std::string top = repository_.top().string();
    w->remove_args = git_command(top, {"worktree", "remove", "--force", path_.string()});
    w->prune_args = git_command(top, {"worktree", "prune"});
    w->rm_args = {"rm", "-rf", scratch_.string()};
    w->remove_argv = argv_of(w->remove_args);
    w->prune_argv = argv_of(w->prune_args);
    w->rm_argv = argv_of(w->rm_args);
    registered_ = w;
    active_worktree = w;
    struct sigaction action {};
    action.sa_handler = remove_worktree_on_signal;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGINT, &action, &previous_int);
    ::sigaction(SIGTERM, &action, &previous_term);
}

void Worktree::add_submodules(const std::string& commit)
{
    // The commit's submodules, from the repositories this clone already has: each one's git folder
    // under .git/modules (or its checked-out folder). Only local file URLs are allowed, so a step
    // never reaches the network. The URLs are given on git's command line: a worktree shares the
    // clone's config, and writing them there would repoint the user's own submodules for good.
    std::error_code ec;
    if (!fs::exists(path_ / ".gitmodules", ec)) return;
    const ProgramOutput names =
        run_git(path_, {"config", "-f", ".gitmodules", "--get-regexp", "^submodule\\..*\\.path$"});
    const fs::path git_dir = fs::path(
        without_line_end(run_git(repository_.top(), {"rev-parse", "--path-format=absolute", "--git-common-dir"}).out));
    const auto shown = [](const std::string& text) { return escape_control_characters(text.substr(0, 200)); };
    const auto stays_below = [](const fs::path& relative) {
        if (relative.empty() || relative.is_absolute()) return false;
        for (const auto& part : relative)
            if (part == "..") return false;
        return true;
    };
    // Only the submodules the commit's tree holds (mode 160000): .gitmodules may name ones removed since.
    std::vector<std::string> gitlinks;
    const std::string staged = run_git(path_, {"ls-files", "--stage", "-z"}).out;
    for (std::size_t at = 0, end; at < staged.size(); at = end + 1) {
        end = std::min(staged.find('\0', at), staged.size());
        const std::string_view entry(staged.data() + at, end - at);
        if (entry.starts_with("160000 ") && entry.find('\t') != std::string_view::npos)
            gitlinks.emplace_back(entry.substr(entry.find('\t') + 1));
    }
    std::vector<std::string> update;
    for (const char* setting : {"protocol.allow=never", "protocol.file.allow=always"})
        update.insert(update.end(), {"-c", setting});
    for (const auto& line : lines_of(names.out)) {
        const std::size_t space = line.find(' ');
        if (space == std::string::npos) continue;
        const std::string key = line.substr(0, space); // submodule.<name>.path
        const std::string name = key.substr(10, key.size() - 10 - 5);
        const std::string path(trim(line.substr(space + 1)));
        if (std::find(gitlinks.begin(), gitlinks.end(), path) == gitlinks.end()) continue;
        // git refuses such names and paths itself; they must not pick a local folder first.
        if (!stays_below(name) || !stays_below(path) || name.find('=') != std::string::npos)
            throw Error(ErrorKind::bad_input, fmt::format("commit {}: .gitmodules names the submodule {} at {}, which "
                                                          "bisect cannot check out",
                                                          commit.substr(0, 12), shown(name), shown(path)));
        fs::path local = git_dir / "modules" / name;
        if (!fs::is_directory(local, ec)) local = repository_.top() / path;
        if (!fs::exists(local / ".git", ec) && !fs::exists(local / "HEAD", ec))
            throw Error(ErrorKind::environment,
                        fmt::format("commit {} uses the submodule {} ({}), which this clone has not checked out: run "
                                    "`git submodule update --init --recursive` first (a bisect step never fetches)",
                                    commit.substr(0, 12), shown(name), shown(path)));
        update.push_back("-c");
        update.push_back("submodule." + name + ".url=" + local.string());
    }
    for (const char* arg : {"submodule", "update", "--init", "--recursive", "--quiet"}) update.push_back(arg);
    const ProgramOutput r = run_git(path_, update);
    if (r.exit_code != 0)
        throw Error(ErrorKind::environment,
                    fmt::format("the submodules of commit {} cannot be checked out from this clone's copies (a bisect "
                                "step never fetches; `git submodule update --init --recursive` fetches what is "
                                "missing): {}",
                                commit.substr(0, 12), trim(r.err)));
}

Worktree::~Worktree()
{
    remove();
}

void Worktree::remove() noexcept
{
    if (!registered_) return;
    // A signal that comes while the worktree is removed waits until it is gone, then ends the
    // process as it would have (the handler is restored first).
    const StopSignalsHeld held;
    if (active_worktree == registered_) {
        active_worktree = nullptr;
        ::sigaction(SIGINT, &previous_int, nullptr);
        ::sigaction(SIGTERM, &previous_term, nullptr);
    }
    // Never throws: this runs while an error unwinds too. What git cannot remove, prune forgets.
    try {
        run_git(repository_.top(), {"worktree", "remove", "--force", path_.string()});
        std::error_code ec;
        fs::remove_all(scratch_, ec);
        run_git(repository_.top(), {"worktree", "prune"});
    } catch (...) {
        std::error_code ec;
        fs::remove_all(scratch_, ec);
    }
    delete static_cast<ActiveWorktree*>(registered_);
    registered_ = nullptr;
}

fs::path path_in_repository(const fs::path& file, const GitRepository& repository)
{
    std::error_code ec;
    fs::path path = file;
    if (fs::is_regular_file(file, ec)) {
        const fs::path given = fs::absolute(file, ec);
        const fs::path top = fs::weakly_canonical(repository.top(), ec);
        path = fs::weakly_canonical(given.parent_path(), ec).lexically_relative(top) / given.filename();
    }
    path = path.lexically_normal();
    if (path.is_absolute() || path.empty() || *path.begin() == "..")
        throw Error(ErrorKind::bad_input,
                    fmt::format("{}: not inside the git repository at {}", file.string(), repository.top().string()));
    return path;
}

std::string in_commit(std::string text, const fs::path& tree)
{
    const std::string prefix = tree.string() + "/";
    for (auto at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at))
        text.erase(at, prefix.size());
    return text;
}

fs::path working_folder_in(const fs::path& tree, const fs::path& top)
{
    std::error_code ec;
    const fs::path here = fs::weakly_canonical(fs::current_path(ec), ec);
    const fs::path relative = here.lexically_relative(fs::weakly_canonical(top, ec));
    if (ec || relative.empty() || *relative.begin() == "..") return tree;
    return relative == "." ? tree : tree / relative;
}

} // namespace harness::pipeline
