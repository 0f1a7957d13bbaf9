// Paths a suite names and files the tool writes, as an attacker or a hostile machine shapes them:
// a module's folder variable is contained after links are resolved and never names a folder above
// the project; a range over the whole int64 span is refused with its file, line and field; CI mode
// fails a run or a merged gate that gated nothing; outputs that are streams (a FIFO, a pipe named
// /dev/fd/N) are written into; a writer under a file-size limit fails with the file named and
// leaves nothing behind, and what a killed writer left is removed by the next one.

#include "harness/core/atomic_file.hxx"
#include "harness/core/error.hxx"
#include "harness/core/file_transaction.hxx"
#include "harness/suite/suite.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"
#include "tool_output.hxx"
#include "vector_add_project.hxx"

#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <functional>
#include <gtest/gtest.h>
#include <map>
#include <set>
#include <string>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace hostile_paths_and_writers_test {

using namespace harness;
namespace fs = std::filesystem;

namespace {

const std::string secret = "ghp_hostile_writers_secret_7741";

/// A project with one vector_add kernel and a one-case suite; `variant` is added to its variants
/// and `params` replaces its sweep.
struct Project : VectorAddProject {
    explicit Project(const std::string& variant = "", const std::string& params = "N: [1024]")
        : VectorAddProject("writers", variant, params)
    {
    }
};

/// Sets an environment variable for one scope.
struct ScopedVariable {
    std::string name;
    ScopedVariable(std::string variable, const std::string& value) : name(std::move(variable))
    {
        ::setenv(name.c_str(), value.c_str(), 1);
    }
    ~ScopedVariable() { ::unsetenv(name.c_str()); }
};

/// Gives `path` (not what it links to) a change time `seconds` ago.
void age(const fs::path& path, int seconds)
{
    timespec times[2];
    ::clock_gettime(CLOCK_REALTIME, &times[0]);
    times[0].tv_sec -= seconds;
    times[1] = times[0];
    ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW), 0) << path;
}

/// What a writer under a 4 KiB file-size limit does in a child process with SIGXFSZ ignored, as
/// the tool's main() has it: 0 when `write` throws an environment error naming `file` and the
/// system's reason, 10 when it does not throw, 11 for any other error.
int under_file_size_limit(const std::function<void()>& write, const std::string& file)
{
    const pid_t child = ::fork();
    if (child == 0) {
        std::signal(SIGXFSZ, SIG_IGN);
        rlimit limit{4096, 4096};
        ::setrlimit(RLIMIT_FSIZE, &limit);
        try {
            write();
            ::_exit(10);
        } catch (const Error& e) {
            const std::string what = e.what();
            ::_exit(e.kind() == ErrorKind::environment && what.find(file) != std::string::npos &&
                            what.find("File too large") != std::string::npos
                        ? 0
                        : 11);
        }
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    if (!WIFEXITED(status)) return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}

} // namespace

TEST(HostilePaths, AModuleFolderVariableIsContainedAfterLinksAreResolved)
{
    TempDir build("hostile-writers-build");
    TempDir outside("hostile-writers-outside");
    write_file(outside.path / "secret.cubin", secret);
    write_file(build.path / "modules/inside.cubin", "not yet built");
    fs::create_symlink(outside.path / "secret.cubin", build.path / "escape.cubin");
    fs::create_symlink(outside.path, build.path / "elsewhere");
    fs::create_symlink(build.path / "modules/inside.cubin", build.path / "alias.cubin");
    const ScopedVariable variable("HOSTILE_WRITERS_BUILD_DIR", build.path.string());

    for (const std::string module :
         {"${HOSTILE_WRITERS_BUILD_DIR}/escape.cubin", "${HOSTILE_WRITERS_BUILD_DIR}/elsewhere/secret.cubin"}) {
        const std::string e = Project(module_variant(module)).load_error();
        EXPECT_NE(e.find("writers.yaml:17:13: variants.m.module: " + module +
                         " leads out of the folder ${HOSTILE_WRITERS_BUILD_DIR} names (through a symbolic link)"),
                  std::string::npos)
            << e;
        EXPECT_EQ(e.find(build.path.string()), std::string::npos) << "the variable's value is shown: " << e;
        EXPECT_EQ(e.find(outside.path.string()), std::string::npos) << e;
    }
    // A link that stays inside the folder is a module like any other.
    EXPECT_EQ(Project(module_variant("${HOSTILE_WRITERS_BUILD_DIR}/alias.cubin")).load_error(), "no error");
}

