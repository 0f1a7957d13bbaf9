// The history store: run files round-trip, the same run twice is one file, concurrent writers
// lose nothing, the index follows the folder, and nothing outside the store is read.

#include "harness/core/error.hxx"
#include "harness/history/history_store.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace history_store_test {

using namespace harness;
using namespace harness::history;
namespace fs = std::filesystem;

namespace {

RunRecord fixture_record(const std::string& commit)
{
    const RunReport run = read_results_json(repo_root() / "tests/fixtures/gemm_results.json");
    return record_from_report(run, commit, "2026-01-02T03:04:05Z", "/ci/reports/gemm/results.json");
}

} // namespace

TEST(HistoryStore, ARunFileReadsBackAsWritten)
{
    const RunRecord r = fixture_record("3f9c2e1a7b4d");
    const std::string text = run_file_text(r);
    const RunRecord back = parse_run_file(text, "run file");
    EXPECT_EQ(run_file_text(back), text);
    ASSERT_EQ(back.cases.size(), 9u);
    const auto& c = back.cases[0];
    EXPECT_EQ(c.variant, "naive");
    EXPECT_EQ(c.figure("registers"), 32.0);
    ASSERT_TRUE(c.time);
    EXPECT_EQ(c.time->samples, 12u);
    EXPECT_LE(c.time->quantiles_us.size(), max_time_quantiles);
    EXPECT_NEAR(c.time->median_us, 1386.675, 1e-9);
    EXPECT_THROW(parse_run_file("{\"schema\":\"harness-history-run\",\"schema_version\":99}", "f"), Error);
    std::printf("gemm run file (9 cases, %zu figures each): %zu bytes\n", c.figures.size(), text.size());
}

TEST(HistoryStore, TheSameRunTwiceIsOneFileAndTheIndexHoldsIt)
{
    TempDir dir;
    const HistoryStore store(dir.path / "store");
    const auto first = store.add(fixture_record("3f9c2e1a7b4d"));
    const auto again = store.add(fixture_record("3f9c2e1a7b4d"));
    EXPECT_TRUE(first.added);
    EXPECT_FALSE(again.added);
    EXPECT_EQ(first.file, again.file);
    store.add(fixture_record("aaaaaaaaaaaa"));
    const auto refresh = store.refresh_index();
    EXPECT_EQ(refresh.files, 2u);
    EXPECT_EQ(refresh.added, 2u);
    EXPECT_EQ(store.refresh_index().added, 0u) << "a second refresh reads nothing";
    const auto runs = store.load_runs("gemm");
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(run_file_text(runs[0]), run_file_text(fixture_record(runs[0].commit)));
    EXPECT_EQ(read_file(dir.path / "store/.gitignore").find("index.sqlite"), 0u);

    // The index is a cache: removed or damaged, it is rebuilt; a run file gone leaves it.
    fs::remove(first.file);
    EXPECT_EQ(store.refresh_index().removed, 1u);
    EXPECT_EQ(store.load_runs("gemm").size(), 1u);
    write_file(store.index_file(), "not a database");
    fs::remove(store.index_file().string() + "-wal");
    fs::remove(store.index_file().string() + "-shm");
    EXPECT_EQ(store.refresh_index().added, 1u);
    EXPECT_EQ(store.suites().at(0).runs, 1u);
}

TEST(HistoryStore, EightConcurrentWritersLoseNoRun)
{
    TempDir dir;
    const fs::path folder = dir.path / "store";
    std::vector<pid_t> children;
    for (int k = 0; k < 8; ++k) {
        const pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            int code = 0;
            try {
                const HistoryStore store(folder);
                code = store.add(fixture_record(fmt::format("{:012x}", 0xabc000 + k))).added ? 0 : 1;
                store.refresh_index(); // indexing at once too
            } catch (const std::exception& e) {
                std::fprintf(stderr, "writer %d: %s\n", k, e.what());
                code = 2;
            }
            _exit(code);
        }
        children.push_back(pid);
    }
    for (pid_t pid : children) {
        int status = 0;
        waitpid(pid, &status, 0);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    }
    // And eight threads of this process, at once, into the same store.
    std::vector<std::thread> threads;
    for (int k = 0; k < 8; ++k)
        threads.emplace_back(
            [&, k] { HistoryStore(folder).add(fixture_record(fmt::format("{:012x}", 0xdef000 + k))); });
    for (auto& t : threads) t.join();
    const HistoryStore store(folder);
    store.refresh_index();
    EXPECT_EQ(store.load_runs("gemm").size(), 16u);
    EXPECT_EQ(store.suites().at(0).commits, 16u);
    std::size_t leftovers = 0;
    for (const auto& e : fs::directory_iterator(folder / "runs/gemm"))
        leftovers += e.path().filename().string().starts_with(".") ? 1 : 0;
    EXPECT_EQ(leftovers, 0u);
}

TEST(HistoryStore, NothingOutsideTheStoreIsReadOrWritten)
{
    TempDir dir;
    const HistoryStore store(dir.path / "store");
    RunRecord bad = fixture_record("3f9c2e1a7b4d");
    bad.suite = "../escape";
    EXPECT_THROW(store.add(bad), Error);
    bad = fixture_record("../../etc");
    EXPECT_THROW(store.add(bad), Error);

    // A linked suite folder and a linked run file are not followed.
    const HistoryStore outside(dir.path / "outside");
    const auto planted = outside.add(fixture_record("3f9c2e1a7b4d"));
    fs::create_directories(dir.path / "store/runs/gemm");
    fs::create_symlink(dir.path / "outside/runs/gemm", dir.path / "store/runs/other");
    fs::create_symlink(planted.file, dir.path / "store/runs/gemm" / planted.file.filename());
    const auto refresh = store.refresh_index();
    EXPECT_EQ(refresh.files, 0u);
    EXPECT_TRUE(store.suites().empty());
    // A linked suite folder is refused for writing too.
    fs::remove(dir.path / "store/runs/gemm" / planted.file.filename());
    fs::remove(dir.path / "store/runs/gemm");
    fs::create_symlink(dir.path / "outside/runs/gemm", dir.path / "store/runs/gemm");
    EXPECT_THROW(store.add(fixture_record("bbbbbbbbbbbb")), Error);

    // A damaged run file is left out with a reason, the others are read.
    const HistoryStore mixed(dir.path / "mixed");
    mixed.add(fixture_record("cccccccccccc"));
    write_file(dir.path / "mixed/runs/gemm/dddddddddddd-0000000000000000.json", "{\"schema\": 1");
    const auto r = mixed.refresh_index();
    EXPECT_EQ(r.added, 1u);
    ASSERT_EQ(r.problems.size(), 1u);
    EXPECT_NE(r.problems[0].find("not JSON"), std::string::npos) << r.problems[0];
}

} // namespace history_store_test
