// replace_files_together: every file old or every file new, whatever step a kill or a failure hits,
// and nothing left behind once the next lock on the folder was taken.

#include "harness/compare/baseline_file.hxx"
#include "harness/compare/baseline_update.hxx"
#include "harness/compare/compare_run.hxx"
#include "harness/core/error.hxx"
#include "harness/core/file_transaction.hxx"
#include "harness/suite/suite.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"

#include <algorithm>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <functional>
#include <gtest/gtest.h>
#include <optional>
#include <set>
#include <string>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace file_transaction_test {

namespace fs = std::filesystem;
using namespace harness;

namespace {

/// One file of the three-file update: its content before (absent: the update creates it) and after.
struct Change {
    std::string name;
    std::optional<std::string> before;
    std::string after;
};

const std::vector<Change> changes = {
    {"sm_80.csv", "old sm_80\n", "new sm_80\n"},
    {"sm_90.csv", "old sm_90\n", "new sm_90\n"},
    {"NVIDIA-H100-80GB-HBM3.csv", std::nullopt, "new H100\n"},
};
const std::string untouched_name = "NVIDIA-A100.csv";

/// A suite's baseline folder holding the old files and one the update does not name.
struct Folder {
    TempDir dir{"harness-transaction-test"};
    fs::path path = dir.path / "baselines" / "memory";
    Folder()
    {
        for (const auto& c : changes)
            if (c.before) write_file(path / c.name, *c.before);
        write_file(path / untouched_name, "untouched\n");
    }
    std::vector<std::pair<fs::path, std::string>> update(const std::string& prefix = "") const
    {
        std::vector<std::pair<fs::path, std::string>> files;
        for (const auto& c : changes) files.emplace_back(path / c.name, prefix + c.after);
        return files;
    }
};

bool exists_no_follow(const fs::path& path)
{
    return fs::exists(fs::symlink_status(path));
}

/// "old" when every file of `changes` is as before, "new" when every one is as after, else what
/// each file holds.
std::string state_of(const fs::path& folder)
{
    std::size_t old_files = 0, new_files = 0;
    std::string each;
    for (const auto& c : changes) {
        const fs::path path = folder / c.name;
        const std::optional<std::string> text =
            exists_no_follow(path) ? std::optional<std::string>(read_file(path)) : std::nullopt;
        old_files += text == c.before;
        new_files += text == c.after;
        each += " " + c.name + "=" + (text ? "'" + *text + "'" : "absent");
    }
    if (old_files == changes.size()) return "old";
    if (new_files == changes.size()) return "new";
    return "mixed:" + each;
}

std::set<std::string> names_in(const fs::path& dir)
{
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
    return names;
}

/// The names a folder in `state` holds, and nothing else: no journal, staging folder or temporary.
std::set<std::string> names_when(const std::string& state)
{
    std::set<std::string> names = {untouched_name};
    for (const auto& c : changes)
        if (state == "new" || c.before) names.insert(c.name);
    return names;
}

ino_t inode_of(const fs::path& path)
{
    struct stat st {};
    EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
    return st.st_ino;
}

/// A step hook that records the name of every step.
TransactionStep record(std::vector<std::string>& steps)
{
    return [&steps](std::string_view step) { steps.emplace_back(step); };
}

/// A step hook that kills the process (SIGKILL, which nothing can catch) before step `k`.
TransactionStep kill_before(std::size_t k)
{
    return [k, n = std::size_t{0}](std::string_view) mutable {
        if (n++ == k) ::raise(SIGKILL);
    };
}

/// A step hook that fails step `k` as the system would.
TransactionStep fail_before(std::size_t k)
{
    return [k, n = std::size_t{0}](std::string_view step) mutable {
        if (n++ == k) throw Error(ErrorKind::environment, "planted failure before " + std::string(step));
    };
}

/// Runs `work` in a child process; returns its wait status (exit 0 when it returned).
int in_child(const std::function<void()>& work)
{
    const pid_t pid = ::fork();
    if (pid == 0) {
        try {
            work();
        } catch (...) {
            ::_exit(2);
        }
        ::_exit(0);
    }
    int status = 0;
    EXPECT_EQ(::waitpid(pid, &status, 0), pid);
    return status;
}

bool killed(int status)
{
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

bool exited_cleanly(int status)
{
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/// The steps of the three-file update, from a run that was not stopped.
std::vector<std::string> update_steps()
{
    Folder scratch;
    std::vector<std::string> steps;
    replace_files_together(scratch.update(), record(steps));
    return steps;
}

std::size_t index_of(const std::vector<std::string>& steps, const std::string& name)
{
    const auto it = std::find(steps.begin(), steps.end(), name);
    EXPECT_NE(it, steps.end()) << name;
    return static_cast<std::size_t>(it - steps.begin());
}

/// What a reader sees, through the lock every reader of baselines takes.
std::string state_through_read_lock(const fs::path& folder)
{
    const FolderReadLock lock(folder);
    return state_of(folder);
}

/// Without a journal (nothing committed, or every rename done) the files are all old or all new,
/// even to a reader that takes no lock.
void expect_untorn_without_journal(const fs::path& folder)
{
    if (!exists_no_follow(folder / ".harness-journal")) {
        EXPECT_FALSE(state_of(folder).starts_with("mixed"));
    }
}

template <typename Work> std::string environment_failure(Work work)
{
    try {
        work();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::environment);
        return e.what();
    }
    ADD_FAILURE() << "no error";
    return {};
}

} // namespace

TEST(FileTransaction, ReplacesEveryFileAndLeavesNothingElse)
{
    Folder f;
    const ino_t untouched = inode_of(f.path / untouched_name);
    replace_files_together(f.update());
    EXPECT_EQ(state_of(f.path), "new");
    EXPECT_EQ(names_in(f.path), names_when("new"));
    EXPECT_EQ(inode_of(f.path / untouched_name), untouched);
    EXPECT_EQ(read_file(f.path / untouched_name), "untouched\n");
    const mode_t mask = ::umask(0);
    ::umask(mask);
    struct stat st {};
    ASSERT_EQ(::stat((f.path / "sm_80.csv").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0644u & ~mask);
}

TEST(FileTransaction, TheCommitIsOneStepBetweenStagingAndRenaming)
{
    const auto steps = update_steps();
    const std::size_t commit = index_of(steps, "commit");
    EXPECT_EQ(index_of(steps, "write the journal") + 1, commit);
    // Nothing of the folder's own files changes before the commit; after it, only renames.
    for (std::size_t i = 0; i < commit; ++i) EXPECT_EQ(steps[i].find("rename"), std::string::npos) << steps[i];
    EXPECT_EQ(steps.size(), commit + 1 + changes.size() + 2) << fmt::format("{}", fmt::join(steps, ", "));
}

// A kill before every step in turn (and none): on disk the files are all old or all new whenever
// no journal is there; through a reader's lock always, and the lock leaves nothing behind.
TEST(FileTransaction, AKillAtEveryStepLeavesEveryFileOldOrEveryFileNew)
{
    const auto steps = update_steps();
    const std::size_t commit = index_of(steps, "commit");
    for (std::size_t k = 0; k <= steps.size(); ++k) {
        SCOPED_TRACE(k < steps.size() ? "killed before step " + std::to_string(k) + ": " + steps[k] : "not killed");
        const std::string expected = k <= commit ? "old" : "new";
        for (const bool recover_by_reading : {true, false}) {
            SCOPED_TRACE(recover_by_reading ? "then read" : "then updated again");
            Folder f;
            const ino_t untouched = inode_of(f.path / untouched_name);
            const int status = in_child([&] { replace_files_together(f.update(), kill_before(k)); });
            EXPECT_TRUE(k < steps.size() ? killed(status) : exited_cleanly(status)) << status;
            expect_untorn_without_journal(f.path);
            if (recover_by_reading) {
                EXPECT_EQ(state_through_read_lock(f.path), expected);
                EXPECT_EQ(names_in(f.path), names_when(expected));
            } else {
                replace_files_together(f.update("newer "));
                for (const auto& c : changes) EXPECT_EQ(read_file(f.path / c.name), "newer " + c.after);
                EXPECT_EQ(names_in(f.path), names_when("new"));
            }
            EXPECT_EQ(inode_of(f.path / untouched_name), untouched);
            EXPECT_EQ(read_file(f.path / untouched_name), "untouched\n");
        }
    }
}

// Recovery is itself killed before each of its steps: the next lock still completes (or undoes)
// the update.
TEST(FileTransaction, AKillWhileRecoveringIsRecoveredByTheNextLock)
{
    const auto steps = update_steps();
    const std::size_t commit = index_of(steps, "commit");
    std::size_t recoveries_killed = 0;
    for (std::size_t k = 0; k < steps.size(); ++k) {
        const std::string expected = k <= commit ? "old" : "new";
        // The steps of recovering from a kill before step k, from a copy recovered without a kill.
        std::vector<std::string> recovery;
        {
            Folder f;
            ASSERT_TRUE(killed(in_child([&] { replace_files_together(f.update(), kill_before(k)); })));
            const fs::path copy = f.dir.path / "copy";
            fs::copy(f.path, copy, fs::copy_options::recursive);
            recover_replacement(copy, record(recovery));
            EXPECT_EQ(state_of(copy), expected);
            EXPECT_EQ(names_in(copy), names_when(expected));
        }
        for (std::size_t j = 0; j < recovery.size(); ++j) {
            SCOPED_TRACE("update killed before " + steps[k] + ", recovery killed before " + recovery[j]);
            Folder f;
            ASSERT_TRUE(killed(in_child([&] { replace_files_together(f.update(), kill_before(k)); })));
            EXPECT_TRUE(killed(in_child([&] { recover_replacement(f.path, kill_before(j)); })));
            expect_untorn_without_journal(f.path);
            EXPECT_EQ(state_through_read_lock(f.path), expected);
            EXPECT_EQ(names_in(f.path), names_when(expected));
            ++recoveries_killed;
        }
    }
    EXPECT_GT(recoveries_killed, steps.size());
}

// A failure at each step: before the commit the update undoes itself at once; after it the error
// says so, and the next reader completes the update.
TEST(FileTransaction, AFailureAtEveryStepRollsBackOrIsCompletedByTheNextReader)
{
    const auto steps = update_steps();
    const std::size_t commit = index_of(steps, "commit");
    for (std::size_t k = 0; k < steps.size(); ++k) {
        SCOPED_TRACE("failed at step " + std::to_string(k) + ": " + steps[k]);
        Folder f;
        const std::string message = environment_failure([&] { replace_files_together(f.update(), fail_before(k)); });
        EXPECT_NE(message.find("planted failure before " + steps[k]), std::string::npos) << message;
        if (k <= commit) {
            EXPECT_EQ(message.find("committed"), std::string::npos) << message;
            EXPECT_EQ(state_of(f.path), "old");
            EXPECT_EQ(names_in(f.path), names_when("old"));
        } else {
            EXPECT_NE(message.find("committed"), std::string::npos) << message;
            EXPECT_EQ(state_through_read_lock(f.path), "new");
            EXPECT_EQ(names_in(f.path), names_when("new"));
        }
    }
}

// The commit itself (the journal's rename) fails: a folder is planted under the journal's name.
TEST(FileTransaction, AFailedCommitLeavesTheOldFiles)
{
    Folder f;
    const fs::path journal = f.path / ".harness-journal";
    const std::string message = environment_failure([&] {
        replace_files_together(f.update(), [&](std::string_view step) {
            if (step == "commit") write_file(journal / "planted", "x");
        });
    });
    EXPECT_NE(message.find(journal.string()), std::string::npos) << message;
    EXPECT_NE(message.find(std::strerror(EISDIR)), std::string::npos) << message;
    EXPECT_EQ(state_of(f.path), "old");
    fs::remove_all(journal);
    EXPECT_EQ(names_in(f.path), names_when("old"));
}

// Writing stops at the file-size limit (which binds root too): nothing changes, nothing is left.
TEST(FileTransaction, AFailedWriteLeavesTheOldFiles)
{
    Folder f;
    auto files = f.update();
    files.back().second = std::string(1 << 20, 'x');
    rlimit saved{};
    ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
    rlimit small = saved;
    small.rlim_cur = 4096;
    const auto previous_handler = std::signal(SIGXFSZ, SIG_IGN);
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0) << std::strerror(errno);
    const std::string message = environment_failure([&] { replace_files_together(files); });
    ::setrlimit(RLIMIT_FSIZE, &saved);
    std::signal(SIGXFSZ, previous_handler);
    EXPECT_NE(message.find(files.back().first.string()), std::string::npos) << message;
    EXPECT_NE(message.find(std::strerror(EFBIG)), std::string::npos) << message;
    EXPECT_EQ(state_of(f.path), "old");
    EXPECT_EQ(names_in(f.path), names_when("old"));
}

// A rename after the commit fails (a folder appeared where sm_90.csv was): the update is committed,
// so no reader may see it half done; readers fail, naming the file, until the rename can be done.
TEST(FileTransaction, ARenameThatFailsAfterTheCommitIsCompletedOnceItCan)
{
    Folder f;
    const fs::path blocked = f.path / "sm_90.csv";
    const std::string message = environment_failure([&] {
        replace_files_together(f.update(), [&](std::string_view step) {
            if (step == "rename sm_90.csv") {
                fs::remove(blocked);
                write_file(blocked / "planted", "x");
            }
        });
    });
    EXPECT_NE(message.find(blocked.string()), std::string::npos) << message;
    EXPECT_NE(message.find("committed"), std::string::npos) << message;
    const std::string read_failure = environment_failure([&] { const FolderReadLock lock(f.path); });
    EXPECT_NE(read_failure.find(blocked.string()), std::string::npos) << read_failure;
    EXPECT_THROW(compare::read_baseline(f.path / "sm_80.csv"), Error); // a reader without the lock
    fs::remove_all(blocked);
    EXPECT_EQ(state_through_read_lock(f.path), "new");
    EXPECT_EQ(names_in(f.path), names_when("new"));
}

TEST(FileTransaction, NothingIsWrittenThroughALink)
{
    Folder f;
    const fs::path outside = f.dir.path / "outside";
    write_file(outside / "victim.csv", "precious\n");

    // A link at a target is replaced by the file.
    fs::remove(f.path / "sm_80.csv");
    fs::create_symlink(outside / "victim.csv", f.path / "sm_80.csv");
    replace_files_together(f.update());
    EXPECT_FALSE(fs::is_symlink(f.path / "sm_80.csv"));
    EXPECT_EQ(state_of(f.path), "new");

    // A linked folder below the shared one is refused before anything is written.
    fs::create_directory_symlink(outside, f.path / "linked");
    const std::string message = environment_failure([&] {
        replace_files_together({{f.path / "sm_80.csv", "newer"}, {f.path / "linked" / "victim.csv", "planted"}});
    });
    EXPECT_NE(message.find("symbolic link"), std::string::npos) << message;
    EXPECT_EQ(read_file(f.path / "sm_80.csv"), "new sm_80\n");
    fs::remove(f.path / "linked");

    // Links planted under the journal's or a staging folder's name: the journal is refused, the
    // staging link removed without touching what it points at.
    fs::create_symlink(outside / "victim.csv", f.path / ".harness-journal");
    const std::string journal_failure = environment_failure([&] { const FolderReadLock lock(f.path); });
    EXPECT_NE(journal_failure.find("symbolic link"), std::string::npos) << journal_failure;
    fs::remove(f.path / ".harness-journal");
    fs::create_directory_symlink(outside, f.path / ".harness-staging.planted");
    EXPECT_EQ(state_through_read_lock(f.path), "new");
    EXPECT_EQ(names_in(f.path), names_when("new"));
    EXPECT_EQ(read_file(outside / "victim.csv"), "precious\n");
    EXPECT_EQ(names_in(outside), std::set<std::string>{"victim.csv"});
}

// An update that runs while readers read: every reader, under its lock, sees one update's files.
TEST(FileTransaction, ReadersUnderTheLockNeverSeeTwoUpdatesAtOnce)
{
    Folder f;
    replace_files_together(f.update("0 "));
    const int updates = 60;
    const pid_t writer = ::fork();
    if (writer == 0) {
        try {
            for (int i = 1; i <= updates; ++i) {
                const FolderLock lock(f.path);
                replace_files_together(f.update(std::to_string(i) + " "));
            }
        } catch (...) {
            ::_exit(2);
        }
        ::_exit(0);
    }
    int reads = 0;
    for (int status = 0; ::waitpid(writer, &status, WNOHANG) == 0; ++reads) {
        const FolderReadLock lock(f.path);
        std::set<std::string> generations;
        for (const auto& c : changes) {
            const std::string text = read_file(f.path / c.name);
            generations.insert(text.substr(0, text.find(' ')));
        }
        ASSERT_EQ(generations.size(), 1u) << "read " << reads;
        ::usleep(200); // outside the lock: the writer gets its turn
    }
    for (const auto& c : changes) EXPECT_EQ(read_file(f.path / c.name), std::to_string(updates) + " " + c.after);
    EXPECT_EQ(names_in(f.path), names_when("new"));
}

// The reproducer of a torn baseline update: `harness baseline update --static suites/memory.yaml`
// killed between its renames (after sm_80.csv was replaced, before sm_90.csv was), with both files
// needing a change. Here the kill comes before every step of the update in turn.
TEST(FileTransaction, ABaselineUpdateKilledBetweenItsRenamesIsNotTorn)
{
    const suite::Suite memory = suite::load_suite(repo_root() / "suites" / "memory.yaml");
    const auto report = [] {
        harness::RunReport rep;
        rep.suite = "memory";
        rep.suite_file = "suites/memory.yaml";
        rep.mode = RunMode::static_tier;
        rep.arch = "sm_90";
        rep.timestamp = "2026-11-26T00:00:00Z";
        for (const char* arch : {"sm_80", "sm_90"}) {
            CaseResult r;
            r.suite = "memory";
            r.variant = "vector_add";
            r.params_text = "N=1000003";
            r.arch = arch;
            r.status = CaseStatus::passed;
            r.set_metric("registers", 12);
            rep.results.push_back(std::move(r));
        }
        return rep;
    }();
    const std::string dropped_row = "\"vector_add\",\"N=1000003\",\"registers\",";
    const auto prepare = [&](const fs::path& baselines) {
        for (const char* key : {"sm_80", "sm_90", "NVIDIA-H100-80GB-HBM3"}) {
            std::string text = read_file(repo_root() / "baselines" / "memory" / (std::string(key) + ".csv"));
            if (const std::size_t at = text.find(dropped_row); at != std::string::npos)
                text.erase(at, text.find('\n', at) + 1 - at);
            write_file(baselines / "memory" / (std::string(key) + ".csv"), text);
        }
    };
    // Which of sm_80.csv and sm_90.csv hold the row the update adds: both or neither.
    const auto holding_the_row = [&](const fs::path& baselines) {
        std::string holding;
        for (const char* key : {"sm_80", "sm_90"})
            if (read_file(baselines / "memory" / (std::string(key) + ".csv")).find(dropped_row) != std::string::npos)
                holding += holding.empty() ? key : std::string(" ") + key;
        return holding;
    };

    std::vector<std::string> steps;
    {
        TempDir scratch{"harness-transaction-test"};
        prepare(scratch.path / "baselines");
        const auto update = compare::update_baselines(memory, report, scratch.path / "baselines", record(steps));
        EXPECT_EQ(update.written.size(), 2u);
    }
    const std::size_t commit = index_of(steps, "commit");
    const std::size_t second_rename = index_of(steps, "rename sm_90.csv");
    EXPECT_GT(second_rename, index_of(steps, "rename sm_80.csv"));
    for (std::size_t k = 0; k <= steps.size(); ++k) {
        SCOPED_TRACE(k < steps.size() ? "killed before " + steps[k] : "not killed");
        TempDir dir{"harness-transaction-test"};
        const fs::path baselines = dir.path / "baselines";
        prepare(baselines);
        const auto before = snapshot(baselines);
        const int status = in_child([&] { compare::update_baselines(memory, report, baselines, kill_before(k)); });
        EXPECT_TRUE(k < steps.size() ? killed(status) : exited_cleanly(status)) << status;
        if (k == second_rename) { // the moment the reproducer tore: on disk, only sm_80.csv is new
            EXPECT_EQ(holding_the_row(baselines), "sm_80");
        }

        // `harness run` compares with both files as one state: both hold the row or neither does.
        harness::RunReport run = report;
        compare::CompareOptions options;
        options.baseline_dir = baselines;
        compare::compare_run(run, memory, options);
        std::set<std::string> verdicts;
        for (const auto& r : run.results)
            for (const auto& v : r.verdicts)
                if (v.metric == "registers" && !v.rule.starts_with("expect")) verdicts.insert(verdict_name(v.verdict));
        EXPECT_EQ(verdicts, std::set<std::string>{k <= commit ? "no_baseline" : "passed"});
        EXPECT_EQ(holding_the_row(baselines), k <= commit ? "" : "sm_80 sm_90");
        if (k <= commit) {
            EXPECT_EQ(snapshot(baselines), before);
        }
        EXPECT_EQ(names_in(baselines / "memory"),
                  (std::set<std::string>{"sm_80.csv", "sm_90.csv", "NVIDIA-H100-80GB-HBM3.csv"}));

        // The next update finds one state too: it writes both files, or neither.
        const auto again = compare::update_baselines(memory, report, baselines);
        EXPECT_EQ(again.written.size(), k <= commit ? 2u : 0u);
        EXPECT_EQ(holding_the_row(baselines), "sm_80 sm_90");
    }
}

TEST(FileTransaction, RefusesPathsThatCannotAllBeFilesBeforeWritingAnything)
{
    Folder f;
    const auto refused = [&](std::vector<std::pair<fs::path, std::string>> files) {
        const std::string message = environment_failure([&] { replace_files_together(files); });
        EXPECT_EQ(state_of(f.path), "old") << message;
        EXPECT_EQ(names_in(f.path), names_when("old")) << message;
        return message;
    };
    EXPECT_NE(refused({{f.path / "sm_80.csv", "a"}, {f.path / "sm_80.csv", "b"}}).find("twice"), std::string::npos);
    EXPECT_NE(refused({{f.path / "sub", "a"}, {f.path / "sub" / "sm_80.csv", "b"}}).find("folder"), std::string::npos);
    EXPECT_NE(refused({{f.path / "sm_80.csv", "a"}, {f.path / ".harness-journal", "b"}}).find("kept"),
              std::string::npos);
    write_file(f.path / "sm_86.csv" / "inside", "a folder where a file goes");
    const std::string message = environment_failure([&] {
        replace_files_together({{f.path / "sm_80.csv", "a"}, {f.path / "sm_86.csv", "b"}});
    });
    EXPECT_NE(message.find("sm_86.csv: it is a folder"), std::string::npos) << message;
    EXPECT_EQ(state_of(f.path), "old");
    EXPECT_EQ(read_file(f.path / "sm_86.csv" / "inside"), "a folder where a file goes");
    fs::remove_all(f.path / "sm_86.csv");
    EXPECT_EQ(names_in(f.path), names_when("old"));
}

// The journal directs renames: one that is damaged, or names a path outside its folder, is refused
// and nothing is renamed.
TEST(FileTransaction, AJournalThatIsDamagedOrLeadsOutsideIsRefused)
{
    Folder f;
    write_file(f.path / ".harness-staging.planted" / "0", "planted\n");
    for (const std::string& journal :
         {std::string("harness replacement journal 1\nstaging .harness-staging.planted\nfile ../outside.csv\nend\n"),
          std::string("harness replacement journal 1\nstaging .harness-staging.planted\nfile sm_80.csv\n"),
          std::string("harness replacement journal 1\nstaging ../planted\nfile sm_80.csv\nend\n")}) {
        write_file(f.path / ".harness-journal", journal);
        const std::string message = environment_failure([&] { const FolderReadLock lock(f.path); });
        EXPECT_NE(message.find("damaged"), std::string::npos) << message;
        EXPECT_EQ(state_of(f.path), "old");
        EXPECT_FALSE(exists_no_follow(f.dir.path / "baselines" / "outside.csv"));
    }
    // Once the journal is gone, its staging folder is removed as one that was never committed.
    fs::remove(f.path / ".harness-journal");
    EXPECT_EQ(state_through_read_lock(f.path), "old");
    EXPECT_EQ(names_in(f.path), names_when("old"));
}

} // namespace file_transaction_test
