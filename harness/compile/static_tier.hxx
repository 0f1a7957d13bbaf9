#pragma once
// The static tier: what the compiler decides, measured without a GPU. Every variant is compiled
// for each architecture and its cubin read for registers, spills, stack, shared memory and
// barriers; theoretical occupancy follows from the architecture's rules at each sweep point, and
// coalescing and bank conflicts are predicted from the PTX at each case's launch.

#include "harness/compile/nvrtc_compiler.hxx"
#include "harness/core/case_result.hxx"
#include "harness/suite/suite.hxx"
#include "harness/suite/sweep.hxx"

#include <string>
#include <vector>

namespace harness::compile {

/// One result per variant, sweep point and architecture (arch set in each result).
std::vector<CaseResult> run_static_tier(const suite::Suite& suite, const std::vector<std::string>& archs,
                                        const CompileCache* cache);
/// Same, for `cases` only (a shard's share of the suite): one result per case and architecture.
/// `predict_accesses`: the predicted access figures from PTX too (predicted_accesses.hxx).
std::vector<CaseResult> run_static_tier(const suite::Suite& suite, const std::vector<suite::Case>& cases,
                                        const std::vector<std::string>& archs, const CompileCache* cache,
                                        bool predict_accesses = true);

} // namespace harness::compile
