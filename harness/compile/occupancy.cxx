#include "harness/compile/occupancy.hxx"

#include "harness/core/text.hxx"

#include <algorithm>
#include <array>
#include <charconv>
#include <climits>
#include <cuda_occupancy.h>
#include <vector>

namespace harness::compile {
namespace {

constexpr int kib = 1024;

// Written so that a block of INT_MAX threads cannot overflow.
int divide_round_up(int value, int divisor)
{
    return value / divisor + (value % divisor != 0 ? 1 : 0);
}
int round_up(int value, int multiple)
{
    return divide_round_up(value, multiple) * multiple;
}

std::string kib_text(long long bytes)
{
    if (bytes % kib == 0) return std::to_string(bytes / kib) + " KiB";
    return std::to_string(bytes) + " bytes";
}

} // namespace

Occupancy theoretical_occupancy(const ArchLimits& arch, int threads_per_block, int registers_per_thread,
                                int shared_bytes_per_block, const OccupancyOptions& options)
{
    const std::string where = std::string(arch.name) + ": ";
    if (threads_per_block <= 0)
        throw Error(ErrorKind::bad_input,
                    where + "threads per block must be positive, got " + std::to_string(threads_per_block));
    if (registers_per_thread < 0 || shared_bytes_per_block < 0 || options.barriers_per_block < 0) {
        throw Error(ErrorKind::bad_input, where + "negative resource: " + std::to_string(registers_per_thread) +
                                              " registers, " + std::to_string(shared_bytes_per_block) +
                                              " bytes shared memory, " + std::to_string(options.barriers_per_block) +
                                              " barriers");
    }
    if (options.shared_carveout_percent < -1 || options.shared_carveout_percent > 100) {
        throw Error(ErrorKind::bad_input, where + "shared memory carveout must be -1 (default) or 0..100 %, got " +
                                              std::to_string(options.shared_carveout_percent));
    }

    Occupancy result;
    result.arch = arch.name;
    result.threads_per_block = threads_per_block;
    result.registers_per_thread = registers_per_thread;
    result.shared_bytes_per_block = shared_bytes_per_block;
    result.max_warps_per_sm = arch.max_warps_per_sm;
    const int warps_per_block = divide_round_up(threads_per_block, arch.warp_size);

    // The toolkit's calculator (cuda_occupancy.h), fed with the architecture's limits.
    cudaOccDeviceProp device;
    device.computeMajor = arch.sm_version / 10;
    device.computeMinor = arch.sm_version % 10;
    device.maxThreadsPerBlock = arch.max_threads_per_block;
    device.maxThreadsPerMultiprocessor = arch.max_warps_per_sm * arch.warp_size;
    device.regsPerBlock = arch.max_registers_per_block;
    device.regsPerMultiprocessor = arch.registers_per_sm;
    device.warpSize = arch.warp_size;
    device.sharedMemPerBlock = static_cast<std::size_t>(arch.shared_bytes_per_block);
    device.sharedMemPerMultiprocessor = static_cast<std::size_t>(arch.shared_bytes_per_sm);
    device.numSms = 1;
    device.sharedMemPerBlockOptin = static_cast<std::size_t>(arch.shared_bytes_per_block_optin);
    device.reservedSharedMemPerBlock = static_cast<std::size_t>(arch.reserved_shared_bytes_per_block);
    cudaOccFuncAttributes kernel;
    kernel.maxThreadsPerBlock = arch.max_threads_per_block;
    kernel.numRegs = std::min(registers_per_thread, 1 << 20);
    kernel.sharedSizeBytes = 0; // static and dynamic shared memory count alike: all of it is passed as dynamic
    kernel.shmemLimitConfig = options.shared_opt_in ? FUNC_SHMEM_LIMIT_OPTIN : FUNC_SHMEM_LIMIT_DEFAULT;
    kernel.maxDynamicSharedSizeBytes = static_cast<std::size_t>(
        options.shared_opt_in ? arch.shared_bytes_per_block_optin : arch.shared_bytes_per_block);
    kernel.numBlockBarriers = options.barriers_per_block;
    cudaOccDeviceState state;
    if (options.shared_carveout_percent >= 0) state.carveoutConfig = options.shared_carveout_percent;
    cudaOccResult occ;
    const auto shared = static_cast<std::size_t>(shared_bytes_per_block);
    if (cudaOccMaxActiveBlocksPerMultiprocessor(&occ, &device, &kernel, &state, threads_per_block, shared) !=
        CUDA_OCC_SUCCESS)
        throw Error(ErrorKind::internal, where + "the occupancy calculator does not know this architecture");

    result.blocks_by_warps = threads_per_block > arch.max_threads_per_block ? 0 : occ.blockLimitWarps;
    result.blocks_by_block_slots = occ.blockLimitBlocks;
    // ptxas never goes past the architecture's registers per thread; a kernel that did would not load.
    result.blocks_by_registers = registers_per_thread > arch.max_registers_per_thread ? 0
                                 : occ.blockLimitRegs == INT_MAX                      ? unlimited_blocks
                                                                                      : occ.blockLimitRegs;
    result.blocks_by_shared_memory = occ.blockLimitSharedMem == INT_MAX ? unlimited_blocks : occ.blockLimitSharedMem;
    result.blocks_by_barriers =
        occ.blockLimitBarriers <= 0 || occ.blockLimitBarriers == INT_MAX ? unlimited_blocks : occ.blockLimitBarriers;
    result.allocated_registers_per_block = occ.allocatedRegistersPerBlock;
    result.allocated_shared_bytes_per_block =
        static_cast<int>(std::min<std::size_t>(occ.allocatedSharedMemPerBlock, unlimited_blocks));
    if (result.blocks_by_shared_memory > 0) {
        // The carveout the calculator assumed: the preference, or the one a block needs if larger.
        std::size_t carveout = 0;
        cudaOccSMemPerMultiprocessor(&carveout, &device, &state);
        if (carveout < occ.allocatedSharedMemPerBlock) {
            carveout = occ.allocatedSharedMemPerBlock;
            cudaOccAlignUpShmemSizeVoltaPlus(&carveout, &device);
        }
        result.shared_bytes_per_sm = static_cast<int>(carveout);
    }

    // Why a resource admits no block at all, for messages.
    std::string why_registers, why_shared;
    if (result.blocks_by_registers == 0) {
        const long long registers_per_warp = round_up(kernel.numRegs * arch.warp_size, arch.register_allocation_unit);
        if (registers_per_thread > arch.max_registers_per_thread)
            why_registers = std::to_string(registers_per_thread) + " registers per thread exceed the limit of " +
                            std::to_string(arch.max_registers_per_thread);
        else
            why_registers =
                std::to_string(threads_per_block) + " threads x " + std::to_string(registers_per_thread) +
                " registers need " +
                std::to_string(registers_per_warp * round_up(warps_per_block, arch.warp_allocation_granularity)) +
                " registers per block (per-warp allocation of " + std::to_string(registers_per_warp) +
                ", warps rounded up to " + std::to_string(arch.warp_allocation_granularity) + "), more than the " +
                std::to_string(arch.max_registers_per_block) + " a block may hold";
    }
    if (result.blocks_by_shared_memory == 0) {
        const int block_limit = options.shared_opt_in ? arch.shared_bytes_per_block_optin : arch.shared_bytes_per_block;
        why_shared = std::to_string(shared_bytes_per_block) + " bytes of shared memory per block exceed the " +
                     kib_text(block_limit) + " a block may use";
        if (!options.shared_opt_in && shared_bytes_per_block <= arch.shared_bytes_per_block_optin)
            why_shared += " without opting in (cudaFuncAttributeMaxDynamicSharedMemorySize)";
    }

    // The smallest limit wins. On a tie the architecture's own slots are named first (more of the
    // kernel's resources would not help), then the kernel's resources.
    const std::array<std::pair<OccupancyLimiter, int>, 5> limits{{
        {OccupancyLimiter::warps, result.blocks_by_warps},
        {OccupancyLimiter::blocks, result.blocks_by_block_slots},
        {OccupancyLimiter::registers, result.blocks_by_registers},
        {OccupancyLimiter::shared_memory, result.blocks_by_shared_memory},
        {OccupancyLimiter::barriers, result.blocks_by_barriers},
    }};
    const auto smallest = std::min_element(limits.begin(), limits.end(),
                                           [](const auto& a, const auto& b) { return a.second < b.second; });
    result.limiter = smallest->first;
    result.blocks_per_sm = smallest->second;
    result.active_warps_per_sm = result.blocks_per_sm * warps_per_block;
    result.occupancy = static_cast<double>(result.active_warps_per_sm) / arch.max_warps_per_sm;

    if (result.blocks_per_sm == 0) {
        switch (result.limiter) {
        case OccupancyLimiter::warps:
            result.impossible_reason = std::to_string(threads_per_block) + " threads per block exceed the limit of " +
                                       std::to_string(arch.max_threads_per_block);
            break;
        case OccupancyLimiter::registers: result.impossible_reason = why_registers; break;
        case OccupancyLimiter::shared_memory: result.impossible_reason = why_shared; break;
        case OccupancyLimiter::barriers:
            result.impossible_reason =
                std::to_string(options.barriers_per_block) + " named barriers per block exceed the " +
                std::to_string(arch.barriers_per_block_slot * arch.max_blocks_per_sm) + " an SM has";
            break;
        case OccupancyLimiter::blocks: result.impossible_reason = "the architecture allows no resident blocks"; break;
        }
        result.impossible_reason = where + result.impossible_reason;
    }
    return result;
}

std::string format_occupancy_percent(double occupancy)
{
    char text[32];
    const double percent = occupancy * 100.0;
    auto end = std::to_chars(text, text + sizeof text, percent, std::chars_format::fixed, 1).ptr;
    std::string formatted(text, end);
    if (formatted.ends_with(".0")) formatted.resize(formatted.size() - 2);
    return formatted + " %";
}

std::string describe_occupancy_cliff(const Occupancy& before, const Occupancy& after)
{
    std::vector<std::string> changes;
    if (before.registers_per_thread != after.registers_per_thread) {
        changes.push_back("registers " + std::to_string(before.registers_per_thread) + " -> " +
                          std::to_string(after.registers_per_thread));
    }
    if (before.shared_bytes_per_block != after.shared_bytes_per_block) {
        changes.push_back("shared memory " + std::to_string(before.shared_bytes_per_block) + " -> " +
                          std::to_string(after.shared_bytes_per_block) + " bytes");
    }
    if (before.threads_per_block != after.threads_per_block) {
        changes.push_back("threads per block " + std::to_string(before.threads_per_block) + " -> " +
                          std::to_string(after.threads_per_block));
    }
    if (changes.empty()) changes.push_back("no resource change");
    return join(changes) + ": resident blocks " + std::to_string(before.blocks_per_sm) + " -> " +
           std::to_string(after.blocks_per_sm) + ", theoretical occupancy " +
           format_occupancy_percent(before.occupancy) + " -> " + format_occupancy_percent(after.occupancy) +
           " (limiter: " + std::string(to_string(after.limiter)) + ")";
}

} // namespace harness::compile
