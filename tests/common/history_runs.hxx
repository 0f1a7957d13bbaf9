#pragma once
// Scratch histories for the change-point tests and benchmark: one run record per commit and run,
// on one GPU, with one passed case whose figures the caller sets.

#include "harness/history/run_record.hxx"

#include <cstddef>
#include <fmt/format.h>
#include <string>

namespace harness::test {

/// The hash of scratch commit `c` (0-based): 40 hex digits counting from 1.
inline std::string commit_hash(std::size_t c)
{
    return fmt::format("{:040x}", c + 1);
}

/// A GPU run of `suite` at scratch commit `c`, dated one day per commit, with no case yet.
inline history::RunRecord run_at(const std::string& suite, std::size_t c)
{
    history::RunRecord r;
    r.suite = suite;
    r.commit = commit_hash(c);
    r.commit_date = fmt::format("2026-11-{:02}T00:00:00Z", c + 1);
    r.mode = RunMode::gpu;
    r.arch = "sm_90";
    r.gpu = "NVIDIA H100 80GB HBM3";
    return r;
}

/// A passed case of `variant` at N=16777216 on sm_90, with no figure yet.
inline history::CaseFigures passed_case(const std::string& variant)
{
    history::CaseFigures f;
    f.variant = variant;
    f.params = "N=16777216";
    f.arch = "sm_90";
    f.status = CaseStatus::passed;
    return f;
}

} // namespace harness::test
