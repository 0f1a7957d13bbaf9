// Bisect and history over commits that change a Triton export: the committed cubin is what moves
// between commits, and the static tier reads it at each commit with no Python and no GPU. A
// scratch repository holds the softmax export of kernels/triton; one commit replaces it, under the
// same names, by the planted one-warp export (tests/kernels/triton), an occupancy cliff: 72
// registers instead of 29, theoretical occupancy 43.75 % instead of 100 %.

#include "harness/cli/exit_codes.hxx"
#include "harness/core/sha256.hxx"
#include "harness/history/git_commits.hxx"
#include "harness/history/history_store.hxx"
#include "harness/history/suite_history.hxx"
#include "scratch_repository.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"
#include "tool_output.hxx"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace triton_history_test {

using namespace harness;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// The suite of the scratch project: the Triton softmax alone (it is its own reference), at one point.
const std::string softmax_suite_text = R"yaml(suite: softmax
description: a Triton row softmax across commits
archs: [sm_90]
params:
  ROWS: [64]
  COLS: [1024]
reference: triton
buffers:
  x: {type: f32, count: ROWS*COLS, init: uniform, seed: 7, min: -8, max: 8, role: in}
  y: {type: f32, count: ROWS*COLS, init: zeros, role: out}
variants:
  triton:
    triton: ../kernels/triton/exported/softmax_rows_b1024.json
    grid: [ROWS]
    args: [y, x, COLS]
)yaml";

const fs::path exported = fs::path("kernels") / "triton" / "exported";

/// What one commit of the scratch history does.
enum class Edit {
    project,  ///< the suite, softmax.py and its committed export (4 warps)
    notes,    ///< a line of an unrelated file
    one_warp, ///< the export replaced by the one-warp one, under the same names
    stale,    ///< softmax.py edited, not exported again
};

/// The one-warp export written over the project's: the same file names, the manifest naming them
/// and the .py (whose digest is `source_sha256`); the cubin's digest is the one-warp cubin's own.
void write_one_warp_export(const fs::path& repo, const std::string& source_sha256)
{
    const fs::path planted = repo_root() / "tests" / "kernels" / "triton" / "exported";
    json manifest = json::parse(read_file(planted / "softmax_rows_one_warp.json"));
    manifest["source"] = "../softmax.py";
    manifest["source_sha256"] = source_sha256;
    manifest["cubin"] = "softmax_rows_b1024.cubin";
    manifest["kernel"] = "softmax_rows_b1024";
    write_file(repo / exported / "softmax_rows_b1024.json", manifest.dump(2) + "\n");
    fs::copy_file(planted / "softmax_rows_one_warp.cubin", repo / exported / "softmax_rows_b1024.cubin",
                  fs::copy_options::overwrite_existing);
}

/// A repository with one commit per edit; returns the hash of every commit, the first first.
std::vector<std::string> make_history(const fs::path& repo, const std::vector<Edit>& edits)
{
    fs::create_directories(repo);
    git(repo, {"init", "-q"});
    std::vector<std::string> hashes;
    for (std::size_t k = 0; k < edits.size(); ++k) {
        std::string subject = fmt::format("edit number {}", k);
        switch (edits[k]) {
        case Edit::project:
            subject = "add the Triton softmax and its export";
            write_file(repo / "suites" / "softmax.yaml", softmax_suite_text);
            fs::create_directories(repo / exported);
            fs::copy_file(repo_root() / "kernels" / "triton" / "softmax.py",
                          repo / "kernels" / "triton" / "softmax.py");
            for (const char* file : {"softmax_rows_b1024.json", "softmax_rows_b1024.cubin"})
                fs::copy_file(repo_root() / exported / file, repo / exported / file);
            break;
        case Edit::notes: write_file(repo / "notes.txt", fmt::format("tuning notes, revision {}\n", k)); break;
        case Edit::one_warp:
            subject = "export the softmax with one warp per row";
            write_one_warp_export(repo, sha256_hex(read_file(repo / "kernels" / "triton" / "softmax.py")));
            break;
        case Edit::stale:
            subject = "tidy the softmax source";
            write_file(repo / "kernels" / "triton" / "softmax.py",
                       read_file(repo / "kernels" / "triton" / "softmax.py") + "# tidied\n");
            break;
        }
        git(repo, {"add", "-A"});
        git(repo, {"commit", "-q", "-m", subject});
        hashes.push_back(git(repo, {"rev-parse", "HEAD"}));
    }
    return hashes;
}

