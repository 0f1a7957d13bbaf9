#pragma once
// `harness run --changed-only`: before a GPU run, each case's hash (its kernels' normalised SASS,
// launch geometry, inputs and arguments, compile/sass_case_code.hxx) against the hash its
// baseline recorded when its GPU figures were (baselines/<suite>/<arch>.sass.gz). A case whose
// hash is the same runs nowhere: its baseline's exact figures stand, and it is reported as
// "unchanged: SASS identical to the baseline's", skipped and counted apart, never as passed. The
// plan needs no GPU: NVRTC and nvdisasm decide it.

#include "harness/compile/compile_suite.hxx"
#include "harness/compile/nvrtc_compiler.hxx"
#include "harness/core/case_result.hxx"
#include "harness/core/sass_code.hxx"
#include "harness/suite/suite.hxx"
#include "harness/suite/sweep.hxx"

#include <filesystem>
#include <string>
#include <vector>

namespace harness::pipeline {

/// The normalised SASS of `cases` (compiled for `arch` in `compiled`), as a GPU run records it
/// (SassCodeFile::cases' second side); empty where nvdisasm is missing, with `not_measured` saying why.
SassCodeFile gpu_sass_code(const suite::Suite& suite, const std::vector<suite::Case>& cases,
                           const compile::SuiteModules& compiled, const std::string& arch,
                           const compile::CompileCache* cache, std::string* not_measured = nullptr);

/// Which cases run and which are carried.
struct ChangedOnlyPlan {
    std::vector<bool> carried;      ///< by index into the cases planned
    std::vector<std::string> notes; ///< for the run's notes: what was decided, or why everything runs
    std::size_t changed = 0;        ///< cases whose hash moved (or whose baseline has none)
    std::size_t carried_count = 0;
};

/// The plan for `cases` given their current code `code` (gpu_sass_code) and the baseline's code
/// file in `baseline_dir` (nothing carried where it is missing or holds no GPU hash for a case). A
/// point's reference case runs when any other case at its point does, since it verifies them; a
/// built-in library call always runs.
ChangedOnlyPlan plan_changed_only(const suite::Suite& suite, const std::vector<suite::Case>& cases,
                                  const SassCodeFile& code, const std::filesystem::path& baseline_dir);

/// The result a carried case gets: skipped, `unchanged`, with the message that says so.
CaseResult carried_case(const suite::Suite& suite, const suite::Case& c, const std::string& arch);

} // namespace harness::pipeline
