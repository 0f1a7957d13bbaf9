// The launch model behind a cliff: wave boundaries on GPUs of several SM counts, computed
// exactly; tile quantisation; a pitch against 32-byte sectors, with and without counters that
// confirm it; resident blocks per SM and their limiter; steps nothing explains; and a cliff whose
// edge the step finder placed a point off.

#include "harness/cliff/launch_model.hxx"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace cliff_explain_test {

using namespace harness;
using namespace harness::cliff;

namespace {

/// A one-dimensional launch of `blocks` blocks of 256 threads at axis value `x`, `per_sm` resident.
LaunchShape blocks_at(double x, std::uint64_t blocks, int per_sm = 1)
{
    LaunchShape s;
    s.x = x;
    s.grid = {blocks, 1, 1};
    s.block = {256, 1, 1};
    s.blocks_per_sm = per_sm;
    s.limiter = "warps";
    s.registers_per_thread = 32;
    return s;
}

/// A launch over N elements in tiles of `tile` along grid.x.
LaunchShape tiled(double n, std::uint64_t tile, int per_sm = 1)
{
    return blocks_at(n, (static_cast<std::uint64_t>(n) + tile - 1) / tile, per_sm);
}

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

} // namespace

TEST(CliffExplain, CauseNamesRoundTrip)
{
    for (const auto cause : {CliffCause::waves, CliffCause::tiles, CliffCause::alignment, CliffCause::occupancy,
                             CliffCause::unexplained}) {
        const auto back = cliff_cause_from_name(cliff_cause_name(cause));
        ASSERT_TRUE(back.has_value()) << cliff_cause_name(cause);
        EXPECT_EQ(*back, cause);
    }
    EXPECT_STREQ(cliff_cause_name(CliffCause::waves), "waves");
    EXPECT_STREQ(cliff_cause_name(CliffCause::unexplained), "unexplained");
    EXPECT_FALSE(cliff_cause_from_name("wave").has_value());
    EXPECT_FALSE(cliff_cause_from_name("").has_value());
}

TEST(CliffExplain, WaveBoundariesOnEachGpu)
{
    // H100 (132 SMs), A100 (108), and GPUs of 80, 144 and 46 SMs; one, two and four blocks per SM.
    for (const int sms : {132, 108, 80, 144, 46})
        for (const int per_sm : {1, 2, 4}) {
            const GpuShape gpu{sms};
            const auto wave = static_cast<std::uint64_t>(sms * per_sm);
            for (std::uint64_t waves = 1; waves <= 3; ++waves) {
                const std::uint64_t last = waves * wave; // the last block of a full wave
                const auto e = explain_step(blocks_at(1, last, per_sm), blocks_at(2, last + 1, per_sm), gpu);
                EXPECT_EQ(e.cause, CliffCause::waves) << sms << " SMs x " << per_sm << ": " << e.text;
                EXPECT_EQ(e.text,
                          fmt::format("wave quantisation: {} -> {} blocks, {} -> {} waves of {} SMs x {} {}", last,
                                      last + 1, waves, waves + 1, sms, per_sm, per_sm == 1 ? "block" : "blocks"));
                // Within a wave, one block more changes nothing.
                EXPECT_EQ(explain_step(blocks_at(1, last - 1, per_sm), blocks_at(2, last, per_sm), gpu).cause,
                          CliffCause::unexplained)
                    << sms << " SMs";
            }
        }
    EXPECT_EQ(explain_step(blocks_at(1, 264), blocks_at(2, 265), GpuShape{132}).text,
              "wave quantisation: 264 -> 265 blocks, 2 -> 3 waves of 132 SMs x 1 block");
}

TEST(CliffExplain, WavesCountBlocksOfEveryGridDimension)
{
    LaunchShape before = blocks_at(1, 66), after = blocks_at(2, 67);
    before.grid[1] = after.grid[1] = 2; // 132 -> 134 blocks
    before.grid[2] = after.grid[2] = 1;
    const auto e = explain_step(before, after, GpuShape{132});
    EXPECT_EQ(e.cause, CliffCause::waves);
    EXPECT_EQ(e.text, "wave quantisation: 132 -> 134 blocks, 1 -> 2 waves of 132 SMs x 1 block");
}

