#include "harness/compile/occupancy.hxx"

#include "harness/core/text.hxx"

#include <algorithm>
#include <array>
#include <charconv>
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

// The smallest carveout the SM supports that holds `bytes`, or 0 if none does.
int carveout_at_least(const ArchLimits& arch, long long bytes)
{
    for (int size_kib : arch.carveouts_kib)
        if (static_cast<long long>(size_kib) * kib >= bytes) return size_kib * kib;
    return 0;
}

std::string kib_text(long long bytes)
{
    if (bytes % kib == 0) return std::to_string(bytes / kib) + " KiB";
    return std::to_string(bytes) + " bytes";
}

} // namespace

std::string_view to_string(OccupancyLimiter limiter)
{
    switch (limiter) {
    case OccupancyLimiter::warps: return "warps";
    case OccupancyLimiter::registers: return "registers";
    case OccupancyLimiter::shared_memory: return "shared memory";
    case OccupancyLimiter::blocks: return "blocks";
    case OccupancyLimiter::barriers: return "barriers";
    }
    return "unknown";
}

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
    std::string why_registers, why_shared;

    // Warp slots.
    result.blocks_by_warps =
        threads_per_block > arch.max_threads_per_block ? 0 : arch.max_warps_per_sm / warps_per_block;
    result.blocks_by_block_slots = arch.max_blocks_per_sm;

    // Registers: whole warps per sub-partition. The 64-bit products keep absurd inputs from overflowing.
    const long long registers_per_warp = static_cast<long long>(
        round_up(std::min(registers_per_thread, 1 << 20) * arch.warp_size, arch.register_allocation_unit));
    const long long registers_per_block = registers_per_warp * warps_per_block;
    // The hardware checks the per-block limit as if warps filled all sub-partitions evenly.
    const long long registers_checked_per_block =
        registers_per_warp * round_up(warps_per_block, arch.warp_allocation_granularity);
    result.allocated_registers_per_block = static_cast<int>(std::min<long long>(registers_per_block, unlimited_blocks));
    if (registers_per_thread > arch.max_registers_per_thread) {
        result.blocks_by_registers = 0;
        why_registers = std::to_string(registers_per_thread) + " registers per thread exceed the limit of " +
                        std::to_string(arch.max_registers_per_thread);
    } else if (registers_checked_per_block > arch.max_registers_per_block) {
        result.blocks_by_registers = 0;
        why_registers = std::to_string(threads_per_block) + " threads x " + std::to_string(registers_per_thread) +
                        " registers need " + std::to_string(registers_checked_per_block) +
                        " registers per block (per-warp allocation of " + std::to_string(registers_per_warp) +
                        ", warps rounded up to " + std::to_string(arch.warp_allocation_granularity) +
                        "), more than the " + std::to_string(arch.max_registers_per_block) + " a block may hold";
    } else if (registers_per_warp == 0) {
        result.blocks_by_registers = unlimited_blocks;
    } else {
        const long long registers_per_partition = arch.registers_per_sm / arch.warp_allocation_granularity;
        const long long warps_per_sm = registers_per_partition / registers_per_warp * arch.warp_allocation_granularity;
        result.blocks_by_registers = static_cast<int>(warps_per_sm / warps_per_block);
    }

    // Shared memory.
    const long long shared_used = static_cast<long long>(shared_bytes_per_block) + arch.reserved_shared_bytes_per_block;
    const long long shared_allocated = (shared_used + arch.shared_allocation_granularity - 1) /
                                       arch.shared_allocation_granularity * arch.shared_allocation_granularity;
    result.allocated_shared_bytes_per_block = static_cast<int>(std::min<long long>(shared_allocated, unlimited_blocks));
    const int block_limit = options.shared_opt_in ? arch.shared_bytes_per_block_optin : arch.shared_bytes_per_block;
    if (shared_allocated > static_cast<long long>(block_limit) + arch.reserved_shared_bytes_per_block) {
        result.blocks_by_shared_memory = 0;
        why_shared = std::to_string(shared_bytes_per_block) + " bytes of shared memory per block exceed the " +
                     kib_text(block_limit) + " a block may use";
        if (!options.shared_opt_in && shared_bytes_per_block <= arch.shared_bytes_per_block_optin)
            why_shared += " without opting in (cudaFuncAttributeMaxDynamicSharedMemorySize)";
    } else {
        const long long preferred =
            options.shared_carveout_percent < 0
                ? arch.shared_bytes_per_sm
                : static_cast<long long>(options.shared_carveout_percent) * arch.shared_bytes_per_sm / 100;
        const int preferred_carveout = carveout_at_least(arch, preferred);
        // A preference smaller than one block is overridden by the carveout that block needs.
        result.shared_bytes_per_sm =
            preferred_carveout >= shared_allocated ? preferred_carveout : carveout_at_least(arch, shared_allocated);
        result.blocks_by_shared_memory =
            shared_allocated == 0 ? unlimited_blocks : static_cast<int>(result.shared_bytes_per_sm / shared_allocated);
    }

    // Named barriers, counted by the calculator from sm_90 on.
    result.blocks_by_barriers = unlimited_blocks;
    if (arch.barriers_per_block_slot > 0 && options.barriers_per_block > 0) {
        result.blocks_by_barriers = arch.barriers_per_block_slot * arch.max_blocks_per_sm / options.barriers_per_block;
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
