// Bisect, the history store and summary.md against hostile repositories, revisions, stores and
// results: a bisect step checks out the commit's submodules from the clone's own copies and leaves
// the clone's config alone; a revision that names no single commit is bad input; SIGINT and SIGTERM
// leave no worktree, and what SIGKILL left is removed by the next bisect; equal ends are "not found";
// the history page links recorded paths as paths; a crafted index is rebuilt; stale temporary run
// files go; summary.md shows results text as text.

#include "harness/cli/commands.hxx"
#include "harness/core/run_report.hxx"
#include "harness/history/history_store.hxx"
#include "harness/history/run_record.hxx"
#include "harness/pipeline/git_repository.hxx"
#include "harness/report/reporters.hxx"
#include "scratch_repository.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"
#include "tool_output.hxx"

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <optional>
#include <sqlite3.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace hostile_history_bisect_test {

using namespace harness;
namespace fs = std::filesystem;

namespace {

/// A repository holding the walk suite whose commit 0 adds it and commits 1..`commits` edit the
/// kernel, the commits from `cliff_from` up to (not including) `cliff_until` with 40 registers.
/// Returns every commit's hash, 0 first.
std::vector<std::string> make_history(const fs::path& repo, int commits, int cliff_from, int cliff_until = 1000,
                                      const std::string& prefix = "")
{
    fs::create_directories(repo);
    if (!fs::exists(repo / ".git")) git(repo, {"init", "-q"});
    write_file(repo / "suites" / "walk.yaml", walk_suite_text);
    std::vector<std::string> hashes;
    for (int k = 0; k <= commits; ++k) {
        const bool cliff = k >= cliff_from && k < cliff_until;
        write_file(repo / "kernels" / "register_cliff.cu",
                   prefix + kernel_text(cliff ? 6 : 8, fmt::format("revision {}", k)));
        git(repo, {"add", "-A"});
        git(repo, {"commit", "-q", "-m", k == cliff_from ? "the register change" : fmt::format("edit {}", k)});
        hashes.push_back(git(repo, {"rev-parse", "HEAD"}));
    }
    return hashes;
}

std::vector<std::string> bisect_args(const fs::path& repo, const std::string& good, const std::string& bad,
                                     const fs::path& json = {})
{
    std::vector<std::string> args = {"bisect", "--good", good,     "--bad", bad,         "--static",
                                     "--arch", "sm_90",  "--case", "walk",  "N=1048576", "--no-cache"};
    if (!json.empty()) {
        args.push_back("--json");
        args.push_back(json.string());
    }
    args.push_back((repo / "suites" / "walk.yaml").string());
    return args;
}

/// Worktrees git knows of, the main one included.
int worktree_count(const fs::path& repo)
{
    const std::string list = git(repo, {"worktree", "list", "--porcelain"});
    int count = 0;
    for (std::size_t at = 0; (at = list.find("worktree ", at)) != std::string::npos; at += 9)
        if (at == 0 || list[at - 1] == '\n') ++count;
    return count;
}

/// The step folders (harness-bisect-*) in `tmp`.
std::vector<fs::path> step_folders(const fs::path& tmp)
{
    std::vector<fs::path> found;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(tmp, ec))
        if (entry.path().filename().string().starts_with("harness-bisect-")) found.push_back(entry.path());
    return found;
}

/// `$TMPDIR` set for the object's lifetime (the folder steps are made in), then restored.
class TemporaryFolderSetting {
public:
    explicit TemporaryFolderSetting(const fs::path& folder)
    {
        if (const char* was = std::getenv("TMPDIR")) before_ = was;
        ::setenv("TMPDIR", folder.c_str(), 1);
    }
    ~TemporaryFolderSetting()
    {
        if (before_)
            ::setenv("TMPDIR", before_->c_str(), 1);
        else
            ::unsetenv("TMPDIR");
    }

private:
    std::optional<std::string> before_;
};