struct BisectRun {
    ToolOutput tool;
    json result;
};

/// `harness bisect --static` of the scratch suite between `good` and `bad`, its JSON read back.
BisectRun run_bisect(const fs::path& repo, const fs::path& json_file, const std::string& good, const std::string& bad)
{
    BisectRun run;
    run.tool = run_tool_captured({"bisect", "--good", good, "--bad", bad, "--static", "--arch", "sm_90", "--no-cache",
                                  "--json", json_file.string(), (repo / "suites" / "softmax.yaml").string()});
    if (fs::exists(json_file)) run.result = json::parse(read_file(json_file));
    return run;
}

const json* change_of(const json& result, const std::string& metric)
{
    for (const auto& c : result["changes"])
        if (c["metric"] == metric) return &c;
    return nullptr;
}

} // namespace

TEST(TritonHistory, BisectNamesTheCommitThatReplacedTheExport)
{
    TempDir dir("harness-triton-history");
    const fs::path repo = dir.path / "repo";
    const auto hashes = make_history(repo, {Edit::project, Edit::notes, Edit::one_warp, Edit::notes});

    const auto run = run_bisect(repo, dir.path / "bisect.json", hashes.front(), hashes.back());
    ASSERT_EQ(run.tool.code, cli::exit_pass) << run.tool.err;
    const auto& r = run.result;
    EXPECT_EQ(r["outcome"], "found");
    EXPECT_EQ(r["mode"], "static");
    EXPECT_EQ(r["commits"], 3);
    EXPECT_EQ(r["first"]["hash"], hashes[2]);
    EXPECT_EQ(r["first"]["subject"], "export the softmax with one warp per row");

    const auto* registers = change_of(r, "registers");
    ASSERT_NE(registers, nullptr) << r.dump(2);
    EXPECT_EQ((*registers)["variant"], "triton");
    EXPECT_EQ((*registers)["arch"], "sm_90");
    EXPECT_EQ((*registers)["before"], 29.0);
    EXPECT_EQ((*registers)["after"], 72.0);
    const auto* occupancy = change_of(r, "theoretical_occupancy");
    ASSERT_NE(occupancy, nullptr) << r.dump(2);
    EXPECT_EQ((*occupancy)["before"], 1.0);
    EXPECT_EQ((*occupancy)["after"], 0.4375);
    // --metric follows the one figure.
    const auto followed =
        run_tool_captured({"bisect", "--good", hashes.front(), "--bad", "HEAD", "--static", "--arch", "sm_90",
                           "--no-cache", "--metric", "blocks_per_sm", (repo / "suites" / "softmax.yaml").string()});
    EXPECT_EQ(followed.code, cli::exit_pass) << followed.err;
    EXPECT_NE(followed.out.find(hashes[2]), std::string::npos) << followed.out;
}

// A commit whose .py changed without a new export does not load (its manifest is stale): bisect
// skips it as it skips a commit that does not compile. Right before the new export it hides which
// of the two commits moved the figures, so the answer is the range of both.
TEST(TritonHistory, BisectSkipsACommitWhoseExportIsStale)
{
    TempDir dir("harness-triton-history");
    const fs::path repo = dir.path / "repo";
    const auto hashes =
        make_history(repo, {Edit::project, Edit::notes, Edit::stale, Edit::one_warp, Edit::notes, Edit::notes});

    const auto run = run_bisect(repo, dir.path / "bisect.json", hashes.front(), hashes.back());
    EXPECT_EQ(run.tool.code, cli::exit_failure) << run.tool.err;
    const auto& r = run.result;
    ASSERT_EQ(r["outcome"], "range") << r.dump(2);
    ASSERT_EQ(r["candidates"].size(), 2u) << r.dump(2);
    EXPECT_EQ(r["candidates"][0]["hash"], hashes[2]);
    EXPECT_EQ(r["candidates"][1]["hash"], hashes[3]);
    bool skipped = false;
    for (const auto& s : r["steps"]) {
        if (s["commit"] != hashes[2]) continue;
        skipped = true;
        EXPECT_EQ(s["verdict"], "skipped");
        const std::string note = s["note"];
        EXPECT_NE(note.find("the suite does not load"), std::string::npos) << note;
        EXPECT_NE(note.find("softmax.py changed since"), std::string::npos) << note;
    }
    EXPECT_TRUE(skipped) << r["steps"].dump(2);

    // At the stale commit a plain run refuses the suite: bad input, nothing measured.
    git(repo, {"checkout", "-q", hashes[2]});
    const auto plain = run_tool_captured({"run", "--static", "--no-ci", (repo / "suites" / "softmax.yaml").string(),
                                          "--out", (dir.path / "out").string()});
    EXPECT_EQ(plain.code, cli::exit_bad_input) << plain.out;
    EXPECT_NE(plain.err.find("softmax.py changed since"), std::string::npos) << plain.err;
}

