// `harness sass-diff --suite`: two revisions of a scratch repository, each compiled in a worktree of
// its own. A float4 load split into scalars between them shows as its line's hunk (exit 1), a commit
// that only moves lines shows nothing (exit 0), the checkout with an uncommitted edit is the other side
// when none is named, and the user's work tree, index and worktree list are as they were. Bad
// revisions and suites missing from a commit are bad input.

#include "harness/cli/commands.hxx"
#include "harness/compile/sass_disassembly.hxx"
#include "harness/pipeline/revision_sass.hxx"
#include "scratch_repository.hxx"
#include "test_files.hxx"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace revision_sass_test {

using namespace harness;
namespace fs = std::filesystem;

namespace {

const std::string suite_text = R"yaml(suite: copy
description: a float4 copy across commits
archs: [sm_90]
params:
  N: [4096]
reference: copy
buffers:
  in: {type: f32, count: N, init: uniform, seed: 1, min: 0, max: 1, role: in}
  out: {type: f32, count: N, init: zeros, role: out}
variants:
  copy:
    source: ../kernels/copy.cu
    entry: vector_copy
    block: [256]
    grid: ["ceil_div(N / 4, 256)"]
    args: [in, out, {i32: N / 4}]
)yaml";

/// The copy kernel, its load a float4 (`split`: four scalar loads), `lines_above` blank comment lines first.
std::string kernel(bool split, int lines_above = 0)
{
    std::string text;
    for (int k = 0; k < lines_above; ++k) text += "// a line that moves the kernel down\n";
    text += R"(extern "C" __global__ void vector_copy(const float* in, float4* out, int n4)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n4) return;
)";
    text += split ? "    out[i] = make_float4(in[4 * i], in[4 * i + 1], in[4 * i + 2], in[4 * i + 3]);\n"
                  : "    out[i] = reinterpret_cast<const float4*>(in)[i];\n";
    return text + "}\n";
}

/// Commits: "vector" (float4 load), "moved" (the same kernel three lines down), "split" (scalar loads).
void make_repository(const fs::path& repo)
{
    fs::create_directories(repo);
    git(repo, {"init", "-q"});
    const auto commit = [&](const std::string& text, const std::string& tag) {
        write_file(repo / "kernels" / "copy.cu", text);
        write_file(repo / "suites" / "copy.yaml", suite_text);
        git(repo, {"add", "-A"});
        git(repo, {"commit", "-q", "-m", tag});
        git(repo, {"tag", tag});
    };
    commit(kernel(false), "vector");
    commit(kernel(false, 3), "moved");
    commit(kernel(true, 3), "split");
}

struct Diff {
    int code = -1;
    std::string text;
};

Diff sass_diff(const fs::path& repo, std::vector<std::string> sides)
{
    const TempDir out{"harness-revision-sass-out"};
    std::vector<std::string> args = {"sass-diff",  "--suite", (repo / "suites" / "copy.yaml").string(),
                                     "--no-cache", "-o",      (out.path / "diff.txt").string()};
    args.insert(args.end(), sides.begin(), sides.end());
    Diff d;
    d.code = cli::run_tool(args);
    if (fs::exists(out.path / "diff.txt")) d.text = read_file(out.path / "diff.txt");
    return d;
}

#define REQUIRE_NVDISASM()                                                                                             \
    if (compile::find_nvdisasm().program.empty()) GTEST_SKIP() << compile::find_nvdisasm().not_found_reason

} // namespace

TEST(RevisionSassDiff, ASplitLoadShowsAtItsLineAndMovedLinesShowNothing)
{
    REQUIRE_NVDISASM();
    const TempDir scratch{"harness-revision-sass"};
    const fs::path repo = scratch.path / "repo";
    make_repository(repo);
    const std::string status = git(repo, {"status", "--porcelain"});
    const std::string head = git(repo, {"rev-parse", "HEAD"});
    const std::string worktrees = git(repo, {"worktree", "list", "--porcelain"});

    const Diff moved = sass_diff(repo, {"vector", "moved"});
    EXPECT_EQ(moved.code, 0) << moved.text;
    EXPECT_NE(moved.text.find("0 of 1 cases held by both differ"), std::string::npos) << moved.text;

    const Diff split = sass_diff(repo, {"moved", "split"});
    EXPECT_EQ(split.code, 1) << split.text;
    EXPECT_NE(split.text.find("=== copy N=4096 sm_90 ==="), std::string::npos) << split.text;
    // The hunk is the load's line (line 8 with the three lines above), the kernel's file as the commit names it.
    EXPECT_NE(split.text.find("kernels/copy.cu:8 @@"), std::string::npos) << split.text;
    EXPECT_NE(split.text.find("\n-LDG.E.128"), std::string::npos) << split.text;
    EXPECT_EQ(split.text.find("harness-bisect-"), std::string::npos) << "no temporary path shows: " << split.text;
    EXPECT_NE(split.text.find("1 of 1 cases held by both differ"), std::string::npos) << split.text;

    // No second revision: the checkout as it is, its uncommitted edit (the float4 load back) included.
    write_file(repo / "kernels" / "copy.cu", kernel(false, 3));
    const Diff checkout = sass_diff(repo, {"split"});
    EXPECT_EQ(checkout.code, 1) << checkout.text;
    EXPECT_NE(checkout.text.find("\n+LDG.E.128"), std::string::npos) << checkout.text;
    EXPECT_EQ(sass_diff(repo, {"moved"}).code, 0);

    // The repository as it was: the edit still uncommitted, HEAD, the index and the worktrees unmoved.
    EXPECT_EQ(git(repo, {"status", "--porcelain"}), " M kernels/copy.cu");
    EXPECT_EQ(status, "");
    EXPECT_EQ(git(repo, {"rev-parse", "HEAD"}), head);
    EXPECT_EQ(git(repo, {"worktree", "list", "--porcelain"}), worktrees);
}

TEST(RevisionSassDiff, UnknownRevisionsAndSuitesMissingFromACommitAreBadInput)
{
    REQUIRE_NVDISASM();
    const TempDir scratch{"harness-revision-sass-bad"};
    const fs::path repo = scratch.path / "repo";
    make_repository(repo);
    EXPECT_EQ(sass_diff(repo, {"no-such-branch", "split"}).code, 2);
    EXPECT_EQ(sass_diff(repo, {"--", "-vector", "split"}).code, 2);
    // A suite that a later commit adds is not in the first.
    write_file(repo / "suites" / "late.yaml", suite_text);
    git(repo, {"add", "-A"});
    git(repo, {"commit", "-q", "-m", "late suite"});
    pipeline::RevisionSassRequest request;
    request.suite = repo / "suites" / "late.yaml";
    request.revision = "vector";
    try {
        pipeline::sass_at_revision(request);
        ADD_FAILURE() << "a suite missing from the commit was read";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::bad_input);
        EXPECT_NE(std::string(e.what()).find("suites/late.yaml: not in commit vector ("), std::string::npos)
            << e.what();
    }
    // A suite path that leads out of the repository is refused before anything is checked out.
    EXPECT_EQ(cli::run_tool({"sass-diff", "--suite", "../../outside/copy.yaml", "--no-cache", "vector", "split"}), 2);
    request.suite = "suites/../../outside.yaml";
    EXPECT_THROW(pipeline::sass_at_revision(request), Error);
    // --arch and --build compile revisions: without --suite they are refused.
    EXPECT_EQ(cli::run_tool({"sass-diff", "--arch", "sm_90", scratch.path.string(), scratch.path.string()}), 2);
}

} // namespace revision_sass_test