/// `harness ARGS` in a child process with $TMPDIR at `tmp` and its output discarded.
pid_t start_tool(const std::vector<std::string>& args, const fs::path& tmp)
{
    const pid_t child = ::fork();
    if (child == 0) {
        ::setenv("TMPDIR", tmp.c_str(), 1);
        const int null = ::open("/dev/null", O_WRONLY);
        ::dup2(null, STDOUT_FILENO);
        ::dup2(null, STDERR_FILENO);
        ::_exit(cli::run_tool(args));
    }
    return child;
}

/// Waits (at most two minutes) until `ready` holds or the child ended; true when `ready` held.
template <typename Ready> bool wait_for(pid_t child, Ready ready)
{
    const auto until = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    while (std::chrono::steady_clock::now() < until) {
        if (ready()) return true;
        int status = 0;
        if (::waitpid(child, &status, WNOHANG) == child) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
}

/// A hook that leaves a mark whenever git checks out in the repository.
void install_marking_hook(const fs::path& repo, const fs::path& mark)
{
    const fs::path hook = repo / ".git" / "hooks" / "post-checkout";
    write_file(hook, "#!/bin/sh\ntouch '" + mark.string() + "'\n");
    fs::permissions(hook, fs::perms::owner_all);
}

history::RunRecord record_of(const std::string& commit, const std::string& date, double registers)
{
    history::RunRecord r;
    r.suite = "memory";
    r.commit = commit;
    r.commit_date = r.timestamp = date;
    r.mode = RunMode::static_tier;
    r.arch = "sm_90";
    history::CaseFigures c;
    c.variant = "copy";
    c.params = "N=1024";
    c.arch = "sm_90";
    c.status = CaseStatus::passed;
    c.figures = {{"registers", registers}};
    c.time = history::summarize_time({1.0, 2.0, 3.0, 4.0, 5.0});
    r.cases.push_back(c);
    return r;
}

/// Runs SQL on a store's index.
void edit_index(const fs::path& store, const std::string& sql)
{
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((store / "index.sqlite").c_str(), &db), SQLITE_OK);
    char* message = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message), SQLITE_OK) << (message ? message : "");
    sqlite3_free(message);
    sqlite3_close(db);
}

/// Sets the sample count of every time summary in a store's index to `samples` (the third f64).
void set_sample_counts(const fs::path& store, double samples)
{
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((store / "index.sqlite").c_str(), &db), SQLITE_OK);
    std::vector<std::pair<std::string, std::string>> edits; // rowid-less table: keyed by run and position
    sqlite3_stmt* read = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT run_id || ' ' || position, time FROM run_cases", -1, &read, nullptr),
              SQLITE_OK);
    while (sqlite3_step(read) == SQLITE_ROW) {
        std::string blob(static_cast<const char*>(sqlite3_column_blob(read, 1)),
                         static_cast<std::size_t>(sqlite3_column_bytes(read, 1)));
        EXPECT_GE(blob.size(), 3 * sizeof(double));
        if (blob.size() >= 3 * sizeof(double)) std::memcpy(blob.data() + 2 * sizeof(double), &samples, sizeof samples);
        edits.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(read, 0)), blob);
    }
    sqlite3_finalize(read);
    ASSERT_FALSE(edits.empty());
    sqlite3_stmt* write = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, "UPDATE run_cases SET time = ? WHERE run_id || ' ' || position = ?", -1, &write,
                                 nullptr),
              SQLITE_OK);
    for (const auto& [key, blob] : edits) {
        sqlite3_bind_blob(write, 1, blob.data(), static_cast<int>(blob.size()), SQLITE_TRANSIENT);
        sqlite3_bind_text(write, 2, key.c_str(), -1, SQLITE_TRANSIENT);
        EXPECT_EQ(sqlite3_step(write), SQLITE_DONE);
        sqlite3_reset(write);
    }
    sqlite3_finalize(write);
    sqlite3_close(db);
}

} // namespace