TEST(CliffExplain, WavesNeedTheSmCountAndResidentBlocks)
{
    // The static tier knows no GPU; an unknown occupancy cannot size a wave either.
    EXPECT_NE(explain_step(blocks_at(1, 132), blocks_at(2, 133), GpuShape{0}).cause, CliffCause::waves);
    EXPECT_NE(explain_step(blocks_at(1, 132, 0), blocks_at(2, 133, 0), GpuShape{132}).cause, CliffCause::waves);
    const auto e = explain_step(blocks_at(1, 132), blocks_at(2, 132), GpuShape{0}, "N");
    EXPECT_EQ(e.cause, CliffCause::unexplained);
    EXPECT_TRUE(contains(e.text, "N = 1 and 2")) << e.text;
    EXPECT_TRUE(contains(e.text, "unknown: the GPU's SM count")) << e.text;
}

TEST(CliffExplain, TileQuantisation)
{
    // N = 128 -> 129 in tiles of 32: a fifth block for one element, far from a wave boundary.
    const GpuShape gpu{132};
    const auto e = explain_step(tiled(128, 32), tiled(129, 32), gpu, "N");
    EXPECT_EQ(e.cause, CliffCause::tiles);
    EXPECT_EQ(e.text, "tile quantisation: grid.x 4 -> 5 (tile of 32 along N: 128 -> 129)");
    // Within a tile the grid does not change.
    EXPECT_EQ(explain_step(tiled(129, 32), tiled(130, 32), gpu, "N").cause, CliffCause::unexplained);
    // A sparse scan whose blocks grow in proportion to N is no tile effect.
    EXPECT_EQ(explain_step(tiled(128, 32), tiled(160, 32), gpu, "N").cause, CliffCause::unexplained);
    // A tile along grid.y, the axis as a width.
    LaunchShape before = blocks_at(64, 8), after = blocks_at(65, 8);
    before.grid[1] = 4;
    after.grid[1] = 5;
    const auto y = explain_step(before, after, gpu, "width");
    EXPECT_EQ(y.cause, CliffCause::tiles);
    EXPECT_EQ(y.text, "tile quantisation: grid.y 4 -> 5 (tile of 16 along width: 64 -> 65)");
    // A grid that is no ceil-division of the axis value still quantises, without a tile to name.
    LaunchShape odd_before = blocks_at(100, 3), odd_after = blocks_at(101, 7);
    const auto odd = explain_step(odd_before, odd_after, gpu, "N");
    EXPECT_EQ(odd.cause, CliffCause::tiles);
    EXPECT_EQ(odd.text, "tile quantisation: grid.x 3 -> 7 (N: 100 -> 101)");
}

TEST(CliffExplain, WavesComeBeforeTiles)
{
    // 4224 -> 4225 elements in tiles of 32: block 133 both starts a tile and a second wave on 132 SMs.
    const auto e = explain_step(tiled(4224, 32), tiled(4225, 32), GpuShape{132}, "N");
    EXPECT_EQ(e.cause, CliffCause::waves);
    EXPECT_EQ(e.text, "wave quantisation: 132 -> 133 blocks, 1 -> 2 waves of 132 SMs x 1 block");
    // Without an SM count, the same pair is a tile effect.
    EXPECT_EQ(explain_step(tiled(4224, 32), tiled(4225, 32), GpuShape{0}, "N").cause, CliffCause::tiles);
}

