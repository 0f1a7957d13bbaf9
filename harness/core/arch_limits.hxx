#pragma once
// Per-SM and per-launch resource limits of each GPU architecture the harness knows: what the
// occupancy calculator models and what a suite's launches are checked against at load time.

#include <span>
#include <string>
#include <string_view>

namespace harness {

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

} // namespace harness