TEST(HostileBisect, StepsCheckOutSubmodulesFromTheCloneAndLeaveItsConfigAlone)
{
    TempDir dir("harness-hostile-bisect");
    // A vendored library in a repository of its own, a submodule of the project: the kernel needs
    // its header, so a step without the submodule compiles nothing.
    const fs::path library = dir.path / "library";
    make_header_library(library, "walk_config.h", "#define WALK_CONFIGURED 1\n");
    const fs::path repo = dir.path / "repo";
    fs::create_directories(repo);
    git(repo, {"init", "-q"});
    git(repo, {"submodule", "add", "-q", library.string(), "third_party/library"});
    const auto hashes = make_history(repo, 5, 3, 1000,
                                     "#include \"../third_party/library/walk_config.h\"\n"
                                     "#if !WALK_CONFIGURED\n#error the library's header is missing\n#endif\n");
    const std::string config_before = read_file(repo / ".git" / "config");

    const auto run = run_tool_captured(bisect_args(repo, hashes.front(), "HEAD", dir.path / "bisect.json"));
    ASSERT_EQ(run.code, 0) << run.err;
    const auto result = nlohmann::json::parse(read_file(dir.path / "bisect.json"));
    EXPECT_EQ(result["first"]["hash"], hashes[3]);
    // The clone's own submodule still points where it did: the steps' URLs were never written.
    EXPECT_EQ(read_file(repo / ".git" / "config"), config_before);
    EXPECT_EQ(git(repo, {"config", "--get", "submodule.third_party/library.url"}), library.string());
    EXPECT_EQ(worktree_count(repo), 1);

    // Without a local copy of the submodule the bisect stops and says what to do; it never fetches.
    git(repo, {"submodule", "deinit", "-q", "-f", "third_party/library"});
    fs::remove_all(repo / ".git" / "modules");
    const auto missing = run_tool_captured(bisect_args(repo, hashes.front(), "HEAD"));
    EXPECT_EQ(missing.code, 3) << missing.err;
    EXPECT_NE(missing.err.find("git submodule update --init"), std::string::npos) << missing.err;
    EXPECT_EQ(worktree_count(repo), 1);
}

TEST(HostileBisect, ARevisionThatNamesNoSingleCommitIsBadInputNamingTheOption)
{
    TempDir dir("harness-hostile-bisect");
    const fs::path repo = dir.path / "repo";
    const auto hashes = make_history(repo, 2, 2);
    const std::string good = hashes.front();
    for (const std::string& bad : std::vector<std::string>{"^HEAD", "HEAD^!", "HEAD^@", good + "...HEAD",
                                                           good + "..HEAD", "HEAD^{tree}", "--all"}) {
        const auto run = run_tool_captured(bisect_args(repo, good, bad));
        EXPECT_EQ(run.code, 2) << bad << ": " << run.err;
        EXPECT_NE(run.err.find("--bad"), std::string::npos) << bad << ": " << run.err;
    }
    const auto negative_good = run_tool_captured(bisect_args(repo, "^" + good, "HEAD"));
    EXPECT_EQ(negative_good.code, 2) << negative_good.err;
    EXPECT_NE(negative_good.err.find("--good ^"), std::string::npos) << negative_good.err;
}

TEST(HostileBisect, SigintAndSigtermRemoveTheStepsWorktreeAndNoHookRuns)
{
    TempDir dir("harness-hostile-bisect");
    const fs::path repo = dir.path / "repo", tmp = dir.path / "tmp";
    fs::create_directories(tmp);
    const auto hashes = make_history(repo, 8, 6);
    const fs::path mark = dir.path / "hook-ran";
    install_marking_hook(repo, mark);
    for (const int signal : {SIGINT, SIGTERM}) {
        for (const bool registered : {false, true}) {
            const pid_t child = start_tool(bisect_args(repo, hashes.front(), "HEAD"), tmp);
            // As soon as a step's folder exists (git may still be adding the worktree), or once the
            // worktree is registered and checked out (the step compiles).
            const bool caught = wait_for(child, [&] {
                for (const auto& folder : step_folders(tmp))
                    if (!registered || fs::exists(folder / "tree" / "suites" / "walk.yaml")) return true;
                return false;
            });
            ASSERT_TRUE(caught) << "no step folder appeared";
            ::kill(child, signal);
            int status = 0;
            ASSERT_EQ(::waitpid(child, &status, 0), child);
            EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == signal)
                << "signal " << signal << ", status " << status;
            EXPECT_EQ(worktree_count(repo), 1) << "signal " << signal << (registered ? ", registered" : "");
            EXPECT_TRUE(step_folders(tmp).empty()) << "signal " << signal << (registered ? ", registered" : "");
        }
    }
    EXPECT_FALSE(fs::exists(mark)) << "a step ran the repository's post-checkout hook";
}