TEST(CliffExplain, AlignmentWithAndWithoutCounters)
{
    const GpuShape gpu{132};
    LaunchShape before = blocks_at(32, 4), after = blocks_at(33, 4);
    before.pitch_bytes = 128;
    after.pitch_bytes = 132;
    auto e = explain_step(before, after, gpu, "width");
    EXPECT_EQ(e.cause, CliffCause::alignment);
    EXPECT_EQ(e.text, "alignment: pitch 128 -> 132 bytes, no longer a multiple of 32-byte sectors");

    before.sectors_per_request = 4.0;
    after.sectors_per_request = 5.0;
    e = explain_step(before, after, gpu, "width");
    EXPECT_EQ(e.text, "alignment: pitch 128 -> 132 bytes, no longer a multiple of 32-byte sectors; confirmed: "
                      "sectors per request 4.0 -> 5.0");

    after.sectors_per_request = 4.0;
    e = explain_step(before, after, gpu, "width");
    EXPECT_EQ(e.cause, CliffCause::alignment);
    EXPECT_EQ(e.text, "alignment: pitch 128 -> 132 bytes, no longer a multiple of 32-byte sectors; not confirmed by "
                      "counters (sectors per request 4.0 both sides)");

    // Fewer sectors where the pitch left alignment bear nothing out (an H100 read 4.0 -> 3.9 either
    // side of a noise step that once called itself confirmed).
    after.sectors_per_request = 3.9;
    e = explain_step(before, after, gpu, "width");
    EXPECT_EQ(e.text, "alignment: pitch 128 -> 132 bytes, no longer a multiple of 32-byte sectors; not confirmed by "
                      "counters (sectors per request 4.0 -> 3.9: fewer, not more)");
    EXPECT_FALSE(alignment_confirmed(4.0, 3.9, true));
    EXPECT_TRUE(alignment_confirmed(5.0, 4.0, false));

    // Back onto the sectors: "now".
    LaunchShape off = blocks_at(39, 4), on = blocks_at(40, 4);
    off.pitch_bytes = 156;
    on.pitch_bytes = 160;
    e = explain_step(off, on, gpu);
    EXPECT_EQ(e.cause, CliffCause::alignment);
    EXPECT_EQ(e.text, "alignment: pitch 156 -> 160 bytes, now a multiple of 32-byte sectors");

    // Misaligned on both sides, or only one side's pitch known: no alignment cause.
    off.pitch_bytes = 132;
    on.pitch_bytes = 136;
    EXPECT_EQ(explain_step(off, on, gpu).cause, CliffCause::unexplained);
    on.pitch_bytes.reset();
    EXPECT_EQ(explain_step(off, on, gpu).cause, CliffCause::unexplained);
}

TEST(CliffExplain, OccupancyWithItsLimiterAndTheResourcesThatChanged)
{
    const GpuShape gpu{132};
    LaunchShape before = blocks_at(47, 1000, 8), after = blocks_at(48, 1000, 6);
    before.shared_bytes = 47 * 512;
    after.shared_bytes = 48 * 512;
    after.limiter = "shared memory";
    auto e = explain_step(before, after, gpu);
    EXPECT_EQ(e.cause, CliffCause::occupancy);
    EXPECT_EQ(e.text, "occupancy: resident blocks 8 -> 6 per SM (limiter: shared memory), shared memory 24064 -> "
                      "24576 bytes per block");

    // Registers that grew with an unrolled loop; occupancy comes first even where waves change too.
    LaunchShape fewer = blocks_at(4, 264, 2), more = blocks_at(5, 265, 1);
    fewer.registers_per_thread = 64;
    more.registers_per_thread = 72;
    more.limiter = "registers";
    e = explain_step(fewer, more, gpu);
    EXPECT_EQ(e.cause, CliffCause::occupancy);
    EXPECT_EQ(e.text, "occupancy: resident blocks 2 -> 1 per SM (limiter: registers), registers 64 -> 72 per thread");

    // One side unknown: no occupancy cause.
    more.blocks_per_sm = 0;
    EXPECT_NE(explain_step(fewer, more, gpu).cause, CliffCause::occupancy);
}

TEST(CliffExplain, UnexplainedSaysWhereAndWhatWasUnknown)
{
    const auto e = explain_step(blocks_at(10, 20), blocks_at(11, 20), GpuShape{132}, "K");
    EXPECT_EQ(e.cause, CliffCause::unexplained);
    EXPECT_EQ(e.text, "unexplained: occupancy, waves, grid and pitch alignment do not change between K = 10 and 11");
    const auto unknown = explain_step(blocks_at(10, 20, 0), blocks_at(11, 20, 0), GpuShape{0}, "K");
    EXPECT_TRUE(contains(unknown.text, "(unknown: resident blocks per SM, the GPU's SM count)")) << unknown.text;
}

