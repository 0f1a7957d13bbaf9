#pragma once
// A suite's launch geometry against the bounds the compiled kernel declares, before anything is
// launched or its occupancy computed: a block of more threads than `__launch_bounds__` allows
// (`.maxntid`), or of another shape than `.reqntid` demands, is refused by the driver
// (CUDA_ERROR_INVALID_VALUE), so the static tier's figures for it would describe a launch that
// never happens.

#include "harness/compile/compile_suite.hxx"
#include "harness/compile/cubin_info.hxx"
#include "harness/suite/suite.hxx"
#include "harness/suite/sweep.hxx"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace harness::compile {

/// Why a block of `block` threads (x, y, z) does not fit `kernel`'s declared bounds, as the tail of
/// a message ("a block of 256 threads ... is more than kernel k allows: ..."); nullopt when it fits
/// or the kernel declares none. `entry` names the kernel as the suite does.
std::optional<std::string> launch_bound_problem(const KernelResources& kernel, const std::string& entry,
                                                const std::array<std::int64_t, 3>& block);

/// Checks the block of every launch of every case in `cases` against the kernel it launches in
/// `compiled`; throws Error (bad_input) naming, for each block that does not fit, the suite file,
/// the line and column of its `block:`, the field, the sweep point, the kernel and its bound.
/// Modules whose cubin cannot be read, and kernels it does not hold, are left to the caller.
void check_launch_bounds(const suite::Suite& suite, const std::vector<suite::Case>& cases,
                         const SuiteModules& compiled);

} // namespace harness::compile
