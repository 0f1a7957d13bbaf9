#pragma once
// The static tier: what the compiler decides, measured without a GPU. Every variant is compiled
// for each architecture and its cubin read for registers, spills, stack, shared memory and
// barriers; theoretical occupancy follows from the architecture's rules at each sweep point, and
// coalescing and bank conflicts are predicted from the PTX at each case's launch.

#include "harness/compile/nvrtc_compiler.hxx"
#include "harness/core/case_result.hxx"
#include "harness/core/sass_code.hxx"
#include "harness/suite/suite.hxx"
#include "harness/suite/sweep.hxx"

#include <map>
#include <string>
#include <vector>

namespace harness::compile {

/// One result per variant, sweep point and architecture (arch set in each result).
std::vector<CaseResult> run_static_tier(const suite::Suite& suite, const std::vector<std::string>& archs,
                                        const CompileCache* cache);
/// Same, for `cases` only (a shard's share of the suite): one result per case and architecture.
/// `predict_accesses`: the predicted access figures from PTX too (predicted_accesses.hxx).
/// `sass_code`, where given, receives each architecture's normalised SASS of the cases
/// (sass_case_code.hxx); `count_sass`: false leaves the SASS tier out (no disassembly, no sass_*
/// figures), for measuring what it costs.
std::vector<CaseResult> run_static_tier(const suite::Suite& suite, const std::vector<suite::Case>& cases,
                                        const std::vector<std::string>& archs, const CompileCache* cache,
                                        bool predict_accesses = true,
                                        std::map<std::string, SassCodeFile>* sass_code = nullptr,
                                        bool count_sass = true);

} // namespace harness::compile