namespace {

/// The launches of a scan of N = 1 .. n over tiles of 32 on one block per SM.
std::vector<LaunchShape> scan_of_tiles(double first, double last)
{
    std::vector<LaunchShape> shapes;
    for (double n = first; n <= last; ++n) shapes.push_back(tiled(n, 32));
    return shapes;
}

Cliff cliff_between(double before, double after)
{
    Cliff c;
    c.x_before = before;
    c.x_after = after;
    c.depth = 0.5;
    return c;
}

} // namespace

TEST(CliffExplain, ExplainCliffReadsThePairInsideTheStep)
{
    // 80 SMs: a wave of 80 blocks, 2560 elements; the scan crosses it at N = 2560 -> 2561.
    const GpuShape gpu{80};
    const auto shapes = scan_of_tiles(2500, 2600);
    Cliff c = cliff_between(2560, 2561);
    explain_cliff(c, shapes, gpu, "N");
    EXPECT_EQ(c.cause, CliffCause::waves);
    EXPECT_EQ(c.explanation, "wave quantisation: 80 -> 81 blocks, 1 -> 2 waves of 80 SMs x 1 block");

    // A rise over several points: any pair inside it.
    c = cliff_between(2558, 2563);
    explain_cliff(c, shapes, gpu, "N");
    EXPECT_EQ(c.cause, CliffCause::waves);
}

TEST(CliffExplain, ExplainCliffLooksOnePointEitherSide)
{
    const GpuShape gpu{80};
    const auto shapes = scan_of_tiles(2500, 2600);
    // The step finder put the edge a point late (2561 -> 2562) or early (2559 -> 2560).
    for (const auto& [before, after] : {std::pair{2561.0, 2562.0}, std::pair{2559.0, 2560.0}}) {
        Cliff c = cliff_between(before, after);
        explain_cliff(c, shapes, gpu, "N");
        EXPECT_EQ(c.cause, CliffCause::waves) << before;
        EXPECT_EQ(c.explanation, "wave quantisation: 80 -> 81 blocks, 1 -> 2 waves of 80 SMs x 1 block") << before;
    }
    // Two points off is too far: a tile boundary nearby is not taken for it either.
    Cliff far = cliff_between(2562, 2563);
    explain_cliff(far, shapes, gpu, "N");
    EXPECT_EQ(far.cause, CliffCause::unexplained);
    EXPECT_EQ(far.explanation,
              "unexplained: occupancy, waves, grid and pitch alignment do not change between N = 2562 and 2563");
}

TEST(CliffExplain, ExplainCliffPrefersTheEarlierCauseInOrder)
{
    // Inside the step a tile boundary and an occupancy change: occupancy wins.
    std::vector<LaunchShape> shapes = {tiled(95, 32), tiled(96, 32), tiled(97, 32), tiled(98, 32)};
    shapes[3].blocks_per_sm = 2;
    shapes[3].limiter = "registers";
    Cliff c = cliff_between(95, 98);
    explain_cliff(c, shapes, GpuShape{132}, "N");
    EXPECT_EQ(c.cause, CliffCause::occupancy);
    EXPECT_TRUE(contains(c.explanation, "resident blocks 1 -> 2 per SM (limiter: registers)")) << c.explanation;
    // Without it, the tile boundary inside explains it; the pairs outside are not looked at.
    shapes[3].blocks_per_sm = 1;
    c = cliff_between(95, 98);
    explain_cliff(c, shapes, GpuShape{132}, "N");
    EXPECT_EQ(c.cause, CliffCause::tiles);
    EXPECT_EQ(c.explanation, "tile quantisation: grid.x 3 -> 4 (tile of 32 along N: 96 -> 97)");
}

TEST(CliffExplain, ExplainCliffWithoutLaunches)
{
    Cliff c = cliff_between(3, 4);
    c.cause = CliffCause::waves;
    explain_cliff(c, {}, GpuShape{132}, "N");
    EXPECT_EQ(c.cause, CliffCause::unexplained);
    EXPECT_FALSE(c.explanation.empty());
    // Launches that do not reach the step: the nearest pair at the end is the best there is.
    Cliff beyond = cliff_between(500, 501);
    explain_cliff(beyond, scan_of_tiles(90, 100), GpuShape{132}, "N");
    EXPECT_EQ(beyond.cause, CliffCause::unexplained);
}

} // namespace cliff_explain_test
