#pragma once
// Theoretical occupancy without a GPU: the per-SM limits of each architecture, and the rules of
// the CUDA occupancy calculator (cuda_occupancy.h, CUDA 13.0), which cuOccupancyMaxActiveBlocks-
// PerMultiprocessor follows. Checked against the driver on an H200 (sm_90, driver 580): all 173,250
// combinations of 250 kernels (8..212 registers, 0..48000 bytes static shared memory, 0/1/4/16
// barriers), 21 block sizes (1..1025) and 21 dynamic shared sizes (0..233472), opted in or not,
// agree, as do 30 cases with carveout preferences of 0..100 %.
//
// Rules modelled:
//  - warps: a block takes ceil(threads / 32) warp slots; more than 1024 threads never launch.
//  - registers: a warp's registers (registers/thread x 32) round up to 256; the register file is
//    split into 4 sub-partitions, each holding whole warps (64 Ki / 4 / registers-per-warp), and a
//    block must also fit 64 Ki registers with its warps rounded up to a multiple of 4.
//  - shared memory: static + dynamic + the 1 KiB the driver reserves per block (sm_80+), rounded
//    up to 128 bytes (256 before sm_80). With the default cache preference the driver may use the
//    largest carveout, so the SM offers its full shared capacity (228 KiB on sm_90); an explicit
//    carveout percentage picks the next supported carveout size at or above it, or the one the
//    block needs if that is larger.
//  - shared memory per block: 48 KiB unless the kernel opted in (cudaFuncAttributeMaxDynamic-
//    SharedMemorySize), then the architecture's opt-in maximum.
//  - barriers (sm_90+): an SM has 2 named barriers per block slot (1 on sm_120), shared by the
//    blocks' barrier ids.

#include "harness/core/error.hxx"

#include <limits>
#include <span>
#include <string>
#include <string_view>

namespace harness::compile {

/// Per-SM resource limits of one architecture, as the occupancy calculator uses them.
struct ArchLimits {
    std::string_view name;                   ///< "sm_90"
    int sm_version = 0;                      ///< 90
    int warp_size = 32;                      ///< threads per warp
    int max_threads_per_block = 1024;        ///< launch limit
    int max_warps_per_sm = 0;                ///< resident warp slots
    int max_blocks_per_sm = 0;               ///< resident block slots
    int registers_per_sm = 0;                ///< 32-bit registers in the register file
    int max_registers_per_block = 0;         ///< registers one block may hold
    int max_registers_per_thread = 255;      ///< ptxas' ceiling
    int register_allocation_unit = 256;      ///< a warp's registers are allocated in multiples of this
    int warp_allocation_granularity = 4;     ///< register file sub-partitions, each holding whole warps
    int shared_bytes_per_sm = 0;             ///< largest shared memory carveout
    int shared_bytes_per_block = 49152;      ///< static + dynamic without opting in
    int shared_bytes_per_block_optin = 0;    ///< static + dynamic once the kernel opts in
    int shared_allocation_granularity = 128; ///< a block's shared memory rounds up to this
    int reserved_shared_bytes_per_block = 0; ///< the driver's own shared memory per block (1 KiB on sm_80+)
    int barriers_per_block_slot = 0;         ///< named barriers per block slot; 0: not a limit
    std::span<const int> carveouts_kib;      ///< shared memory carveouts the SM supports, ascending
};

/// The known architectures, oldest first.
std::span<const ArchLimits> known_arch_limits();
/// The limits for "sm_90" (a/f suffixes accepted), or nullptr.
const ArchLimits* find_arch_limits(std::string_view arch);
/// The limits for "sm_90"; throws Error (bad_input) naming the known architectures.
const ArchLimits& arch_limits(std::string_view arch);

/// Which resource caps the number of resident blocks.
enum class OccupancyLimiter { warps, registers, shared_memory, blocks, barriers };

/// "warps", "registers", "shared memory", "blocks", "barriers".
std::string_view to_string(OccupancyLimiter limiter);

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
    std::string_view arch;          ///< architecture name, "sm_90"
    int threads_per_block = 0;      ///< input
    int registers_per_thread = 0;   ///< input
    int shared_bytes_per_block = 0; ///< input: static + dynamic
    int blocks_per_sm = 0;          ///< resident blocks; 0 when the block can never launch
    int active_warps_per_sm = 0;    ///< blocks_per_sm x warps per block
    int max_warps_per_sm = 0;       ///< the architecture's warp slots
    double occupancy = 0.0;         ///< active / max warps, 0..1
    OccupancyLimiter limiter = OccupancyLimiter::warps; ///< the resource that caps blocks_per_sm
    int blocks_by_warps = 0;                            ///< blocks the warp slots alone allow
    int blocks_by_registers = 0;                        ///< blocks the register file alone allows
    int blocks_by_shared_memory = 0;                    ///< blocks shared memory alone allows
    int blocks_by_block_slots = 0;                      ///< the architecture's block slots
    int blocks_by_barriers = 0;                         ///< blocks the named barriers alone allow
    int allocated_registers_per_block = 0;              ///< after per-warp rounding
    int allocated_shared_bytes_per_block = 0; ///< with the reserved 1 KiB, rounded to the granularity
    int shared_bytes_per_sm = 0;              ///< the carveout assumed
    std::string impossible_reason;            ///< why no block fits; empty when blocks_per_sm > 0
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