TEST(HostileBisect, WhatAKilledBisectLeftIsRemovedByTheNextOneInAnyRepository)
{
    TempDir dir("harness-hostile-bisect");
    const fs::path repo = dir.path / "repo", other = dir.path / "other", tmp = dir.path / "tmp";
    fs::create_directories(tmp);
    const auto hashes = make_history(repo, 8, 6);
    // Killed outright once a step's worktree is checked out: nothing can clean up. The step may
    // have ended just before the kill; then it is tried again.
    bool left = false;
    for (int attempt = 0; attempt < 5 && !left; ++attempt) {
        const pid_t child = start_tool(bisect_args(repo, hashes.front(), "HEAD"), tmp);
        ASSERT_TRUE(wait_for(child, [&] {
            for (const auto& folder : step_folders(tmp))
                if (fs::exists(folder / "tree" / "suites" / "walk.yaml")) return true;
            return false;
        }));
        ::kill(child, SIGKILL);
        ASSERT_EQ(::waitpid(child, nullptr, 0), child);
        // A git the bisect had started finishes on its own.
        std::string before;
        for (std::string now = git(repo, {"worktree", "list", "--porcelain"}); now != before;
             now = git(repo, {"worktree", "list", "--porcelain"})) {
            before = now;
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
        }
        left = !step_folders(tmp).empty() && worktree_count(repo) > 1;
    }
    ASSERT_TRUE(left) << "no kill left a registered worktree behind";

    // The next bisect, in another repository, removes the folder and unregisters it where it was added.
    const auto other_hashes = make_history(other, 1, 1);
    const TemporaryFolderSetting setting(tmp);
    const auto run = run_tool_captured(bisect_args(other, other_hashes.front(), "HEAD"));
    EXPECT_EQ(run.code, 0) << run.err;
    EXPECT_TRUE(step_folders(tmp).empty());
    EXPECT_EQ(worktree_count(repo), 1);
    EXPECT_EQ(worktree_count(other), 1);
}

TEST(HostileBisect, EqualEndsAreNotFoundEvenWithAChangeAndItsRevertBetween)
{
    TempDir dir("harness-hostile-bisect");
    const fs::path repo = dir.path / "repo";
    // 40 registers from commit 2 to 4, 32 again from 5 on.
    const auto hashes = make_history(repo, 7, 2, 5);
    const auto run = run_tool_captured(bisect_args(repo, hashes.front(), "HEAD", dir.path / "bisect.json"));
    EXPECT_EQ(run.code, 1) << run.out << run.err;
    EXPECT_NE(run.out.find("no commit found"), std::string::npos) << run.out;
    const auto result = nlohmann::json::parse(read_file(dir.path / "bisect.json"));
    EXPECT_EQ(result["outcome"], "unchanged");
    EXPECT_FALSE(result.contains("first"));
    bool bad_end_ran = false;
    for (const auto& step : result["steps"])
        if (step["role"] == "bad" && step["commit"] == hashes.back()) bad_end_ran = true;
    EXPECT_TRUE(bad_end_ran) << result.dump(2);
}

