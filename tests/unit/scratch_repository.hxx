#pragma once
// Scratch git repositories for the bisect tests: git run with a fixed identity, the project's
// register-cliff kernel at a chosen register budget, the suite that walks it, and a one-header
// library repository for submodules.

#include "harness/core/child_process.hxx"
#include "harness/pipeline/git_repository.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"

#include <filesystem>
#include <gtest/gtest.h>
#include <string>
#include <vector>

/// Runs git in `repo` with a fixed identity (a machine without git config works too); file URLs
/// are allowed, for submodules of local folders.
inline std::string git(const std::filesystem::path& repo, std::vector<std::string> args)
{
    std::vector<std::string> argv = {"git",
                                     "-C",
                                     repo.string(),
                                     "-c",
                                     "user.name=Harness Test",
                                     "-c",
                                     "user.email=harness@example.com",
                                     "-c",
                                     "commit.gpgsign=false",
                                     "-c",
                                     "init.defaultBranch=main",
                                     "-c",
                                     "protocol.file.allow=always"};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = harness::run_program(argv);
    EXPECT_EQ(r.exit_code, 0) << "git " << args.front() << ": " << r.err;
    std::string out = r.out;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
}

/// The project's register-cliff kernel, its register budget set by `min_blocks` (8: 32 registers,
/// 100 % occupancy on sm_90; 6: 40 registers, 75 %), with `note` as a trailing comment; `broken`
/// adds a line that does not compile.
inline std::string kernel_text(int min_blocks, const std::string& note, bool broken = false)
{
    std::string text = read_file(repo_root() / "tests" / "kernels" / "register_cliff.cu");
    const std::string from = "#define MIN_BLOCKS 8";
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos);
    text.replace(at, from.size(), "#define MIN_BLOCKS " + std::to_string(min_blocks));
    if (broken) text += "this line is not C++\n";
    return text + "// " + note + "\n";
}

/// The suite of a scratch history, `suites/walk.yaml`: the register-cliff kernel (kernel_text) at
/// one point, its MIN_BLOCKS from the kernel's own define.
inline const std::string walk_suite_text =
    R"yaml(suite: walk
description: a register-limited occupancy cliff across commits
archs: [sm_90]
params:
  N: [1048576]
reference: walk
buffers:
  in: {type: f32, count: N, init: uniform, seed: 1, min: 0, max: 1, role: in}
  out: {type: f32, count: N, init: zeros, role: out}
variants:
  walk:
    source: ../kernels/register_cliff.cu
    entry: register_cliff
    defines: {PARTIALS: 16}
    block: [256]
    grid: ["ceil_div(N, 256)"]
    args: [in, out, {i32: N}]
)yaml";

/// A repository at `path` whose one commit holds `header` with `text`: a library a project
/// takes in as a submodule.
inline void make_header_library(const std::filesystem::path& path, const std::string& header, const std::string& text)
{
    std::filesystem::create_directories(path);
    git(path, {"init", "-q"});
    write_file(path / header, text);
    git(path, {"add", "-A"});
    git(path, {"commit", "-q", "-m", "the header"});
}
