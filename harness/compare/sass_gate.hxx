#pragma once
// The SASS gate: a case's SASS lines against its baseline's, kernel by kernel and file by file.
// Lines are matched by what they hold (a line moved by an edit above it still matches), and where
// they differ, what fails is a pathology, each named with kernel, line and both forms:
//
//   - an access narrowed at a line: "kernels/gemm/gemm_vectorized.cu:41: global loads 128-bit ->
//     32-bit (1 -> 4 instructions)";
//   - tensor-core instructions gone from a kernel that had them;
//   - asynchronous copies (LDGSTS, TMA) gone from a kernel that had them;
//   - local-memory instructions in a kernel that had none.
//
// Every other change of the counts is drift, reported by the sass_* figures' own rules.

#include "harness/compare/compare_run.hxx"
#include "harness/core/case_result.hxx"
#include "harness/suite/suite.hxx"

#include <string>
#include <vector>

namespace harness::compare {

/// One pathology the SASS shows.
struct SassFinding {
    std::string metric;   ///< the class figure it concerns: "sass_global_ld_128", "sass_tensor", "sass_local_ld"
    std::string kernel;   ///< as SassLine::kernel
    std::string location; ///< "kernels/gemm/gemm_vectorized.cu:41"
    std::string message;  ///< location, then both forms
};

/// The pathologies of `current` against `baseline` (a case's SASS lines, as the static tier
/// records them), kernels in the order of `current`.
std::vector<SassFinding> sass_findings(const std::vector<SassLine>& baseline, const std::vector<SassLine>& current);

/// Judges `r`'s SASS: each finding becomes a regressed verdict of its metric (in place of the
/// figure's drift verdict), unless the suite's rule for that metric is `ignore`. `baseline` is the
/// case's lines in the SASS baseline, nullptr when it has none. A case without SASS figures because
/// nvdisasm is missing, whose baseline holds SASS figures, gets one verdict saying so: not measured
/// (failing) in CI mode, skipped outside it.
void judge_sass(CaseResult& r, const suite::Suite& suite, const suite::VariantSpec& spec,
                const std::vector<SassLine>* baseline, const BaselineFile* exact, const CompareOptions& options);

} // namespace harness::compare
