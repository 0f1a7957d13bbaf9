// CI mode and the project root: a run gives the same verdicts from any folder, and in CI mode
// it never passes while gating nothing.

#include "harness/cli/commands.hxx"
#include "harness/run/gpu_session.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"

#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <iostream>
#include <map>
#include <sstream>

namespace ci_gate_test {

using namespace harness;
namespace fs = std::filesystem;

namespace {

/// A scratch copy of the repository's suites, kernels and baselines: runs write reports into it.
struct ScratchProject {
    TempDir scratch{"harness-ci-gate"};
    fs::path root = scratch.path;
    ScratchProject()
    {
        for (const char* dir : {"suites", "kernels", "baselines"})
            fs::copy(repo_root() / dir, root / dir, fs::copy_options::recursive);
    }
};

/// Runs the tool with the working folder set to `cwd` and CI taken from `ci` ("" unsets it); what it
/// printed on stdout goes to `out` where given.
int run_in(const fs::path& cwd, const std::vector<std::string>& args, const char* ci = "", std::string* out = nullptr)
{
    const fs::path before = fs::current_path();
    const char* saved = std::getenv("CI");
    const std::string saved_value = saved ? saved : "";
    if (*ci)
        setenv("CI", ci, 1);
    else
        unsetenv("CI");
    fs::current_path(cwd);
    testing::internal::CaptureStdout();
    const int code = cli::run_tool(args);
    const std::string printed = testing::internal::GetCapturedStdout();
    if (out) *out = printed;
    // A run that fails shows what it printed, so that a failing expectation says why.
    if (code != 0 && !out) std::cerr << printed;
    fs::current_path(before);
    if (saved)
        setenv("CI", saved_value.c_str(), 1);
    else
        unsetenv("CI");
    return code;
}

} // namespace

TEST(ProjectRoot, ARunFromAnotherFolderFindsTheProjectsBaselinesAndWritesItsReports)
{
    ScratchProject p;
    const TempDir outside_project{"harness-ci-gate-elsewhere"};
    const fs::path& elsewhere = outside_project.path;
    const std::string suite = (p.root / "suites" / "transpose.yaml").string();

    EXPECT_EQ(run_in(p.root, {"run", "--static", "--ci", "--no-cache", "suites/transpose.yaml"}), 0);
    const std::string here = read_file(p.root / "reports" / "transpose" / "results.csv");
    fs::remove_all(p.root / "reports");
    // From elsewhere, in CI mode: the same baselines gate it (a missing one would fail).
    EXPECT_EQ(run_in(elsewhere, {"run", "--static", "--ci", "--no-cache", suite}), 0);
    EXPECT_FALSE(fs::exists(elsewhere / "reports"));
    EXPECT_FALSE(fs::exists(elsewhere / "baselines"));
    EXPECT_EQ(read_file(p.root / "reports" / "transpose" / "results.csv"), here);
    EXPECT_NE(here.find("passed"), std::string::npos);

    // baseline update from elsewhere writes into the project, not the working folder.
    EXPECT_EQ(run_in(elsewhere, {"baseline", "update", "--static", "--no-ci", "--no-cache", suite}), 0);
    EXPECT_FALSE(fs::exists(elsewhere / "baselines"));
}

TEST(CiMode, AMissingBaselineFailsAsNotGated)
{
    ScratchProject p;
    fs::remove(p.root / "baselines" / "transpose" / "sm_80.csv");
    const std::vector<std::string> args = {"run", "--static", "--no-cache", "suites/transpose.yaml"};
    EXPECT_EQ(run_in(p.root, args), 0);         // outside CI: friendly, with a note
    EXPECT_EQ(run_in(p.root, args, "true"), 1); // CI=true: the sm_80 figures were not gated
    const std::string junit = read_file(p.root / "reports" / "transpose" / "junit.xml");
    EXPECT_NE(junit.find("no baseline file"), std::string::npos) << junit.substr(0, 2000);
    EXPECT_EQ(run_in(p.root, {"run", "--static", "--ci", "--no-cache", "suites/transpose.yaml"}), 1);
    EXPECT_EQ(run_in(p.root, {"run", "--static", "--no-ci", "--no-cache", "suites/transpose.yaml"}, "true"), 0);
}

TEST(CiMode, ShardsAsTheTemplatesRunThemPassWhereTheyHoldNoCaseAndTheMergedGateGatesTheWhole)
{
    // triton_softmax has 3 points: of 4 shards one holds none (ci/github, ci/gitlab: `harness run
    // $HARNESS_SUITES --ci --shard i/4`, then `harness merge --gate` of the shards with CI=true).
    ScratchProject p;
    std::vector<std::string> shards;
    std::size_t empty = 0;
    for (int i = 1; i <= 4; ++i) {
        const std::string shard = fmt::format("{}/4", i), folder = fmt::format("shard-{}", i);
        std::string out;
        EXPECT_EQ(run_in(p.root,
                         {"run", "--static", "--ci", "--no-cache", "--shard", shard, "suites/triton_softmax.yaml",
                          "--out", folder},
                         "true", &out),
                  0)
            << out;
        shards.push_back((p.root / folder / "triton_softmax" / "results.json").string());
        if (out.find("shard " + shard + " holds no case of triton_softmax") != std::string::npos) ++empty;
        EXPECT_EQ(out.find("nothing was gated"), std::string::npos) << out;
    }
    EXPECT_EQ(empty, 1u);
    std::vector<std::string> merge = {"merge", "--gate"};
    merge.insert(merge.end(), shards.begin(), shards.end());
    merge.insert(merge.end(), {"-o", "merged/triton_softmax/results.json"});
    std::string out;
    EXPECT_EQ(run_in(p.root, merge, "true", &out), 0) << out;
    EXPECT_EQ(out.find("nothing was gated"), std::string::npos) << out;
}

TEST(CiMode, AMissingGpuFailsUnlessStaticWasAsked)
{
    std::string why;
    if (run::probe_device(0, &why)) GTEST_SKIP() << "a GPU is usable here: the run would not fall back";
    ScratchProject p;
    EXPECT_EQ(run_in(p.root, {"run", "--no-cache", "suites/transpose.yaml"}, "true"), 3);
    EXPECT_EQ(run_in(p.root, {"run", "--require-gpu", "--no-cache", "suites/transpose.yaml"}), 3);
    EXPECT_FALSE(fs::exists(p.root / "reports"));
    EXPECT_EQ(run_in(p.root, {"run", "--static", "--no-cache", "suites/transpose.yaml"}, "true"), 0);
}

TEST(CiMode, BaselinesAreNeverWritten)
{
    ScratchProject p;
    EXPECT_EQ(run_in(p.root, {"baseline", "update", "--static", "--no-cache", "suites/transpose.yaml"}, "true"), 2);
    EXPECT_EQ(run_in(p.root, {"baseline", "update", "--static", "--ci", "--no-cache", "suites/transpose.yaml"}), 2);
}

TEST(BaselineUpdate, ANoOpUpdateLeavesEveryFileByteIdentical)
{
    ScratchProject p;
    std::map<std::string, std::string> before;
    for (const auto& e : fs::recursive_directory_iterator(p.root / "baselines"))
        if (e.is_regular_file()) before[e.path().string()] = read_file(e.path());
    EXPECT_EQ(run_in(p.root, {"baseline", "update", "--static", "--no-ci", "suites/gemm.yaml", "suites/transpose.yaml",
                              "suites/reduce.yaml"}),
              0);
    std::map<std::string, std::string> after;
    for (const auto& e : fs::recursive_directory_iterator(p.root / "baselines"))
        if (e.is_regular_file()) after[e.path().string()] = read_file(e.path());
    EXPECT_EQ(after.size(), before.size());
    for (const auto& [path, text] : before) EXPECT_EQ(after[path], text) << path << " changed";
}

} // namespace ci_gate_test