TEST(HostilePaths, AModuleFolderVariableNeverNamesAFolderAboveTheProject)
{
    Project project(module_variant("${HOSTILE_WRITERS_ABOVE_DIR}/x.cubin"));
    {
        // The folder that holds the project (a runner's builds folder, a home): other projects lie there.
        const ScopedVariable above("HOSTILE_WRITERS_ABOVE_DIR", project.dir.path.parent_path().string());
        const std::string e = project.load_error();
        EXPECT_NE(e.find("variants.m.module: ${HOSTILE_WRITERS_ABOVE_DIR} names a folder that holds the project, "
                         "not a build folder"),
                  std::string::npos)
            << e;
        // The message starts with the suite's path, which lies in that folder; after it, no value.
        EXPECT_EQ(e.substr(e.find("variants.m.module")).find(project.dir.path.parent_path().string()),
                  std::string::npos)
            << e;
    }
    {
        const ScopedVariable root("HOSTILE_WRITERS_ABOVE_DIR", "/");
        EXPECT_NE(project.load_error().find("names a folder that holds the project"), std::string::npos);
    }
    // The project's own folder is no folder above it.
    const ScopedVariable own("HOSTILE_WRITERS_ABOVE_DIR", project.dir.path.string());
    EXPECT_EQ(project.load_error(), "no error");
}

TEST(HostilePaths, ARangeOverTheWholeInt64SpanIsBadInputWithItsFileLineAndField)
{
    Project range("", "N: {from: -9223372036854775808, to: 9223372036854775807}");
    Project scan("", "N: {scan: [-9223372036854775808, 9223372036854775807]}");
    for (const Project* p : {&range, &scan}) {
        const auto o = run_tool_captured(
            {"run", "--static", "--ci", p->suite.string(), "--out", (p->dir.path / "reports").string()});
        EXPECT_EQ(o.code, 2) << o.out << o.err;
        EXPECT_NE((o.out + o.err).find("writers.yaml:4:"), std::string::npos) << o.out << o.err;
        EXPECT_NE((o.out + o.err).find(": params.N"), std::string::npos) << o.out << o.err;
        EXPECT_NE((o.out + o.err).find("18446744073709551616 values"), std::string::npos) << o.out << o.err;
        EXPECT_EQ(o.out.find("NOTHING WAS GATED"), std::string::npos) << o.out;
    }
}

TEST(HostilePaths, CiModeFailsAMergedGateThatGatedNothing)
{
    // The second of two shards of a one-case suite holds no case: merged alone, nothing is gated.
    Project p;
    const fs::path shard = p.dir.path / "shard";
    auto o =
        run_tool_captured({"run", "--static", "--no-ci", "--shard", "2/2", p.suite.string(), "--out", shard.string()});
    ASSERT_EQ(o.code, 0) << o.out << o.err;
    const std::string results = (shard / "writers/results.json").string();
    const fs::path merged = p.dir.path / "merged";
    o = run_tool_captured(
        {"merge", results, "--allow-missing", "--gate", "--ci", "-o", (merged / "results.json").string()});
    EXPECT_EQ(o.code, 1) << o.out << o.err;
    EXPECT_NE(o.out.find("writers: CI mode: nothing was gated (0 cases), which fails the run"), std::string::npos)
        << o.out;
    o = run_tool_captured(
        {"merge", results, "--allow-missing", "--gate", "--no-ci", "-o", (merged / "results.json").string()});
    EXPECT_EQ(o.code, 0) << o.out << o.err;
}

TEST(HostileWriters, ReportIntoAFifoReachesItsReader)
{
    Project p;
    const fs::path out = p.dir.path / "reports";
    auto o = run_tool_captured({"run", "--static", "--no-ci", p.suite.string(), "--out", out.string()});
    ASSERT_EQ(o.code, 0) << o.out << o.err;
    const fs::path fifo = p.dir.path / "report.html";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    std::string received;
    std::thread reader([&] {
        const int fd = ::open(fifo.c_str(), O_RDONLY);
        char buffer[4096];
        for (ssize_t n; fd >= 0 && (n = ::read(fd, buffer, sizeof buffer)) > 0;)
            received.append(buffer, static_cast<std::size_t>(n));
        if (fd >= 0) ::close(fd);
    });
    // The reader opens the FIFO before the report is written: the writer refuses one nobody reads.
    for (int i = 0; i < 500; ++i) {
        o = run_tool_captured({"report", (out / "writers/results.json").string(), "-o", fifo.string()});
        if (o.code == 0) break;
        ::usleep(10000);
    }
    if (o.code != 0) ::close(::open(fifo.c_str(), O_WRONLY | O_NONBLOCK)); // lets the reader go
    reader.join();
    EXPECT_EQ(o.code, 0) << o.out << o.err;
    EXPECT_NE(received.find("<html"), std::string::npos) << received.substr(0, 200);
    struct stat st {};
    ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
    EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced";
}

