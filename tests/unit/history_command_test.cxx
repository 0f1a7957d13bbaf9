// `harness history` end to end: record -> list -> page on the project's results files, and a
// scratch git repository whose commits hold a time step and a register step: the page shows
// exactly those two change points, in commit order.

#include "harness/cli/commands.hxx"
#include "harness/cli/exit_codes.hxx"
#include "harness/history/history_store.hxx"
#include "harness/history/suite_history.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"
#include "tool_output.hxx"

#include <cstdlib>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <random>

namespace history_command_test {

using namespace harness;
namespace fs = std::filesystem;

namespace {

using Outcome = ToolOutput;

Outcome tool(const std::vector<std::string>& args)
{
    return run_tool_captured(args);
}

bool run(const std::string& command)
{
    return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
}

} // namespace

TEST(HistoryCommand, RecordListPageRoundTripOnResultsFiles)
{
    TempDir dir;
    const std::string store = (dir.path / "store").string();
    const std::string gpu = (repo_root() / "tests/fixtures/gemm_results.json").string();
    const std::string static_run = (repo_root() / "tests/fixtures/gemm_static_results.json").string();
    auto o = tool({"history", "record", "--store", store, gpu, static_run, "--commit", "1111111111aa"});
    ASSERT_EQ(o.code, cli::exit_pass) << o.err;
    EXPECT_NE(o.out.find("recorded gemm at 1111111111aa (9 cases)"), std::string::npos) << o.out;
    o = tool({"history", "record", "--store", store, gpu, "--commit", "1111111111aa"});
    EXPECT_NE(o.out.find("already recorded"), std::string::npos) << o.out;

    o = tool({"history", "list", "--store", store});
    ASSERT_EQ(o.code, cli::exit_pass) << o.err;
    EXPECT_NE(o.out.find("gemm"), std::string::npos);
    EXPECT_NE(o.out.find("2 runs"), std::string::npos) << o.out;
    o = tool({"history", "list", "--store", store, "gemm"});
    EXPECT_NE(o.out.find("NVIDIA H200"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("static"), std::string::npos) << o.out;
    EXPECT_EQ(tool({"history", "list", "--store", store, "nosuch"}).code, cli::exit_bad_input);

    const fs::path page = dir.path / "gemm-history.html";
    o = tool({"history", "page", "--store", store, "gemm", "-o", page.string(), "--repo", dir.path.string()});
    ASSERT_EQ(o.code, cli::exit_pass) << o.err;
    const std::string html = read_file(page);
    EXPECT_NE(html.find("gemm — history"), std::string::npos);
    EXPECT_NE(html.find("<svg"), std::string::npos);
    EXPECT_NE(html.find("No series moved."), std::string::npos);
    EXPECT_EQ(html.find("http"), std::string::npos) << "self-contained";

    // A shard of a run is refused: the merge is what a history records.
    RunReport shard = read_results_json(gpu);
    shard.shard.count = 2;
    shard.shard.indices = {1};
    write_file(dir.path / "shard.json", results_json(shard));
    EXPECT_EQ(
        tool({"history", "record", "--store", store, (dir.path / "shard.json").string(), "--commit", "abc1234"}).code,
        cli::exit_bad_input);
}

// A run made from a tree with changes (its git_revision carries the dirty mark) measured no commit:
// recording it under the commit, even one given with --commit, would pass its figures off as the
// commit's.
TEST(HistoryCommand, ARunOfATreeWithChangesIsNotRecorded)
{
    TempDir dir;
    const std::string store = (dir.path / "store").string();
    RunReport run = read_results_json(repo_root() / "tests/fixtures/gemm_results.json");
    run.git_revision = "3f9c2e1a7b4d+dirty";
    const fs::path file = dir.path / "results.json";
    write_file(file, results_json(run));
    for (const std::vector<std::string>& commit : {std::vector<std::string>{}, {"--commit", "3f9c2e1a7b4d"}}) {
        std::vector<std::string> args = {"history", "record", "--store", store, file.string()};
        args.insert(args.end(), commit.begin(), commit.end());
        const auto o = tool(args);
        EXPECT_EQ(o.code, cli::exit_bad_input) << o.out;
        EXPECT_NE(o.err.find("made from a working tree with changes to tracked files (revision 3f9c2e1a7b4d+dirty)"),
                  std::string::npos)
            << o.err;
    }
    const history::HistoryStore history_store(store);
    history_store.refresh_index();
    EXPECT_TRUE(history_store.list_runs("gemm").empty());

    run.git_revision = "3f9c2e1a7b4d";
    write_file(file, results_json(run));
    EXPECT_EQ(tool({"history", "record", "--store", store, file.string()}).code, cli::exit_pass);
    history_store.refresh_index();
    EXPECT_EQ(history_store.list_runs("gemm").size(), 1u);
}

TEST(HistoryCommand, AScratchRepositoryShowsExactlyItsTwoChanges)
{
    if (!run("git --version")) GTEST_SKIP() << "git is not installed";
    TempDir dir;
    const fs::path repo = dir.path / "repo";
    fs::create_directories(repo);
    const std::string git = fmt::format("git -C '{}' -c user.name=t -c user.email=t@t ", repo.string());
    ASSERT_TRUE(run(git + "init -q"));
    const RunReport base = read_results_json(repo_root() / "tests/fixtures/gemm_results.json");
    std::mt19937 rng(5);
    std::normal_distribution<double> noise(0.0, 0.002);
    const std::string store = (dir.path / "store").string();
    // 16 commits, 3 runs each: tiled32's time steps up 4 % at commit 6, its registers at commit 11.
    for (int commit = 0; commit < 16; ++commit) {
        write_file(repo / "kernel.cu", fmt::format("// version {}\n", commit));
        ASSERT_TRUE(run(git + "add kernel.cu") && run(git + "commit -q -m v" + std::to_string(commit)));
        for (int k = 0; k < 3; ++k) {
            RunReport r = base;
            for (auto& c : r.results) {
                const double slower = c.variant == "tiled32" && commit >= 6 ? 1.04 : 1.0;
                const double run_offset = 1.0 + noise(rng);
                for (auto& s : c.time_samples_us) s *= slower * run_offset;
                if (c.variant == "tiled32" && commit >= 11) c.set_metric("registers", 64);
            }
            const fs::path file = dir.path / fmt::format("runs/{}-{}/results.json", commit, k);
            write_file(file, results_json(r));
            const auto o = tool(
                {"history", "record", "--store", store, file.string(), "--commit", "HEAD", "--repo", repo.string()});
            ASSERT_EQ(o.code, cli::exit_pass) << o.err;
        }
    }
    const history::HistoryStore s(store);
    s.refresh_index();
    const auto h = history::build_suite_history("gemm", s.load_runs("gemm"),
                                                history::CommitOrder(history::first_parent_order(repo)));
    ASSERT_EQ(h.commits.size(), 16u);
    std::vector<std::string> found;
    for (const auto& series : h.series) {
        for (const auto& c : series.analysis.change_points)
            found.push_back(fmt::format("{} {} {} @{}", series.case_label(), series.arch, series.metric, c.index));
        EXPECT_FALSE(series.analysis.creep) << series.case_label() << " " << series.metric;
    }
    std::string all;
    for (const auto& f : found) all += f + "\n";
    // tiled32 at each of its three sizes, and nothing else: naive and vectorized only wobble.
    ASSERT_EQ(found.size(), 6u) << all;
    for (const char* size : {"N=1024", "N=2048", "N=4096"}) {
        EXPECT_NE(all.find(fmt::format("tiled32 {} sm_90 time_median @6", size)), std::string::npos) << all;
        EXPECT_NE(all.find(fmt::format("tiled32 {} sm_90 registers @11", size)), std::string::npos) << all;
    }

    const fs::path page = dir.path / "page.html";
    const auto o = tool({"history", "page", "--store", store, "gemm", "-o", page.string(), "--repo", repo.string()});
    ASSERT_EQ(o.code, cli::exit_pass) << o.err;
    EXPECT_NE(o.out.find("6 change points, 0 creeps"), std::string::npos) << o.out;
    const std::string html = read_file(page);
    EXPECT_NE(html.find("results.json</a>"), std::string::npos) << "links to the run reports";
    EXPECT_NE(html.find("first-parent order"), std::string::npos);
}

} // namespace history_command_test
