#pragma once
// Theoretical occupancy without a GPU: the toolkit's occupancy calculator (cuda_occupancy.h, the
// rules cuOccupancyMaxActiveBlocksPerMultiprocessor follows) fed with each architecture's per-SM
// limits, plus what limits a configuration and why one cannot launch, for messages.
//
// Checked against the driver on an H200 (sm_90, driver 580): all 173,250 combinations of 250
// kernels (8..212 registers, 0..48000 bytes static shared memory, 0/1/4/16 barriers), 21 block
// sizes (1..1025) and 21 dynamic shared sizes (0..233472), opted in or not, agree, as do 30 cases
// with carveout preferences of 0..100 %. The calculator replaced a hand-written model of the same
// rules that gave identical results on 14.5 million combinations over every known architecture
// (0..256 registers, block sizes 1..1025, shared memory to 281 KB, 0..16 barriers, opt-in, carveouts).

#include "harness/core/arch_limits.hxx"
#include "harness/core/case_result.hxx"
#include "harness/core/error.hxx"

#include <limits>
#include <span>
#include <string>
#include <string_view>

namespace harness::compile {

// The per-architecture limits live in core (the suite loader checks launches against them too).
using harness::arch_limits;
using harness::ArchLimits;
using harness::find_arch_limits;
using harness::known_arch_limits;

// What limits occupancy is part of a case's result (core/case_result.hxx), named there.
using harness::OccupancyLimiter;

/// "warps", "registers", "shared memory", "blocks", "barriers".
inline std::string_view to_string(OccupancyLimiter limiter)
{
    return occupancy_limiter_name(limiter);
}

/// Launch settings besides the block's size that change occupancy.
struct OccupancyOptions {
    int barriers_per_block = 0;       ///< named barriers the kernel uses (KernelResources::barriers)
    bool shared_opt_in = true;        ///< kernel opted in to more than 48 KiB per block
    int shared_carveout_percent = -1; ///< preferred carveout; -1 = no preference
};

/// A block count that a resource does not bound.
inline constexpr int unlimited_blocks = std::numeric_limits<int>::max();

/// Resident blocks and warps per SM for one kernel configuration, and what limits them.
struct Occupancy {
    std::string_view arch;                              ///< architecture name, "sm_90"
    int threads_per_block = 0;                          ///< input
    int registers_per_thread = 0;                       ///< input
    int shared_bytes_per_block = 0;                     ///< input: static + dynamic
    int blocks_per_sm = 0;                              ///< resident blocks; 0 when the block can never launch
    int active_warps_per_sm = 0;                        ///< blocks_per_sm x warps per block
    int max_warps_per_sm = 0;                           ///< the architecture's warp slots
    double occupancy = 0.0;                             ///< active / max warps, 0..1
    OccupancyLimiter limiter = OccupancyLimiter::warps; ///< the resource that caps blocks_per_sm
    int blocks_by_warps = 0;                            ///< blocks the warp slots alone allow
    int blocks_by_registers = 0;                        ///< blocks the register file alone allows
    int blocks_by_shared_memory = 0;                    ///< blocks shared memory alone allows
    int blocks_by_block_slots = 0;                      ///< the architecture's block slots
    int blocks_by_barriers = 0;                         ///< blocks the named barriers alone allow
    int allocated_registers_per_block = 0;              ///< after per-warp rounding
    int allocated_shared_bytes_per_block = 0;           ///< with the reserved 1 KiB, rounded to the granularity
    int shared_bytes_per_sm = 0;                        ///< the carveout assumed
    std::string impossible_reason;                      ///< why no block fits; empty when blocks_per_sm > 0
};

/// Theoretical occupancy of a kernel with these resources on `arch`, as cuOccupancyMaxActive-
/// BlocksPerMultiprocessor computes it. A configuration that cannot launch gives 0 blocks, the
/// limiter responsible and impossible_reason; invalid arguments (no threads, negative sizes) throw Error.
Occupancy theoretical_occupancy(const ArchLimits& arch, int threads_per_block, int registers_per_thread,
                                int shared_bytes_per_block, const OccupancyOptions& options = {});

/// "registers 32 -> 40: resident blocks 8 -> 6, theoretical occupancy 100 % -> 75 % (limiter: registers)".
std::string describe_occupancy_cliff(const Occupancy& before, const Occupancy& after);

/// "75 %", "62.5 %": an occupancy fraction as a percentage with at most one decimal.
std::string format_occupancy_percent(double occupancy);

} // namespace harness::compile
