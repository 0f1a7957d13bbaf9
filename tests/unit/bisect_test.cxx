// `harness bisect` on scratch git repositories built from the project's register-cliff kernel: it
// names the commit that crossed the occupancy boundary in the static tier, skips a commit that
// does not compile, leaves the user's work tree, index and worktree list as they were, and refuses
// bad revisions. The search and the time verdict are also tested on their own, on synthetic input.

#include "harness/cli/commands.hxx"
#include "harness/compare/bisect_verdict.hxx"
#include "harness/pipeline/bisect.hxx"
#include "harness/pipeline/git_repository.hxx"
#include "scratch_repository.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"

#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <sys/wait.h>
#include <unistd.h>

namespace bisect_test {

using namespace harness;
namespace fs = std::filesystem;

namespace {

/// How each commit of a scratch history changes the kernel.
struct History {
    int commits = 32;  ///< after the first one
    int cliff_at = 19; ///< the commit that lowers MIN_BLOCKS to 6
    int broken_at = 0; ///< a commit whose kernel does not compile (the next one mends it); 0: none
};

/// A repository whose commit 0 holds the suite and kernel and whose commits 1..n each make a benign
/// edit (a comment in the kernel, or a line of an unrelated file), one of them the cliff. Returns
/// the hash of every commit, 0 first.
std::vector<std::string> make_history(const fs::path& repo, const History& h)
{
    fs::create_directories(repo);
    git(repo, {"init", "-q"});
    std::vector<std::string> hashes;
    int min_blocks = 8;
    for (int k = 0; k <= h.commits; ++k) {
        std::string subject = k == 0 ? "add the walk suite" : fmt::format("edit number {}", k);
        if (k == h.cliff_at) {
            min_blocks = 6;
            subject = "let the walk keep its sums in registers";
        }
        const bool broken = h.broken_at > 0 && k == h.broken_at;
        if (broken) subject = "half-finished edit";
        if (k == 0) write_file(repo / "suites" / "walk.yaml", walk_suite_text);
        if (k % 2 == 0 || k == h.cliff_at || broken || k == h.broken_at + 1)
            write_file(repo / "kernels" / "register_cliff.cu",
                       kernel_text(min_blocks, fmt::format("revision {}", k), broken));
        else
            write_file(repo / "notes.txt", fmt::format("tuning notes, revision {}\n", k));
        git(repo, {"add", "-A"});
        git(repo, {"commit", "-q", "-m", subject});
        hashes.push_back(git(repo, {"rev-parse", "HEAD"}));
    }
    return hashes;
}

struct BisectRun {
    int code = -1;
    nlohmann::json result;
};

BisectRun run_bisect(const fs::path& repo, const fs::path& json, std::vector<std::string> revs)
{
    std::vector<std::string> args = {"bisect"};
    args.insert(args.end(), revs.begin(), revs.end());
    for (const std::string a : {"--static", "--arch", "sm_90", "--case", "walk", "N=1048576", "--no-cache", "--json"})
        args.push_back(a);
    args.push_back(json.string());
    args.push_back((repo / "suites" / "walk.yaml").string());
    BisectRun run;
    run.code = cli::run_tool(args);
    if (fs::exists(json)) run.result = nlohmann::json::parse(read_file(json));
    return run;
}

const nlohmann::json* change_of(const nlohmann::json& result, const std::string& metric)
{
    for (const auto& c : result["changes"])
        if (c["metric"] == metric) return &c;
    return nullptr;
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

} // namespace

TEST(Bisect, NamesTheRegisterCliffCommitInLogarithmicSteps)
{
    TempDir dir("harness-bisect-test");
    const fs::path repo = dir.path / "repo";
    const History history;
    const auto hashes = make_history(repo, history);
    ASSERT_EQ(hashes.size(), 33u);

    const auto run = run_bisect(repo, dir.path / "bisect.json", {"--good", hashes.front(), "--bad", "HEAD"});
    ASSERT_EQ(run.code, 0);
    const auto& r = run.result;
    EXPECT_EQ(r["schema"], "harness-bisect");
    EXPECT_EQ(r["schema_version"], pipeline::bisect_schema_version);
    EXPECT_EQ(r["outcome"], "found");
    EXPECT_EQ(r["mode"], "static");
    EXPECT_EQ(r["commits"], 32);
    EXPECT_EQ(r["first"]["hash"], hashes[history.cliff_at]);
    EXPECT_EQ(r["first"]["subject"], "let the walk keep its sums in registers");
    EXPECT_FALSE(r["first"]["author_date"].get<std::string>().empty());
    // Both ends and the steps: log2(32) + 2 = 7 runs at most.
    const int runs = r["runs"];
    const int bound = static_cast<int>(std::log2(32.0)) + 2;
    EXPECT_LE(runs, bound);
    EXPECT_EQ(r["steps"].size(), static_cast<std::size_t>(runs));
    std::printf("bisect over %d commits: %d runs (bound %d), %.1f s\n", r["commits"].get<int>(), runs, bound,
                r["wall_s"].get<double>());

    const auto* registers = change_of(r, "registers");
    ASSERT_NE(registers, nullptr) << r.dump(2);
    EXPECT_EQ((*registers)["before"], 32.0);
    EXPECT_EQ((*registers)["after"], 40.0);
    EXPECT_EQ((*registers)["arch"], "sm_90");
    const auto* occupancy = change_of(r, "theoretical_occupancy");
    ASSERT_NE(occupancy, nullptr);
    EXPECT_EQ((*occupancy)["before"], 1.0);
    EXPECT_EQ((*occupancy)["after"], 0.75);
    EXPECT_NE((*occupancy)["message"].get<std::string>().find("occupancy cliff: registers 32 -> 40"), std::string::npos)
        << (*occupancy)["message"];
}

TEST(Bisect, SkipsACommitThatDoesNotCompile)
{
    TempDir dir("harness-bisect-test");
    const fs::path repo = dir.path / "repo";
    // Commit 16 is the search's first midpoint: it cannot be judged, and a neighbour is tried.
    const History history{.commits = 32, .cliff_at = 19, .broken_at = 16};
    const auto hashes = make_history(repo, history);

    const auto run = run_bisect(repo, dir.path / "bisect.json", {"--good", hashes.front(), "--bad", hashes.back()});
    ASSERT_EQ(run.code, 0);
    const auto& r = run.result;
    EXPECT_EQ(r["first"]["hash"], hashes[history.cliff_at]);
    bool skipped = false;
    for (const auto& s : r["steps"])
        if (s["commit"] == hashes[history.broken_at]) {
            EXPECT_EQ(s["verdict"], "skipped");
            EXPECT_NE(s["note"].get<std::string>().find("compile_error"), std::string::npos) << s["note"];
            skipped = true;
        }
    EXPECT_TRUE(skipped) << r["steps"].dump(2);
    std::printf("with a skipped commit: %d runs\n", r["runs"].get<int>());
}

TEST(Bisect, LeavesTheWorkTreeIndexAndWorktreeListAlone)
{
    TempDir dir("harness-bisect-test");
    const fs::path repo = dir.path / "repo";
    const History history{.commits = 8, .cliff_at = 5};
    const auto hashes = make_history(repo, history);
    // Work in progress: an edit staged, another not, and a file git does not track.
    write_file(repo / "notes.txt", "staged edit\n");
    git(repo, {"add", "notes.txt"});
    write_file(repo / "notes.txt", "staged edit, then more\n");
    write_file(repo / "scratch.txt", "untracked\n");
    const auto files_before = snapshot(repo);
    const std::string index_before = git(repo, {"ls-files", "--stage"});
    const std::string status_before = git(repo, {"status", "--porcelain"});
    const std::string head_before = git(repo, {"rev-parse", "HEAD"});

    const auto run = run_bisect(repo, dir.path / "bisect.json", {"--good", hashes.front(), "--bad", "main"});
    ASSERT_EQ(run.code, 0);
    EXPECT_EQ(run.result["first"]["hash"], hashes[history.cliff_at]);

    EXPECT_EQ(snapshot(repo), files_before);
    EXPECT_EQ(git(repo, {"ls-files", "--stage"}), index_before);
    EXPECT_EQ(git(repo, {"status", "--porcelain"}), status_before);
    EXPECT_EQ(git(repo, {"rev-parse", "HEAD"}), head_before);
    EXPECT_EQ(worktree_count(repo), 1);
    EXPECT_FALSE(fs::exists(repo / ".git" / "worktrees") && !fs::is_empty(repo / ".git" / "worktrees"));
}

TEST(Bisect, EqualFiguresAtBothEndsAreNotFound)
{
    TempDir dir("harness-bisect-test");
    const fs::path repo = dir.path / "repo";
    const auto hashes = make_history(repo, {.commits = 4, .cliff_at = 99});
    const auto run = run_bisect(repo, dir.path / "bisect.json", {"--good", hashes.front(), "--bad", "HEAD"});
    EXPECT_EQ(run.code, 1);
    EXPECT_EQ(run.result["outcome"], "unchanged");
    EXPECT_EQ(worktree_count(repo), 1);
}

TEST(Bisect, EqualEndsWithAChangeAndItsRevertBetweenAreNotFound)
{
    TempDir dir("harness-bisect-test");
    const fs::path repo = dir.path / "repo";
    auto hashes = make_history(repo, {.commits = 8, .cliff_at = 4});
    // The cliff undone: the ends agree, whatever lies between them.
    write_file(repo / "kernels" / "register_cliff.cu", kernel_text(8, "the cliff undone"));
    git(repo, {"commit", "-q", "-a", "-m", "undo the register change"});
    const auto run = run_bisect(repo, dir.path / "bisect.json", {"--good", hashes.front(), "--bad", "HEAD"});
    EXPECT_EQ(run.code, 1) << run.result.dump(2);
    EXPECT_EQ(run.result["outcome"], "unchanged");
    // The bad end was run, and it was the only run besides the good one.
    ASSERT_EQ(run.result["steps"].size(), 2u) << run.result.dump(2);
    EXPECT_EQ(run.result["steps"][1]["role"], "bad");
    EXPECT_EQ(worktree_count(repo), 1);
}

TEST(Bisect, NegativeRevisionsAndRangesAreBadInput)
{
    TempDir dir("harness-bisect-test");
    const fs::path repo = dir.path / "repo";
    const auto hashes = make_history(repo, {.commits = 2, .cliff_at = 2});
    for (const std::string& bad : std::vector<std::string>{"^HEAD", hashes.front() + "..HEAD", "HEAD^{tree}"}) {
        const auto run = run_bisect(repo, dir.path / "bisect.json", {"--good", hashes.front(), "--bad", bad});
        EXPECT_EQ(run.code, 2) << bad;
    }
    EXPECT_EQ(run_bisect(repo, dir.path / "bisect.json", {"--good", "^" + hashes.front(), "--bad", "HEAD"}).code, 2);
}

TEST(Bisect, StepsRunNoHookAndCheckOutSubmodulesFromTheClone)
{
    TempDir dir("harness-bisect-test");
    // A library in a repository of its own, a submodule of the project: the kernel includes its header.
    const fs::path library = dir.path / "library";
    make_header_library(library, "walk_note.h", "// a header the walk kernel includes from the submodule\n");

    const fs::path repo = dir.path / "repo";
    fs::create_directories(repo);
    git(repo, {"init", "-q"});
    git(repo, {"-c", "protocol.file.allow=always", "submodule", "add", "-q", library.string(), "lib"});
    write_file(repo / "suites" / "walk.yaml", walk_suite_text);
    const auto kernel = [](int min_blocks, const std::string& note) {
        return "#include \"../lib/walk_note.h\"\n" + kernel_text(min_blocks, note);
    };
    write_file(repo / "kernels" / "register_cliff.cu", kernel(8, "first"));
    git(repo, {"add", "-A"});
    git(repo, {"commit", "-q", "-m", "the walk with the library"});
    const std::string good = git(repo, {"rev-parse", "HEAD"});
    for (int k = 1; k <= 4; ++k) {
        write_file(repo / "kernels" / "register_cliff.cu", kernel(k >= 3 ? 6 : 8, fmt::format("revision {}", k)));
        git(repo, {"commit", "-q", "-a", "-m", fmt::format("edit {}", k)});
    }
    // A hook that would leave a mark at every checkout.
    const fs::path mark = dir.path / "hook-ran";
    write_file(repo / ".git" / "hooks" / "post-checkout", "#!/bin/sh\ntouch '" + mark.string() + "'\n");
    fs::permissions(repo / ".git" / "hooks" / "post-checkout", fs::perms::owner_all);

    const auto run = run_bisect(repo, dir.path / "bisect.json", {"--good", good, "--bad", "HEAD"});
    ASSERT_EQ(run.code, 0) << run.result.dump(2);
    EXPECT_EQ(run.result["first"]["subject"], "edit 3");
    EXPECT_FALSE(fs::exists(mark)) << "the post-checkout hook ran in a step";
    EXPECT_EQ(worktree_count(repo), 1);
}

TEST(Bisect, AStepFolderWhoseProcessIsGoneIsRemovedByTheNextBisect)
{
    TempDir dir("harness-bisect-test");
    const fs::path repo = dir.path / "repo";
    const auto hashes = make_history(repo, {.commits = 2, .cliff_at = 2});
    // A folder a killed bisect left: its owner is a process that has ended.
    const pid_t gone = fork();
    if (gone == 0) _exit(0);
    waitpid(gone, nullptr, 0);
    const fs::path left = fs::temp_directory_path() / fmt::format("harness-bisect-left-{}", getpid());
    fs::create_directories(left / "tree");
    write_file(left / "owner.pid", fmt::format("{}\n", gone));
    // One whose owner still runs is left alone.
    const fs::path running = fs::temp_directory_path() / fmt::format("harness-bisect-running-{}", getpid());
    fs::create_directories(running);
    write_file(running / "owner.pid", fmt::format("{}\n", getpid()));

    EXPECT_EQ(run_bisect(repo, dir.path / "bisect.json", {"--good", hashes.front(), "--bad", "HEAD"}).code, 0);
    EXPECT_FALSE(fs::exists(left));
    EXPECT_TRUE(fs::exists(running));
    fs::remove_all(running);
}

TEST(Bisect, BadRevisionsAndMissingSuitesAreBadInput)
{
    TempDir dir("harness-bisect-test");
    const fs::path repo = dir.path / "repo";
    const auto hashes = make_history(repo, {.commits = 3, .cliff_at = 2});
    const fs::path json = dir.path / "bisect.json";
    EXPECT_EQ(run_bisect(repo, json, {"--good", "no-such-revision", "--bad", "HEAD"}).code, 2);
    EXPECT_EQ(run_bisect(repo, json, {"--good", hashes.front(), "--bad", "HEAD~99"}).code, 2);
    EXPECT_EQ(run_bisect(repo, json, {"--good=--output=x", "--bad", "HEAD"}).code, 2);
    // Reversed: the bad commit is not after the good one.
    EXPECT_EQ(run_bisect(repo, json, {"--good", "HEAD", "--bad", hashes.front()}).code, 2);
    // The suite did not exist at the good commit.
    git(repo, {"checkout", "-q", "--orphan", "other"});
    git(repo, {"rm", "-r", "-q", "--cached", "."});
    write_file(repo / "README", "another line of history\n");
    git(repo, {"add", "README"});
    git(repo, {"commit", "-q", "-m", "a root without the suite"});
    const std::string orphan = git(repo, {"rev-parse", "HEAD"});
    git(repo, {"checkout", "-q", "-f", "main"});
    git(repo, {"merge", "-q", "--allow-unrelated-histories", "-m", "merge", orphan});
    EXPECT_EQ(run_bisect(repo, json, {"--good", orphan, "--bad", "HEAD"}).code, 2);
    // A metric it cannot judge, and a suite that is not in the repository.
    for (const auto& [args, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
             {{"--metric", "no_such_metric"}, "--metric no_such_metric: no such metric"},
             {{"--metric", "dram_read_bytes"}, "of the noisy figures, bisect judges time_median and time_min only"}}) {
        std::vector<std::string> revs = {"--good", hashes.front(), "--bad", "HEAD"};
        revs.insert(revs.end(), args.begin(), args.end());
        testing::internal::CaptureStderr();
        EXPECT_EQ(run_bisect(repo, json, revs).code, 2) << message;
        const std::string err = testing::internal::GetCapturedStderr();
        EXPECT_NE(err.find(message), std::string::npos) << err;
    }
    // A suite not found here is looked for in the current folder's repository.
    const fs::path was = fs::current_path();
    fs::current_path(repo);
    testing::internal::CaptureStderr();
    const int outside = cli::run_tool({"bisect", "--good", "HEAD~1", "--bad", "HEAD", "--static", "--no-cache",
                                       "--json", json.string(), "../elsewhere/walk.yaml"});
    const std::string err = testing::internal::GetCapturedStderr();
    fs::current_path(was);
    EXPECT_EQ(outside, 2);
    EXPECT_NE(err.find("../elsewhere/walk.yaml: not inside the git repository at"), std::string::npos) << err;
    EXPECT_FALSE(fs::exists(json)) << "nothing is written for bad input";
    EXPECT_EQ(worktree_count(repo), 1);
}

namespace {

/// The walk suite with its kernel as the project's own nvcc builds it: a cubin in the folder a
/// relative build folder variable names (WALK_BUILD_DIR=build), as a CI template sets it.
const std::string module_walk_suite_text = R"yaml(suite: walk
description: a register-limited occupancy cliff across commits, in an nvcc-built cubin
archs: [sm_90]
params:
  N: [1048576]
reference: walk
buffers:
  in: {type: f32, count: N, init: uniform, seed: 1, min: 0, max: 1, role: in}
  out: {type: f32, count: N, init: zeros, role: out}
variants:
  walk:
    module: ${WALK_BUILD_DIR}/register_cliff.cubin
    entry: register_cliff
    block: [256]
    grid: ["ceil_div(N, 256)"]
    args: [in, out, {i32: N}]
)yaml";

/// An environment variable set for the object's lifetime, then restored.
class ScopedVariable {
public:
    ScopedVariable(const char* name, const std::string& value) : name_(name)
    {
        if (const char* old = std::getenv(name)) old_ = old;
        ::setenv(name, value.c_str(), 1);
    }
    ~ScopedVariable()
    {
        if (old_)
            ::setenv(name_, old_->c_str(), 1);
        else
            ::unsetenv(name_);
    }
    ScopedVariable(const ScopedVariable&) = delete;
    ScopedVariable& operator=(const ScopedVariable&) = delete;

private:
    const char* name_;
    std::optional<std::string> old_;
};

/// The working folder moved for the object's lifetime, then restored.
class ScopedWorkingFolder {
public:
    explicit ScopedWorkingFolder(const fs::path& folder) : was_(fs::current_path()) { fs::current_path(folder); }
    ~ScopedWorkingFolder() { fs::current_path(was_); }
    ScopedWorkingFolder(const ScopedWorkingFolder&) = delete;
    ScopedWorkingFolder& operator=(const ScopedWorkingFolder&) = delete;

private:
    fs::path was_;
};

} // namespace

TEST(Bisect, AModuleSuiteReadsARelativeBuildFolderInEachStepsWorktree)
{
    const fs::path nvcc = fs::path(HARNESS_CUDA_BIN_DIR) / "nvcc";
    if (!fs::exists(nvcc)) GTEST_SKIP() << "no nvcc at " << nvcc;
    TempDir dir("harness-bisect-test");
    const fs::path repo = dir.path / "repo";
    fs::create_directories(repo);
    git(repo, {"init", "-q"});
    write_file(repo / ".gitignore", "build/\n");
    write_file(repo / "suites" / "walk.yaml", module_walk_suite_text);
    std::vector<std::string> hashes;
    constexpr int planted = 4;
    for (int k = 0; k <= 6; ++k) {
        write_file(repo / "kernels" / "register_cliff.cu",
                   kernel_text(k >= planted ? 6 : 8, fmt::format("edit {}", k)));
        git(repo, {"add", "-A"});
        git(repo, {"commit", "-q", "-m",
                   k == planted ? "let the walk keep its sums in registers" : fmt::format("edit number {}", k)});
        hashes.push_back(git(repo, {"rev-parse", "HEAD"}));
    }
    // The project's build, run in each step's worktree: the cubin into ./build, which the suite names
    // through WALK_BUILD_DIR=build, relative, as the CI templates set it.
    const std::string build = fmt::format("mkdir -p build && '{}' -cubin -arch=sm_90 -lineinfo -DPARTIALS=16 -o "
                                          "build/register_cliff.cubin kernels/register_cliff.cu",
                                          nvcc.string());
    const ScopedVariable build_dir("WALK_BUILD_DIR", "build");
    const ScopedWorkingFolder in_checkout(repo);
    // The checkout's own build, of the bad commit: a step that read it instead of its own would see
    // the bad figures at every commit and find nothing.
    ASSERT_EQ(run_program({"/bin/sh", "-c", build}, repo, false).exit_code, 0);

    const fs::path json = dir.path / "bisect.json";
    const int code = cli::run_tool({"bisect", "--good", hashes.front(), "--bad", "HEAD", "--static", "--arch", "sm_90",
                                    "--no-cache", "--build", build, "--json", json.string(), "suites/walk.yaml"});
    ASSERT_EQ(code, 0) << (fs::exists(json) ? read_file(json) : "no JSON");
    const auto r = nlohmann::json::parse(read_file(json));
    EXPECT_EQ(r["outcome"], "found");
    EXPECT_EQ(r["first"]["hash"], hashes[planted]) << r.dump(2);
    const auto* registers = change_of(r, "registers");
    ASSERT_NE(registers, nullptr) << r.dump(2);
    EXPECT_LT((*registers)["before"].get<double>(), (*registers)["after"].get<double>());
    EXPECT_EQ(worktree_count(repo), 1);
}

TEST(Bisect, OutsideAGitRepositoryIsAnEnvironmentError)
{
    TempDir dir("harness-bisect-test");
    write_file(dir.path / "suites" / "walk.yaml", walk_suite_text);
    write_file(dir.path / "kernels" / "register_cliff.cu", kernel_text(8, "no history"));
    EXPECT_EQ(run_bisect(dir.path, dir.path / "bisect.json", {"--good", "HEAD~1", "--bad", "HEAD"}).code, 3);
}

// The search on its own: every position of the first change among n commits, with the probes counted.
TEST(BisectSearch, FindsEveryPositionWithinTheBound)
{
    for (std::size_t n : {1u, 2u, 3u, 7u, 8u, 31u, 32u, 33u, 64u, 100u})
        for (std::size_t first = 0; first < n; ++first) {
            int probes = 0;
            const auto found = pipeline::search_first_change(n, [&](std::size_t i) {
                ++probes;
                return i >= first ? pipeline::Probe::different : pipeline::Probe::same;
            });
            ASSERT_EQ(found.outcome, pipeline::BisectOutcome::found) << n << " " << first;
            EXPECT_EQ(found.first, first);
            EXPECT_LE(probes, static_cast<int>(std::ceil(std::log2(static_cast<double>(n)))) + 1) << n << " " << first;
        }
}

TEST(BisectSearch, SkippedCommitsAreWorkedAroundOrGiveARange)
{
    const auto with_skips = [](std::size_t n, std::size_t first, std::vector<std::size_t> skip) {
        return pipeline::search_first_change(n, [&](std::size_t i) {
            if (std::find(skip.begin(), skip.end(), i) != skip.end()) return pipeline::Probe::skipped;
            return i >= first ? pipeline::Probe::different : pipeline::Probe::same;
        });
    };
    auto r = with_skips(32, 18, {15});
    EXPECT_EQ(r.outcome, pipeline::BisectOutcome::found);
    EXPECT_EQ(r.first, 18u);
    // Only the skipped commit 17 lies between the last same (16) and the first different (18).
    r = with_skips(32, 18, {17});
    EXPECT_EQ(r.outcome, pipeline::BisectOutcome::range);
    EXPECT_EQ(r.first, 17u);
    EXPECT_EQ(r.last, 18u);
    r = with_skips(8, 3, {0, 1, 2, 3, 4, 5, 6});
    EXPECT_EQ(r.outcome, pipeline::BisectOutcome::range);
    EXPECT_EQ(r.first, 0u);
    EXPECT_EQ(r.last, 7u);
    r = with_skips(8, 99, {});
    EXPECT_EQ(r.outcome, pipeline::BisectOutcome::unchanged);
    r = with_skips(8, 99, {7});
    EXPECT_TRUE(r.bad_skipped);
}

// The time verdict on synthetic samples: a 4 % step with 0.5 % noise, and samples that cannot tell.
TEST(BisectTimeVerdict, SameDifferentOrUnsure)
{
    std::mt19937 rng(7);
    const auto sample = [&](double centre, double noise, int count) {
        std::normal_distribution<double> d(centre, centre * noise);
        std::vector<double> v;
        for (int i = 0; i < count; ++i) v.push_back(d(rng));
        return v;
    };
    const auto good = sample(100.0, 0.005, 30);
    const auto bad = sample(104.0, 0.005, 30);
    using compare::StepVerdict;
    EXPECT_EQ(compare::compare_samples(good, bad), StepVerdict::different);
    EXPECT_EQ(compare::time_step_verdict(good, bad, sample(100.0, 0.005, 30)), StepVerdict::same);
    EXPECT_EQ(compare::time_step_verdict(good, bad, sample(104.0, 0.005, 30)), StepVerdict::different);
    // Too few samples to say anything.
    EXPECT_EQ(compare::time_step_verdict(good, bad, sample(104.0, 0.005, 3)), StepVerdict::unsure);
    // Noise far above the step: the samples match neither end clearly.
    EXPECT_EQ(compare::time_step_verdict(good, bad, sample(102.0, 0.05, 8)), StepVerdict::unsure);
    // Between two changes: unlike both ends; the nearer median decides.
    EXPECT_EQ(compare::time_step_verdict(good, bad, sample(103.0, 0.002, 30)), StepVerdict::different);
    EXPECT_EQ(compare::time_step_verdict(good, bad, sample(101.0, 0.002, 30)), StepVerdict::same);
    EXPECT_STREQ(compare::step_verdict_name(StepVerdict::unsure), "unsure");
}

} // namespace bisect_test
