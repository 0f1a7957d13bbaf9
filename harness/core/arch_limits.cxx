#include "harness/core/arch_limits.hxx"

#include "harness/core/error.hxx"
#include "harness/core/text.hxx"

#include <array>
#include <vector>

namespace harness {
namespace {

constexpr int kib = 1024;

// Carveout sizes each SM generation can configure (cudaOccAlignUpShmemSizeVoltaPlus).
constexpr std::array<int, 6> volta_carveouts_kib{0, 8, 16, 32, 64, 96};
constexpr std::array<int, 2> turing_carveouts_kib{32, 64};
constexpr std::array<int, 8> ga100_carveouts_kib{0, 8, 16, 32, 64, 100, 132, 164};             // sm_80, sm_87
constexpr std::array<int, 6> consumer_carveouts_kib{0, 8, 16, 32, 64, 100};                    // sm_86, sm_89, sm_120
constexpr std::array<int, 10> hopper_carveouts_kib{0, 8, 16, 32, 64, 100, 132, 164, 196, 228}; // sm_90, sm_100

// Limits from the CUDA C++ Programming Guide's per-compute-capability table and cuda_occupancy.h
// (CUDA 13.0); the sm_90 row equals what an H200 reports through cuDeviceGetAttribute.
constexpr ArchLimits make_limits(std::string_view name, int sm_version, int max_warps, int max_blocks,
                                 int shared_per_sm_kib, int shared_optin_kib, int shared_granularity,
                                 int reserved_shared, int barriers_per_block_slot, std::span<const int> carveouts)
{
    ArchLimits limits;
    limits.name = name;
    limits.sm_version = sm_version;
    limits.max_warps_per_sm = max_warps;
    limits.max_blocks_per_sm = max_blocks;
    limits.registers_per_sm = 64 * kib;
    limits.max_registers_per_block = 64 * kib;
    limits.shared_bytes_per_sm = shared_per_sm_kib * kib;
    limits.shared_bytes_per_block_optin = shared_optin_kib * kib;
    limits.shared_allocation_granularity = shared_granularity;
    limits.reserved_shared_bytes_per_block = reserved_shared;
    limits.barriers_per_block_slot = barriers_per_block_slot;
    limits.carveouts_kib = carveouts;
    return limits;
}

constexpr std::array known_limits{
    make_limits("sm_70", 70, 64, 32, 96, 96, 256, 0, 0, volta_carveouts_kib),
    make_limits("sm_75", 75, 32, 16, 64, 64, 256, 0, 0, turing_carveouts_kib),
    make_limits("sm_80", 80, 64, 32, 164, 163, 128, 1 * kib, 0, ga100_carveouts_kib),
    make_limits("sm_86", 86, 48, 16, 100, 99, 128, 1 * kib, 0, consumer_carveouts_kib),
    make_limits("sm_87", 87, 48, 16, 164, 163, 128, 1 * kib, 0, ga100_carveouts_kib),
    make_limits("sm_89", 89, 48, 24, 100, 99, 128, 1 * kib, 0, consumer_carveouts_kib),
    make_limits("sm_90", 90, 64, 32, 228, 227, 128, 1 * kib, 2, hopper_carveouts_kib),
    make_limits("sm_100", 100, 64, 32, 228, 227, 128, 1 * kib, 2, hopper_carveouts_kib),
    make_limits("sm_120", 120, 48, 24, 100, 99, 128, 1 * kib, 1, consumer_carveouts_kib),
};

} // namespace

std::span<const ArchLimits> known_arch_limits()
{
    return known_limits;
}

const ArchLimits* find_arch_limits(std::string_view arch)
{
    // sm_90a / sm_100f name the same SM with arch-specific or family features enabled.
    if (arch.size() > 3 && (arch.back() == 'a' || arch.back() == 'f')) arch.remove_suffix(1);
    for (const ArchLimits& limits : known_limits)
        if (limits.name == arch) return &limits;
    return nullptr;
}

const ArchLimits& arch_limits(std::string_view arch)
{
    if (const ArchLimits* limits = find_arch_limits(arch)) return *limits;
    std::vector<std::string> names;
    for (const ArchLimits& limits : known_limits) names.emplace_back(limits.name);
    throw Error(ErrorKind::bad_input, "unknown GPU architecture '" + std::string(arch) + "' (known: " + join(names) +
                                          ")" + did_you_mean(std::string(arch), names));
}

} // namespace harness