TEST(HostileHistory, ThePageLinksRecordedPathsAsPathsNeverAsSchemesOrHosts)
{
    TempDir dir("harness-hostile-history");
    const fs::path store = dir.path / "store";
    const history::HistoryStore history_store(store);
    const fs::path scheme_folder = dir.path / "javascript:alert(document.domain)";
    write_file(scheme_folder / "results.json", "{}");
    for (int k = 0; k < 6; ++k) {
        auto r = record_of(fmt::format("c0ffee{}", k), fmt::format("2026-01-0{}T00:00:00Z", k + 1), k < 3 ? 12 : 40);
        r.results_path = k == 3   ? (scheme_folder / "results.json").string()
                         : k == 4 ? "//attacker.example/results.json"
                                  : (dir.path / fmt::format("run{}", k) / "results.json").string();
        history_store.add(r);
    }
    const fs::path page = dir.path / "page.html";
    const auto run = run_tool_captured(
        {"history", "page", "--store", store.string(), "memory", "-o", page.string(), "--repo", dir.path.string()});
    ASSERT_EQ(run.code, 0) << run.err;
    const std::string html = read_file(page);
    std::size_t links = 0;
    for (std::size_t at = 0; (at = html.find("href=\"", at)) != std::string::npos; ++links) {
        at += 6;
        const std::string href = html.substr(at, html.find('"', at) - at);
        if (href.starts_with("#")) continue;
        EXPECT_TRUE(href.starts_with("./") || href.starts_with("../") || href.starts_with("file:///")) << href;
        EXPECT_EQ(href.find(':'), href.starts_with("file:///") ? 4u : std::string::npos) << href;
    }
    EXPECT_GT(links, 0u) << "the change point has no link";
    EXPECT_NE(html.find("javascript%3Aalert%28document.domain%29/results.json\""), std::string::npos);
}

TEST(HostileHistory, ARunFileWhoseContentDoesNotMatchItsNameIsLeftOutWithAMessage)
{
    TempDir dir("harness-hostile-history");
    const fs::path store = dir.path / "store";
    const history::HistoryStore history_store(store);
    history_store.add(record_of("0123456789ab", "2026-01-01T00:00:00Z", 12));
    const auto edited = history_store.add(record_of("0123456789ac", "2026-01-02T00:00:00Z", 28));
    std::string text = read_file(edited.file);
    const auto at = text.find("28");
    ASSERT_NE(at, std::string::npos);
    write_file(edited.file, text.replace(at, 2, "99"));

    const auto run = run_tool_captured({"history", "list", "--store", store.string(), "memory"});
    EXPECT_EQ(run.code, 0) << run.err;
    EXPECT_NE(run.err.find("does not match its name"), std::string::npos) << run.err;
    EXPECT_NE(run.out.find("0123456789ab"), std::string::npos) << run.out;
    EXPECT_EQ(run.out.find("0123456789ac"), std::string::npos) << run.out;
}

TEST(HostileHistory, ACraftedIndexIsRebuiltFromTheRunFiles)
{
    TempDir dir("harness-hostile-history");
    const fs::path store = dir.path / "store";
    const history::HistoryStore history_store(store);
    history_store.add(record_of("0123456789ab", "2026-01-01T00:00:00Z", 12));
    history_store.add(record_of("0123456789ac", "2026-01-02T00:00:00Z", 28));
    const auto page = [&] {
        return run_tool_captured({"history", "page", "--store", store.string(), "memory", "-o",
                                  (dir.path / "page.html").string(), "--repo", dir.path.string()});
    };
    ASSERT_EQ(page().code, 0);

    // A metric id no index assigns, which a reader would size a table by.
    edit_index(store, "UPDATE metrics SET id = 400000000000 WHERE id = (SELECT min(id) FROM metrics)");
    const auto crafted_id = page();
    EXPECT_EQ(crafted_id.code, 0) << crafted_id.err;

    // A time summary whose sample count is no count (NaN), its median intact.
    set_sample_counts(store, std::nan(""));
    for (const auto& run : history_store.load_runs("memory")) {
        ASSERT_EQ(run.cases.size(), 1u);
        ASSERT_TRUE(run.cases[0].time.has_value());
        EXPECT_EQ(run.cases[0].time->samples, 5u);
    }

    // A case that "failed", its figures intact.
    edit_index(store, "UPDATE run_cases SET status = 'failed'");
    for (const auto& run : history_store.load_runs("memory")) {
        ASSERT_EQ(run.cases.size(), 1u);
        EXPECT_EQ(std::string(case_status_name(run.cases[0].status)), "passed");
    }
}

