#pragma once
// The normalised SASS of a suite's cases at a git revision, or in the checkout as it is: the commit
// checked out in a temporary worktree (git_repository.hxx), the suite loaded from there, an optional
// build command run in it, and the static tier compiled with the SASS read, as `harness sass-diff
// --suite` compares two revisions without a run of either kept anywhere.

#include "harness/compile/kernel_cache.hxx"
#include "harness/core/sass_code.hxx"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace harness::pipeline {

/// What to read at one revision.
struct RevisionSassRequest {
    std::filesystem::path suite;    ///< an existing suite file, or a path relative to the repository's top
    std::string revision;           ///< as the user typed it; empty: the checkout as it is, uncommitted edits too
    std::vector<std::string> archs; ///< empty: the suite's own at that revision
    std::string build_command;      ///< run through /bin/sh -c in the worktree first; empty: none
    const compile::CompileCache* cache = nullptr;
};

/// One side of a diff.
struct RevisionSass {
    std::string shown;                        ///< "main (1a2b3c4d5e6f: subject)", or "the checkout"
    std::map<std::string, SassCodeFile> code; ///< by architecture
    /// Cases that have no SASS at that revision, and why ("gemm_naive N=64 sm_90: compile error: ...").
    std::vector<std::string> problems;
};

/// The normalised SASS of every case of the request's suite at its revision. Throws Error: bad input for
/// a revision that names no commit, a suite not in it (or one that does not load) and a build command
/// that fails; environment when git or nvdisasm is missing.
RevisionSass sass_at_revision(const RevisionSassRequest& request);

} // namespace harness::pipeline
