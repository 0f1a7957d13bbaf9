#include "harness/cliff/launch_model.hxx"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace harness::cliff {

bool alignment_confirmed(double sectors_before, double sectors_after, bool rise_expected)
{
    return rise_expected ? sectors_after > sectors_before : sectors_after < sectors_before;
}

std::string alignment_confirmation(double sectors_before, double sectors_after, bool rise_expected)
{
    if (alignment_confirmed(sectors_before, sectors_after, rise_expected))
        return fmt::format("; confirmed: sectors per request {:.1f} -> {:.1f}", sectors_before, sectors_after);
    if (sectors_before == sectors_after)
        return fmt::format("; not confirmed by counters (sectors per request {:.1f} both sides)", sectors_before);
    return fmt::format("; not confirmed by counters (sectors per request {:.1f} -> {:.1f}: {})", sectors_before,
                       sectors_after, rise_expected ? "fewer, not more" : "more, not fewer");
}

namespace {

constexpr char dimension_names[] = {'x', 'y', 'z'};

std::uint64_t block_count(const std::array<std::uint64_t, 3>& grid)
{
    return grid[0] * grid[1] * grid[2];
}

std::uint64_t threads_per_block(const LaunchShape& shape)
{
    return block_count(shape.block);
}

/// Lower rank, earlier in explain_step's order.
int rank(CliffCause cause)
{
    switch (cause) {
    case CliffCause::occupancy: return 0;
    case CliffCause::waves: return 1;
    case CliffCause::tiles: return 2;
    case CliffCause::alignment: return 3;
    case CliffCause::footprint: return 4;
    case CliffCause::unexplained: return 5;
    }
    return 5;
}

const char* plural(std::uint64_t n, const char* one, const char* many)
{
    return n == 1 ? one : many;
}

std::optional<Explanation> occupancy_change(const LaunchShape& before, const LaunchShape& after)
{
    if (before.blocks_per_sm <= 0 || after.blocks_per_sm <= 0 || before.blocks_per_sm == after.blocks_per_sm)
        return std::nullopt;
    std::string text =
        fmt::format("occupancy: resident blocks {} -> {} per SM", before.blocks_per_sm, after.blocks_per_sm);
    const std::string& limiter = after.limiter.empty() ? before.limiter : after.limiter;
    if (!limiter.empty()) text += fmt::format(" (limiter: {})", limiter);
    if (before.registers_per_thread > 0 && after.registers_per_thread > 0 &&
        before.registers_per_thread != after.registers_per_thread)
        text += fmt::format(", registers {} -> {} per thread", before.registers_per_thread, after.registers_per_thread);
    if (before.shared_bytes != after.shared_bytes)
        text += fmt::format(", shared memory {} -> {} bytes per block", before.shared_bytes, after.shared_bytes);
    if (threads_per_block(before) != threads_per_block(after))
        text += fmt::format(", threads per block {} -> {}", threads_per_block(before), threads_per_block(after));
    return Explanation{CliffCause::occupancy, std::move(text)};
}

std::optional<Explanation> wave_change(const LaunchShape& before, const LaunchShape& after, const GpuShape& gpu)
{
    // Blocks per SM are equal here where both are known (else occupancy would have explained it).
    if (gpu.sm_count <= 0 || before.blocks_per_sm <= 0 || after.blocks_per_sm <= 0) return std::nullopt;
    const auto waves = [&](const LaunchShape& shape) {
        const std::uint64_t per_wave =
            static_cast<std::uint64_t>(gpu.sm_count) * static_cast<std::uint64_t>(shape.blocks_per_sm);
        return (block_count(shape.grid) + per_wave - 1) / per_wave;
    };
    const std::uint64_t waves_before = waves(before), waves_after = waves(after);
    if (waves_before == waves_after) return std::nullopt;
    const auto per_sm = static_cast<std::uint64_t>(after.blocks_per_sm);
    return Explanation{CliffCause::waves,
                       fmt::format("wave quantisation: {} -> {} blocks, {} -> {} waves of {} SMs x {} {}",
                                   block_count(before.grid), block_count(after.grid), waves_before, waves_after,
                                   gpu.sm_count, per_sm, plural(per_sm, "block", "blocks"))};
}

/// The whole number of axis units one block covers where the grid dimension is the axis value's
/// ceil-division by it at both points; 0 where no such tile exists.
std::uint64_t tile_of(double x_before, double x_after, std::uint64_t blocks_before, std::uint64_t blocks_after)
{
    if (x_before != std::floor(x_before) || x_after != std::floor(x_after) || x_before < 1) return 0;
    const auto before = static_cast<std::uint64_t>(x_before), after = static_cast<std::uint64_t>(x_after);
    const std::uint64_t tile = (before + blocks_before - 1) / blocks_before;
    const auto covers = [&](std::uint64_t x, std::uint64_t blocks) { return (x + tile - 1) / tile == blocks; };
    return covers(before, blocks_before) && covers(after, blocks_after) ? tile : 0;
}

std::optional<Explanation> tile_change(const LaunchShape& before, const LaunchShape& after, std::string_view axis)
{
    if (!(after.x > before.x) || before.x <= 0) return std::nullopt;
    for (std::size_t d = 0; d < 3; ++d) {
        const std::uint64_t blocks_before = before.grid[d], blocks_after = after.grid[d];
        if (blocks_before == 0 || blocks_after <= blocks_before) continue;
        // The blocks grew by a larger ratio than the axis value: the last block is a tile barely begun.
        const double block_ratio = static_cast<double>(blocks_after) / static_cast<double>(blocks_before);
        if (!(block_ratio > after.x / before.x)) continue;
        const std::uint64_t tile = tile_of(before.x, after.x, blocks_before, blocks_after);
        const std::string along = tile > 0 ? fmt::format("tile of {} along {}", tile, axis) : std::string(axis);
        return Explanation{CliffCause::tiles,
                           fmt::format("tile quantisation: grid.{} {} -> {} ({}: {} -> {})", dimension_names[d],
                                       blocks_before, blocks_after, along, before.x, after.x)};
    }
    return std::nullopt;
}

std::optional<Explanation> alignment_change(const LaunchShape& before, const LaunchShape& after)
{
    if (!before.pitch_bytes || !after.pitch_bytes) return std::nullopt;
    const bool aligned_before = *before.pitch_bytes % sector_bytes == 0;
    const bool aligned_after = *after.pitch_bytes % sector_bytes == 0;
    if (aligned_before == aligned_after) return std::nullopt;
    std::string text =
        fmt::format("alignment: pitch {} -> {} bytes, {} a multiple of {}-byte sectors", *before.pitch_bytes,
                    *after.pitch_bytes, aligned_before ? "no longer" : "now", sector_bytes);
    if (before.sectors_per_request && after.sectors_per_request)
        text += alignment_confirmation(*before.sectors_per_request, *after.sectors_per_request, aligned_before);
    return Explanation{CliffCause::alignment, std::move(text)};
}

/// A row whose pitch grows while staying as aligned as it was still spans more memory: each 128
/// bytes more is one more L2 line (and L1 cache line) per row, each 32 bytes one more sector. A row
/// kernel with rows padded to 32 floats steps by 5-8 % at every such line on an H100, and no other
/// cause of the model changes there.
std::optional<Explanation> footprint_change(const LaunchShape& before, const LaunchShape& after)
{
    if (!before.pitch_bytes || !after.pitch_bytes || *after.pitch_bytes == *before.pitch_bytes) return std::nullopt;
    const auto spans = [](std::uint64_t bytes, std::uint64_t unit) { return (bytes + unit - 1) / unit; };
    for (const auto& [unit, name] : {std::pair{line_bytes, "lines"}, std::pair{sector_bytes, "sectors"}}) {
        const std::uint64_t was = spans(*before.pitch_bytes, unit), now = spans(*after.pitch_bytes, unit);
        if (was == now) continue;
        return Explanation{CliffCause::footprint,
                           fmt::format("footprint: pitch {} -> {} bytes, each row spans {} -> {} {} of {} bytes",
                                       *before.pitch_bytes, *after.pitch_bytes, was, now, name, unit)};
    }
    return std::nullopt;
}

/// What the model could not judge between the points, for an unexplained step: "" when it knew everything.
std::string unknowns(const LaunchShape& before, const LaunchShape& after, const GpuShape& gpu)
{
    std::string out;
    const auto add = [&](const char* what) { out += out.empty() ? what : fmt::format(", {}", what); };
    if (before.blocks_per_sm <= 0 || after.blocks_per_sm <= 0) add("resident blocks per SM");
    if (gpu.sm_count <= 0) add("the GPU's SM count");
    return out.empty() ? out : fmt::format(" (unknown: {})", out);
}

Explanation unexplained(const LaunchShape& before, const LaunchShape& after, const GpuShape& gpu, std::string_view axis)
{
    return {CliffCause::unexplained,
            fmt::format("unexplained: occupancy, waves, grid and pitch alignment do not change between {} = {} and "
                        "{}{}",
                        axis, before.x, after.x, unknowns(before, after, gpu))};
}

} // namespace

