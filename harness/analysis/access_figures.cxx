// Sectors and wavefronts of one warp-level access: the hardware's rules, applied to the lanes'
// addresses (access_model.hxx).

#include "harness/analysis/access_model.hxx"

#include <algorithm>
#include <bit>

namespace harness::analysis {

namespace {

/// Distinct values among the first `n` of `values`, sorted in place.
std::uint32_t count_distinct(std::uint64_t* values, std::uint32_t n)
{
    // Lanes' addresses usually ascend with the lane: then they need no sorting.
    if (!std::is_sorted(values, values + n)) std::sort(values, values + n);
    return static_cast<std::uint32_t>(std::unique(values, values + n) - values);
}

} // namespace

Sectors global_sectors(const std::array<std::uint64_t, 32>& addresses, std::uint32_t active,
                       std::uint32_t bytes_per_lane)
{
    // A lane's access is naturally aligned (PTX requires it) and at most 16 bytes, so it lies in
    // one 32-byte sector. The ideal is the sectors of the lanes' bytes laid end to end, and never
    // more than the sectors touched: lanes that share a sector (a broadcast) cost nothing extra.
    // This is the GPU's smsp__sass_sectors_mem_global_ideal: gemm_naive's 16 x 16 block reads two
    // elements of A per warp, two sectors, and the GPU counts no excess for them.
    std::array<std::uint64_t, 64> sectors{};
    std::uint32_t n = 0;
    for (std::uint32_t lane = 0; lane < 32; ++lane) {
        if (!(active >> lane & 1u)) continue;
        const std::uint64_t first = addresses[lane] / 32, last = (addresses[lane] + bytes_per_lane - 1) / 32;
        sectors[n++] = first;
        if (last != first) sectors[n++] = last; // a misaligned access (never from a valid kernel)
    }
    Sectors s;
    const std::uint64_t bytes = std::uint64_t{static_cast<std::uint32_t>(std::popcount(active))} * bytes_per_lane;
    s.actual = count_distinct(sectors.data(), n);
    s.ideal = std::min(s.actual, static_cast<std::uint32_t>((bytes + 31) / 32));
    return s;
}

Wavefronts shared_wavefronts(const std::array<std::uint64_t, 32>& addresses, std::uint32_t active,
                             std::uint32_t bytes_per_lane)
{
    // 32-bit and narrower: the whole warp at once; 64-bit: each half-warp; 128-bit: each quarter.
    const std::uint32_t group = bytes_per_lane >= 16 ? 8 : bytes_per_lane == 8 ? 16 : 32;
    const std::uint32_t words_per_lane = std::max<std::uint32_t>(1, bytes_per_lane / 4);
    Wavefronts w;
    for (std::uint32_t first = 0; first < 32; first += group) {
        std::array<std::uint64_t, 128> words{};
        std::uint32_t n = 0, lanes = 0;
        for (std::uint32_t lane = first; lane < first + group; ++lane) {
            if (!(active >> lane & 1u)) continue;
            ++lanes;
            for (std::uint32_t k = 0; k < words_per_lane; ++k) words[n++] = addresses[lane] / 4 + k;
        }
        if (lanes == 0) continue;
        // Each distinct word costs its bank one pass; the busiest bank sets the wavefronts.
        const std::uint32_t distinct = count_distinct(words.data(), n);
        std::array<std::uint32_t, 32> per_bank{};
        std::uint32_t most = 0;
        for (std::uint32_t i = 0; i < distinct; ++i) most = std::max(most, ++per_bank[words[i] % 32]);
        w.actual += most;
        w.ideal += std::max<std::uint32_t>(1, (distinct + 31) / 32);
    }
    return w;
}

const char* to_string(AccessKind kind)
{
    switch (kind) {
    case AccessKind::global_load: return "global load";
    case AccessKind::global_store: return "global store";
    case AccessKind::global_atomic: return "global atomic";
    case AccessKind::shared_load: return "shared load";
    case AccessKind::shared_store: return "shared store";
    case AccessKind::shared_atomic: return "shared atomic";
    case AccessKind::local: return "local";
    case AccessKind::other: return "other";
    }
    return "?";
}

bool is_global(AccessKind kind)
{
    return kind == AccessKind::global_load || kind == AccessKind::global_store || kind == AccessKind::global_atomic;
}

bool is_shared(AccessKind kind)
{
    return kind == AccessKind::shared_load || kind == AccessKind::shared_store || kind == AccessKind::shared_atomic;
}

std::uint64_t model_buffer_address(std::size_t index)
{
    // Apart by 2^36 bytes (64 GiB, more than any buffer of a case), on a 2^36 boundary: 256-byte aligned.
    return (std::uint64_t{0x7f} << 40) + (std::uint64_t{index} << 36);
}

} // namespace harness::analysis
