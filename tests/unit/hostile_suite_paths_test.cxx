// Paths and counts from suites, as an attacker writes them: a module path reads no environment
// variable but a documented folder variable, never prints one's value and never climbs out of its
// folder; a range or scan over the whole int64 span is refused instead of wrapping to no value;
// CI mode fails a run that gated nothing.

#include "harness/core/error.hxx"
#include "harness/suite/suite.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"
#include "tool_output.hxx"
#include "vector_add_project.hxx"

#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <string>

namespace hostile_suite_paths_test {

using namespace harness;
namespace fs = std::filesystem;

namespace {

const char* secret = "ghp_module_path_secret_5521";

/// A project with one vector_add kernel and a one-case suite, with a `module:` variant naming
/// `module` where it is not empty; `params` replaces its sweep.
struct Project : VectorAddProject {
    explicit Project(const std::string& module, const std::string& params = "N: [1024]")
        : VectorAddProject("paths", module.empty() ? std::string() : module_variant(module), params)
    {
    }
};

std::string everything_written(const fs::path& dir)
{
    std::string all;
    for (const auto& [name, text] : snapshot(dir)) all += name + "\n" + text + "\n";
    return all;
}

} // namespace

TEST(HostileSuitePaths, AModulePathReadsNoVariableButAFolderOneAndNeverShowsItsValue)
{
    setenv("HOSTILE_PATHS_TOKEN", secret, 1);
    {
        Project p("/${HOSTILE_PATHS_TOKEN}.cubin");
        const std::string e = p.load_error();
        EXPECT_NE(e.find("paths.yaml:17:13: variants.m.module: a module path is literal, or starts with one folder "
                         "variable ${NAME_DIR}"),
                  std::string::npos)
            << e;
        EXPECT_EQ(e.find(secret), std::string::npos) << e;
    }
    {
        // ${PWD} is no folder variable, and nothing follows a variable in mid-path.
        Project p("${PWD}/../../proc/self/status");
        EXPECT_NE(p.load_error().find("a module path is literal"), std::string::npos);
        Project q("build/${HOSTILE_PATHS_TOKEN}_DIR/x.cubin");
        EXPECT_NE(q.load_error().find("a module path is literal"), std::string::npos);
    }
    unsetenv("HOSTILE_PATHS_TOKEN");

    // A folder variable: its value is a folder, the module stays inside it, and no message shows it.
    TempDir build("hostile-build");
    setenv("HOSTILE_BUILD_DIR", build.path.c_str(), 1);
    {
        Project p("${HOSTILE_BUILD_DIR}/../../proc/self/status");
        EXPECT_NE(p.load_error().find("'..' would leave the folder ${HOSTILE_BUILD_DIR} names"), std::string::npos)
            << p.load_error();
    }
    {
        Project p("${HOSTILE_BUILD_DIR}/modules/missing.fatbin");
        EXPECT_EQ(p.load_error(), "no error");
        const fs::path out = p.dir.path / "reports";
        const auto o = run_tool_captured({"run", "--static", "--no-ci", p.suite.string(), "--out", out.string()});
        EXPECT_EQ(o.code, 1) << o.out << o.err; // the module variant's cases fail, not the run
        const std::string shown = o.out + o.err + everything_written(out);
        EXPECT_NE(shown.find("${HOSTILE_BUILD_DIR}/modules/missing.fatbin: no such module file"), std::string::npos)
            << shown;
        EXPECT_EQ(shown.find(build.path.string()), std::string::npos) << "the variable's value is shown";
    }
    unsetenv("HOSTILE_BUILD_DIR");
    {
        Project p("${HOSTILE_BUILD_DIR}/x.cubin");
        EXPECT_NE(p.load_error().find("the environment variable HOSTILE_BUILD_DIR is not set"), std::string::npos);
    }
}

TEST(HostileSuitePaths, ARangeOrScanOverTheWholeInt64SpanIsRefusedNotWrappedToNoValue)
{
    Project range("", "N: {from: -9223372036854775808, to: 9223372036854775807}");
    EXPECT_NE(
        range.load_error().find("params.N: the range has 18446744073709551616 values, more than the 10000 allowed"),
        std::string::npos)
        << range.load_error();
    Project scan("", "N: {scan: [-9223372036854775808, 9223372036854775807]}");
    EXPECT_NE(scan.load_error().find("params.N.scan: the scan has 18446744073709551616 values"), std::string::npos)
        << scan.load_error();
    // One value fewer than the limit allows still loads; one more does not.
    EXPECT_EQ(Project("", "N: {from: 1, to: 10000}").load_error(), "no error");
    EXPECT_NE(Project("", "N: {from: 0, to: 10000}").load_error().find("10001 values"), std::string::npos);
}

TEST(HostileSuitePaths, ACiShardWithNoCasePassesAndTheMergedGateOfEveryShardStillFailsWhenNothingWasGated)
{
    // Two shards of a one-point suite without baselines: the second holds no case, and passes in CI
    // mode, saying so.
    Project p("");
    const fs::path out = p.dir.path / "reports";
    auto o = run_tool_captured(
        {"run", "--static", "--ci", "--shard", "2/2", p.suite.string(), "--out", (out / "2").string()});
    EXPECT_EQ(o.code, 0) << o.out << o.err;
    EXPECT_NE(o.out.find("shard 2/2 holds no case of paths"), std::string::npos) << o.out;
    EXPECT_EQ(o.out.find("CI mode: nothing was gated"), std::string::npos) << o.out;
    // The shard that holds the point gated nothing of it (no baseline): it fails.
    o = run_tool_captured(
        {"run", "--static", "--ci", "--shard", "1/2", p.suite.string(), "--out", (out / "1").string()});
    EXPECT_EQ(o.code, 1) << o.out << o.err;
    EXPECT_NE(o.out.find("paths: CI mode: nothing was gated (1 cases), which fails the run"), std::string::npos)
        << o.out;
    EXPECT_EQ(o.out.find("holds no case"), std::string::npos) << o.out;
    // Every shard merged and gated in CI mode: nothing was gated over the whole, which fails.
    const std::vector<std::string> shards = {(out / "1/paths/results.json").string(),
                                             (out / "2/paths/results.json").string()};
    const std::string merged = (p.dir.path / "merged/results.json").string();
    o = run_tool_captured({"merge", shards[0], shards[1], "--gate", "--ci", "-o", merged});
    EXPECT_EQ(o.code, 1) << o.out << o.err;
    EXPECT_NE(o.out.find("paths: CI mode: nothing was gated (1 cases), which fails the run"), std::string::npos)
        << o.out;
    // Outside CI mode the run and the merge pass, saying that nothing was gated.
    o = run_tool_captured({"run", "--static", "--no-ci", p.suite.string(), "--out", (out / "whole").string()});
    EXPECT_EQ(o.code, 0) << o.out << o.err;
    EXPECT_NE(o.out.find("NOTHING WAS GATED"), std::string::npos) << o.out;
    o = run_tool_captured({"merge", shards[0], shards[1], "--gate", "--no-ci", "-o", merged});
    EXPECT_EQ(o.code, 0) << o.out << o.err;
}

} // namespace hostile_suite_paths_test