// `harness history record` of a static run at each commit keeps the Triton variant's figures; its
// registers and occupancy series step at the commit that replaced the export, and only there.
TEST(TritonHistory, HistoryRecordsTheExportsFiguresAndItsChangePoint)
{
    TempDir dir("harness-triton-history");
    const fs::path repo = dir.path / "repo";
    const auto hashes = make_history(repo, {Edit::project, Edit::notes, Edit::one_warp, Edit::notes});
    const fs::path store = dir.path / "store";
    for (std::size_t k = 0; k < hashes.size(); ++k) {
        git(repo, {"checkout", "-q", hashes[k]});
        const fs::path out = dir.path / fmt::format("runs/{}", k);
        const auto run = run_tool_captured(
            {"run", "--static", "--no-ci", (repo / "suites" / "softmax.yaml").string(), "--out", out.string()});
        ASSERT_EQ(run.code, cli::exit_pass) << run.err;
        // The commit is the run's own git_revision: the checkout is clean.
        const auto recorded = run_tool_captured({"history", "record", "--store", store.string(),
                                                 (out / "softmax" / "results.json").string(), "--repo", repo.string()});
        ASSERT_EQ(recorded.code, cli::exit_pass) << recorded.err;
        EXPECT_NE(recorded.out.find("recorded softmax at " + hashes[k].substr(0, 12)), std::string::npos)
            << recorded.out;
    }
    git(repo, {"checkout", "-q", "main"});

    const history::HistoryStore s(store);
    s.refresh_index();
    const auto runs = s.load_runs("softmax");
    ASSERT_EQ(runs.size(), 4u);
    const auto h =
        history::build_suite_history("softmax", runs, history::CommitOrder(history::first_parent_order(repo)));
    ASSERT_EQ(h.commits.size(), 4u);
    for (std::size_t k = 0; k < hashes.size(); ++k) EXPECT_EQ(h.commits[k].commit, hashes[k]);
    std::string moved;
    for (const auto& series : h.series)
        for (const auto& c : series.analysis.change_points)
            moved += fmt::format("{} {} {} @{}: {} -> {}\n", series.variant, series.arch, series.metric, c.index,
                                 c.before, c.after);
    for (const char* expected : {"triton sm_90 registers @2: 29 -> 72\n", "triton sm_90 blocks_per_sm @2: 16 -> 28\n",
                                 "triton sm_90 theoretical_occupancy @2: 1 -> 0.4375\n"})
        EXPECT_NE(moved.find(expected), std::string::npos) << expected << "\n" << moved;
    for (const auto& series : h.series)
        for (const auto& c : series.analysis.change_points) EXPECT_EQ(c.index, 2u) << series.metric << "\n" << moved;

    const fs::path page = dir.path / "softmax-history.html";
    const auto o = run_tool_captured(
        {"history", "page", "--store", store.string(), "softmax", "-o", page.string(), "--repo", repo.string()});
    ASSERT_EQ(o.code, cli::exit_pass) << o.err;
    EXPECT_NE(read_file(page).find(hashes[2].substr(0, 12)), std::string::npos);
}

} // namespace triton_history_test