TEST(HostileWriters, APipeNamedByItsDescriptorIsWrittenInto)
{
    // `-o >(gzip > report.html.gz)`: the shell passes /dev/fd/N, a link to the pipe.
    int ends[2];
    ASSERT_EQ(::pipe(ends), 0);
    std::string received;
    std::thread reader([&] {
        char buffer[4096];
        for (ssize_t n; (n = ::read(ends[0], buffer, sizeof buffer)) > 0;)
            received.append(buffer, static_cast<std::size_t>(n));
    });
    for (const std::string name : {"/dev/fd/", "/proc/self/fd/"})
        EXPECT_NO_THROW(write_file_atomically(name + std::to_string(ends[1]), "through " + name + "\n"));
    ::close(ends[1]);
    reader.join();
    ::close(ends[0]);
    EXPECT_EQ(received, "through /dev/fd/\nthrough /proc/self/fd/\n");
    // A descriptor of a regular file is no stream: its name is not written through.
    TempDir dir;
    const int file = ::open((dir.path / "own.txt").c_str(), O_WRONLY | O_CREAT, 0600);
    ASSERT_GE(file, 0);
    EXPECT_THROW(write_file_atomically("/dev/fd/" + std::to_string(file), "x"), Error);
    ::close(file);
    EXPECT_EQ(read_file(dir.path / "own.txt"), "");
}

TEST(HostileWriters, AFileSizeLimitFailsEveryWriterWithTheFileNamedAndLeavesNothing)
{
    TempDir dir;
    const fs::path report = dir.path / "reports/report.html";
    EXPECT_EQ(under_file_size_limit([&] { write_file_atomically(report, std::string(100000, 'x')); }, "report.html"),
              0);
    EXPECT_TRUE(snapshot(dir.path).empty()) << "a temporary file was left";

    // Baselines: a replacement of several files stages them first; the stage is removed.
    write_file(dir.path / "baselines/s/sm_80.csv", "old 80");
    write_file(dir.path / "baselines/s/sm_90.csv", "old 90");
    EXPECT_EQ(under_file_size_limit(
                  [&] {
                      replace_files_together({{dir.path / "baselines/s/sm_80.csv", "new 80"},
                                              {dir.path / "baselines/s/sm_90.csv", std::string(100000, 'y')}});
                  },
                  "sm_90.csv"),
              0);
    const auto left = snapshot(dir.path / "baselines");
    EXPECT_EQ(left, (std::map<std::string, std::string>{{"s/sm_80.csv", "old 80"}, {"s/sm_90.csv", "old 90"}}));
    EXPECT_EQ(std::distance(fs::directory_iterator(dir.path / "baselines/s"), fs::directory_iterator()), 2);
}

TEST(HostileWriters, WhatAKilledWriterLeftIsRemovedByTheNextOneNothingElse)
{
    TempDir dir;
    TempDir outside("hostile-writers-outside");
    const fs::path target = dir.path / "results.json";
    const auto plant = [&](const std::string& name, int seconds_ago) {
        write_file(dir.path / name, "partial");
        age(dir.path / name, seconds_ago);
    };
    plant("results.json.tmp.AbandonedOne", 3600); // a killed writer's: removed
    plant("results.json.tmp.JustCreated1", 0);    // too young to judge: a writer may be about to lock it
    plant("results.json.tmp.HeldOpenByMe", 3600); // locked: a writer is still at it
    plant("results.json.tmp.short", 3600);        // not a name the writer makes
    plant("report.html.tmp.AbandonedTwo", 3600);  // another file's: that file's writer removes it
    write_file(outside.path / "kept.txt", "kept");
    fs::create_symlink(outside.path / "kept.txt", dir.path / "results.json.tmp.LinkElsewher");
    age(dir.path / "results.json.tmp.LinkElsewher", 3600);
    const int held = ::open((dir.path / "results.json.tmp.HeldOpenByMe").c_str(), O_RDONLY);
    ASSERT_GE(held, 0);
    ASSERT_EQ(::flock(held, LOCK_EX), 0);

    write_file_atomically(target, "{}");
    ::close(held);

    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(dir.path)) names.insert(e.path().filename().string());
    EXPECT_EQ(names, (std::set<std::string>{"results.json", "results.json.tmp.JustCreated1",
                                            "results.json.tmp.HeldOpenByMe", "results.json.tmp.short",
                                            "report.html.tmp.AbandonedTwo", "results.json.tmp.LinkElsewher"}));
    EXPECT_EQ(read_file(outside.path / "kept.txt"), "kept");
    EXPECT_EQ(read_file(target), "{}");

    // The next run's reports remove what a killed run left beside them.
    Project p;
    const fs::path out = p.dir.path / "reports";
    write_file(out / "writers/junit.xml.tmp.KilledRunXml", "<testsuites");
    age(out / "writers/junit.xml.tmp.KilledRunXml", 3600);
    auto o = run_tool_captured({"run", "--static", "--no-ci", p.suite.string(), "--out", out.string()});
    EXPECT_EQ(o.code, 0) << o.out << o.err;
    EXPECT_FALSE(fs::exists(out / "writers/junit.xml.tmp.KilledRunXml"));
}

} // namespace hostile_paths_and_writers_test