TEST(HostileHistory, TemporaryFilesOfAKilledRecordAreRemovedByTheNextRecordOrQuery)
{
    TempDir dir("harness-hostile-history");
    const fs::path store = dir.path / "store";
    const history::HistoryStore history_store(store);
    history_store.add(record_of("0123456789ab", "2026-01-01T00:00:00Z", 12));
    const fs::path folder = store / "runs" / "memory";
    const auto left_by_a_killed_record = [&](const std::string& name) {
        write_file(folder / name, "half a run");
        fs::last_write_time(folder / name, fs::file_time_type::clock::now() - std::chrono::hours(2));
    };
    left_by_a_killed_record(".incoming-killed-before-a-record");
    write_file(folder / ".incoming-in-progress", "being written");
    history_store.add(record_of("0123456789ac", "2026-01-02T00:00:00Z", 28));
    EXPECT_FALSE(fs::exists(folder / ".incoming-killed-before-a-record"));
    EXPECT_TRUE(fs::exists(folder / ".incoming-in-progress")) << "a write in progress was removed";

    left_by_a_killed_record(".incoming-killed-before-a-list");
    const auto run = run_tool_captured({"history", "list", "--store", store.string(), "memory"});
    EXPECT_EQ(run.code, 0) << run.err;
    EXPECT_FALSE(fs::exists(folder / ".incoming-killed-before-a-list"));
}

TEST(HostileSummary, ResultsTextIsTextInTheHeadingAndEveryCell)
{
    RunReport report = read_results_json(repo_root() / "tests/fixtures/gemm_static_results.json");
    ASSERT_GE(report.results.size(), 2u);
    report.device_name = "H100 <img src=https://attacker.example/p.png onerror=alert(1)> [details](https://x.example)";
    report.git_revision = "abc123<img src=x onerror=alert(2)>";
    auto& first = report.results[0];
    first.variant = "[click](https://attacker.example)";
    first.arch = "sm_90<b>";
    ASSERT_FALSE(first.verdicts.empty());
    first.verdicts[0].verdict = Verdict::regressed;
    first.verdicts[0].message = "![pixel](https://attacker.example/p.png) ~~struck~~ &#x202E;gnp.exe \u202e";
    auto& second = report.results[1];
    ASSERT_FALSE(second.verdicts.empty());
    second.verdicts[0].metric = "regs`<i>|";
    const std::string md = report::markdown_summary(report);
    for (const std::string markup : {"<img", "<b>", "<i>", "~~struck", "&#x202E;", "\u202e"})
        EXPECT_EQ(md.find(markup), std::string::npos) << markup << " in\n" << md;
    // A link or an image needs an unescaped "](".
    for (std::size_t at = 0; (at = md.find(']', at)) != std::string::npos; ++at)
        EXPECT_TRUE(at > 0 && md[at - 1] == '\\') << md.substr(at > 40 ? at - 40 : 0, 80);
    EXPECT_NE(md.find("[click\\]"), std::string::npos) << md;
    EXPECT_NE(md.find("&amp;#x202E;"), std::string::npos) << md;

    // The console shows the reordering character escaped, not obeyed.
    std::ostringstream console;
    report::write_console_table(report, console);
    report::write_console_verdicts(report, console);
    EXPECT_EQ(console.str().find("\u202e"), std::string::npos);
    EXPECT_NE(console.str().find("\\u202e"), std::string::npos) << console.str();
}

} // namespace hostile_history_bisect_test