Explanation explain_step(const LaunchShape& before, const LaunchShape& after, const GpuShape& gpu,
                         std::string_view axis)
{
    if (auto e = occupancy_change(before, after)) return *e;
    if (auto e = wave_change(before, after, gpu)) return *e;
    if (auto e = tile_change(before, after, axis)) return *e;
    if (auto e = alignment_change(before, after)) return *e;
    if (auto e = footprint_change(before, after)) return *e;
    return unexplained(before, after, gpu, axis);
}

void explain_cliff(Cliff& cliff, const std::vector<LaunchShape>& shapes, const GpuShape& gpu, std::string_view axis)
{
    if (shapes.size() < 2) {
        cliff.cause = CliffCause::unexplained;
        cliff.explanation = fmt::format("unexplained: no launch model for the points of {} = {} and {}", axis,
                                        cliff.x_before, cliff.x_after);
        return;
    }
    const auto at_x = [](const LaunchShape& shape, double x) { return shape.x < x; };
    // The last point at or before x_before and the first at or after x_after.
    const auto after_first =
        std::partition_point(shapes.begin(), shapes.end(), [&](const LaunchShape& s) { return s.x <= cliff.x_before; });
    std::size_t first = after_first == shapes.begin() ? 0 : static_cast<std::size_t>(after_first - shapes.begin()) - 1;
    std::size_t last =
        static_cast<std::size_t>(std::lower_bound(shapes.begin(), shapes.end(), cliff.x_after, at_x) - shapes.begin());
    last = std::min(last, shapes.size() - 1);
    if (last <= first) {
        first = std::min(first, shapes.size() - 2);
        last = first + 1;
    }

    std::optional<Explanation> best;
    const auto consider = [&](std::size_t i) {
        Explanation e = explain_step(shapes[i], shapes[i + 1], gpu, axis);
        if (!best || rank(e.cause) < rank(best->cause)) best = std::move(e);
    };
    for (std::size_t i = first; i < last; ++i) consider(i);
    if (best->cause == CliffCause::unexplained) {
        // Nothing changes inside the step: the edge may sit one point off.
        if (first > 0) consider(first - 1);
        if (last + 1 < shapes.size()) consider(last);
    }
    if (best->cause == CliffCause::unexplained) best = unexplained(shapes[first], shapes[last], gpu, axis);
    cliff.cause = best->cause;
    cliff.explanation = std::move(best->text);
}

} // namespace harness::cliff
