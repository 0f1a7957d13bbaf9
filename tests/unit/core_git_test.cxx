// core/git: git run with an argument vector in a scratch repository (what it prints is captured,
// a failure is an Error that says what failed, arguments reach git as they are, hooks stay off),
// and the revision a run records, marked when the tree has changes.

#include "harness/core/error.hxx"
#include "harness/core/git.hxx"
#include "harness/pipeline/report_header.hxx"
#include "scratch_repository.hxx"
#include "test_files.hxx"

#include <cstdlib>
#include <gtest/gtest.h>
#include <optional>
#include <sys/stat.h>

namespace core_git_test {

using namespace harness;
namespace fs = std::filesystem;

namespace {

/// A scratch repository with one commit holding kernel.cu.
struct ScratchRepository {
    TempDir dir;
    fs::path repo = dir.path / "repo";
    explicit ScratchRepository(const std::string& prefix = "harness-git") : dir(prefix)
    {
        fs::create_directories(repo);
        git(repo, {"init", "-q"});
        write_file(repo / "kernel.cu", "// first\n");
        git(repo, {"add", "kernel.cu"});
        git(repo, {"commit", "-q", "-m", "first"});
    }
};

/// An environment variable set for the object's lifetime, then restored.
class ScopedVariable {
public:
    ScopedVariable(const char* name, const std::string& value) : name_(name)
    {
        if (const char* before = std::getenv(name)) before_ = before;
        ::setenv(name, value.c_str(), 1);
    }
    ~ScopedVariable()
    {
        if (before_)
            ::setenv(name_, before_->c_str(), 1);
        else
            ::unsetenv(name_);
    }
    ScopedVariable(const ScopedVariable&) = delete;
    ScopedVariable& operator=(const ScopedVariable&) = delete;

private:
    const char* name_;
    std::optional<std::string> before_;
};

bool is_hex(const std::string& s)
{
    return !s.empty() && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

} // namespace

TEST(CoreGit, CapturesWhatGitPrints)
{
    ScratchRepository scratch;
    const std::string head = without_line_end(git_output(scratch.repo, {"rev-parse", "HEAD"}));
    EXPECT_EQ(head.size(), 40u) << head;
    EXPECT_TRUE(is_hex(head)) << head;
    EXPECT_EQ(git_output(scratch.repo, {"log", "-1", "--format=%s"}), "first\n");

    // Standard error is captured apart from standard output, whatever the exit status.
    const ProgramOutput failed = run_git(scratch.repo, {"rev-parse", "--verify", "no-such-branch"});
    EXPECT_NE(failed.exit_code, 0);
    EXPECT_TRUE(failed.out.empty()) << failed.out;
    EXPECT_NE(failed.err.find("fatal"), std::string::npos) << failed.err;
}

TEST(CoreGit, AFailureSaysWhichCommandWhereAndWhy)
{
    ScratchRepository scratch;
    try {
        git_output(scratch.repo, {"rev-parse", "--verify", "no-such-branch"});
        FAIL() << "git_output returned for a revision that does not exist";
    } catch (const Error& e) {
        const std::string message = e.what();
        EXPECT_EQ(e.kind(), ErrorKind::environment);
        EXPECT_NE(message.find("git rev-parse --verify no-such-branch failed in " + scratch.repo.string()),
                  std::string::npos)
            << message;
        EXPECT_NE(message.find("exited with status 128"), std::string::npos) << message;
        EXPECT_NE(message.find("fatal: Needed a single revision"), std::string::npos) << message;
    }

    // No git at all: an Error(environment) that names the program, not an empty answer.
    TempDir empty("harness-no-git");
    const ScopedVariable path("PATH", empty.path.string());
    try {
        run_git(scratch.repo, {"status"});
        FAIL() << "run_git returned without git on PATH";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::environment);
        EXPECT_NE(std::string(e.what()).find("cannot run git"), std::string::npos) << e.what();
    }
}

TEST(CoreGit, ArgumentsReachGitAsTheyAre)
{
    ScratchRepository scratch;
    // Each would do something in a shell: expand, run a command, redirect, quote, end a command.
    const std::string message = "a  b $(touch expanded) `touch quoted` ; touch ended & | > redirected 'x' \"y\" \\ *";
    const std::string file = "name with spaces;$HOME*?.cu";
    write_file(scratch.repo / file, "// second\n");
    git_output(scratch.repo, {"add", "--", file});
    git_output(scratch.repo, {"-c", "user.name=Harness Test", "-c", "user.email=harness@example.com", "-c",
                              "commit.gpgsign=false", "commit", "-q", "-m", message});
    EXPECT_EQ(git_output(scratch.repo, {"log", "-1", "--format=%B"}), message + "\n\n");
    EXPECT_EQ(git_output(scratch.repo, {"ls-files", "-z", "--", file}), file + std::string(1, '\0'));
    for (const char* made : {"expanded", "quoted", "ended", "redirected"}) {
        EXPECT_FALSE(fs::exists(scratch.repo / made)) << made;
        EXPECT_FALSE(fs::exists(fs::current_path() / made)) << made;
    }
}

TEST(CoreGit, RunsNoHookAndIgnoresVariablesThatPointElsewhere)
{
    ScratchRepository scratch;
    const fs::path marker = scratch.dir.path / "hook-ran";
    const fs::path hook = scratch.repo / ".git" / "hooks" / "post-checkout";
    write_file(hook, "#!/bin/sh\ntouch '" + marker.string() + "'\n");
    fs::permissions(hook, fs::perms::owner_all);
    // The hook runs when git is run as a user runs it ...
    git(scratch.repo, {"checkout", "-q", "-b", "with-hooks"});
    ASSERT_TRUE(fs::exists(marker)) << "the scratch hook does not run at all";
    fs::remove(marker);
    // ... and not when the tool runs it.
    git_output(scratch.repo, {"checkout", "-q", "-b", "without-hooks"});
    EXPECT_FALSE(fs::exists(marker));

    // GIT_DIR and GIT_WORK_TREE in the tool's environment would point git at another repository.
    ScratchRepository other("harness-other-git");
    const ScopedVariable git_dir("GIT_DIR", (other.repo / ".git").string());
    const ScopedVariable work_tree("GIT_WORK_TREE", other.repo.string());
    EXPECT_EQ(without_line_end(git_output(scratch.repo, {"rev-parse", "--abbrev-ref", "HEAD"})), "without-hooks");
}

TEST(CoreGit, ARevisionOfATreeWithChangesCarriesTheDirtyMark)
{
    ScratchRepository scratch;
    const fs::path suite = scratch.repo / "suites" / "gemm.yaml";
    write_file(suite, "name: gemm\n");
    git(scratch.repo, {"add", "suites/gemm.yaml"});
    git(scratch.repo, {"commit", "-q", "-m", "suite"});
    const std::string head = git(scratch.repo, {"rev-parse", "--short=12", "HEAD"});

    EXPECT_EQ(pipeline::git_revision(suite), head);
    // A file git does not track leaves the commit's figures alone (reports, build folders).
    write_file(scratch.repo / "reports" / "results.json", "{}\n");
    EXPECT_EQ(pipeline::git_revision(suite), head);
    // A changed tracked file anywhere in the tree makes it another tree than the commit ...
    write_file(scratch.repo / "kernel.cu", "// changed\n");
    EXPECT_EQ(pipeline::git_revision(suite), head + "+dirty");
    // ... staged or not.
    git(scratch.repo, {"add", "kernel.cu"});
    EXPECT_EQ(pipeline::git_revision(suite), head + "+dirty");
    git(scratch.repo, {"commit", "-q", "-m", "changed"});
    EXPECT_EQ(pipeline::git_revision(suite), git(scratch.repo, {"rev-parse", "--short=12", "HEAD"}));

    // Outside any repository there is no revision to name.
    TempDir outside("harness-no-repository");
    write_file(outside.path / "gemm.yaml", "name: gemm\n");
    EXPECT_EQ(pipeline::git_revision(outside.path / "gemm.yaml"), "");
}

} // namespace core_git_test
