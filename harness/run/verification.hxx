#pragma once
// Checking a case's outputs against the reference variant's at the same parameter point. A
// point's cases may run on several GPUs: a worker that did not run the point's reference case
// computes the reference's outputs itself, on its own GPU, so every case is checked exactly as
// strictly as when one GPU runs the whole point.

#include "harness/core/case_result.hxx"
#include "harness/run/buffer_data.hxx"
#include "harness/suite/sweep.hxx"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace harness::run {

/// Outputs of the reference variant at one parameter point of one suite, by buffer name, in one
/// worker; and what computing them afresh cost there.
struct ReferenceOutputs {
    const suite::Suite* suite = nullptr;
    std::size_t point = static_cast<std::size_t>(-1);
    std::map<std::string, Bytes> buffers;
    bool holds(const suite::Suite& s, std::size_t p) const { return suite == &s && point == p; }
};

/// Makes `reference` hold the reference's outputs at `c`'s point of `suite`: kept when it holds
/// them already (the reference case ran just before, here), else computed by `compute`. Returns
/// the seconds computing took (0 when kept).
double ensure_reference(const suite::Suite& suite, const suite::Case& c, ReferenceOutputs& reference,
                        const std::function<std::map<std::string, Bytes>()>& compute);

/// One output buffer of a case, as downloaded.
struct CaseOutput {
    const suite::BufferSpec* spec = nullptr;
    std::size_t count = 0; ///< elements
    const Bytes* data = nullptr;
};

/// Checks `outputs` of a case of `variant` against `reference` with the suite's tolerances, each
/// buffer read as its own type (a bf16 output against an f32 reference). Records the largest
/// errors in `r` and, for a buffer outside the tolerance, sets failed_verification and says where.
void verify_outputs(const suite::Suite& suite, const std::vector<CaseOutput>& outputs,
                    const ReferenceOutputs& reference, CaseResult& r);

} // namespace harness::run
