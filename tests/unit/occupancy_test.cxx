// Theoretical occupancy against what the driver computes: the table rows below were measured on an
// H200 (sm_90, driver 580) with cuOccupancyMaxActiveBlocksPerMultiprocessor for real kernels.

#include "harness/compile/occupancy.hxx"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace harness::compile {
namespace occupancy_test {
namespace {

const ArchLimits& sm90 = arch_limits("sm_90");

TEST(ArchLimits, LookupByName)
{
    EXPECT_EQ(sm90.sm_version, 90);
    EXPECT_EQ(sm90.max_warps_per_sm, 64);
    EXPECT_EQ(sm90.max_blocks_per_sm, 32);
    EXPECT_EQ(sm90.registers_per_sm, 65536);
    EXPECT_EQ(sm90.shared_bytes_per_sm, 233472);           // cudaDevAttrMaxSharedMemoryPerMultiprocessor on H200
    EXPECT_EQ(sm90.shared_bytes_per_block_optin, 232448);  // cudaDevAttrMaxSharedMemoryPerBlockOptin on H200
    EXPECT_EQ(sm90.reserved_shared_bytes_per_block, 1024); // cudaDevAttrReservedSharedMemoryPerBlock on H200
    EXPECT_EQ(&arch_limits("sm_90a"), &sm90);
    EXPECT_EQ(arch_limits("sm_86").max_warps_per_sm, 48);
    EXPECT_EQ(arch_limits("sm_75").reserved_shared_bytes_per_block, 0);
    EXPECT_EQ(find_arch_limits("sm_91"), nullptr);
    for (const ArchLimits& arch : known_arch_limits()) {
        SCOPED_TRACE(std::string(arch.name));
        EXPECT_EQ(find_arch_limits(arch.name), &arch);
        EXPECT_GT(arch.max_warps_per_sm, 0);
        // The largest carveout must hold the largest block, or the calculator has no carveout to pick.
        ASSERT_FALSE(arch.carveouts_kib.empty());
        EXPECT_GE(arch.carveouts_kib.back() * 1024,
                  arch.shared_bytes_per_block_optin + arch.reserved_shared_bytes_per_block);
        EXPECT_EQ(arch.carveouts_kib.back() * 1024, arch.shared_bytes_per_sm);
    }
}

TEST(ArchLimits, UnknownArchitectureNamesTheKnownOnes)
{
    try {
        (void)arch_limits("sm_91");
        FAIL() << "expected an error";
    } catch (const Error& error) {
        const std::string what = error.what();
        EXPECT_NE(what.find("unknown GPU architecture 'sm_91'"), std::string::npos) << what;
        EXPECT_NE(what.find("sm_80, sm_86"), std::string::npos) << what;
        EXPECT_EQ(error.kind(), ErrorKind::bad_input);
    }
}

TEST(Occupancy, RegisterCliffAt256Threads)
{
    const Occupancy at32 = theoretical_occupancy(sm90, 256, 32, 0);
    EXPECT_EQ(at32.blocks_per_sm, 8);
    EXPECT_EQ(at32.active_warps_per_sm, 64);
    EXPECT_DOUBLE_EQ(at32.occupancy, 1.0);
    EXPECT_EQ(at32.blocks_by_registers, 8);
    EXPECT_EQ(at32.limiter, OccupancyLimiter::warps) << "a tie with the warp slots names the warp slots";

    // 33 registers round to 1280 per warp: 12 warps per sub-partition, 48 per SM, 6 blocks of 8 warps.
    for (int registers : {33, 40}) {
        const Occupancy above = theoretical_occupancy(sm90, 256, registers, 0);
        EXPECT_EQ(above.blocks_per_sm, 6) << registers;
        EXPECT_EQ(above.active_warps_per_sm, 48);
        EXPECT_DOUBLE_EQ(above.occupancy, 0.75);
        EXPECT_EQ(above.limiter, OccupancyLimiter::registers);
        EXPECT_EQ(above.allocated_registers_per_block, 1280 * 8);
    }
    EXPECT_EQ(describe_occupancy_cliff(at32, theoretical_occupancy(sm90, 256, 40, 0)),
              "registers 32 -> 40: resident blocks 8 -> 6, theoretical occupancy 100 % -> 75 % (limiter: "
              "registers)");
    EXPECT_EQ(describe_occupancy_cliff(at32, theoretical_occupancy(sm90, 256, 33, 0)),
              "registers 32 -> 33: resident blocks 8 -> 6, theoretical occupancy 100 % -> 75 % (limiter: "
              "registers)");
}

TEST(Occupancy, SharedMemoryLimited)
{
    // 48 KiB + 1 KiB reserved = 50176 bytes per block; 228 KiB hold 4 of them.
    const Occupancy occupancy = theoretical_occupancy(sm90, 128, 16, 48 * 1024);
    EXPECT_EQ(occupancy.blocks_per_sm, 4);
    EXPECT_DOUBLE_EQ(occupancy.occupancy, 0.25);
    EXPECT_EQ(occupancy.limiter, OccupancyLimiter::shared_memory);
    EXPECT_EQ(occupancy.allocated_shared_bytes_per_block, 50176);
    EXPECT_EQ(occupancy.shared_bytes_per_sm, 233472);

    // 4224 bytes (a padded 32x32 float tile): 5248 per block, 44 would fit, the 8 warps per 256 threads cap
    // it.
    const Occupancy tile = theoretical_occupancy(sm90, 256, 16, 4224);
    EXPECT_EQ(tile.blocks_by_shared_memory, 44);
    EXPECT_EQ(tile.blocks_per_sm, 8);

    // Same on an A100: 164 KiB per SM.
    EXPECT_EQ(theoretical_occupancy(arch_limits("sm_80"), 128, 16, 48 * 1024).blocks_per_sm, 3);
    // Turing rounds to 256 bytes and reserves nothing: 64 KiB / 16 KiB.
    EXPECT_EQ(theoretical_occupancy(arch_limits("sm_75"), 64, 16, 16 * 1024).blocks_per_sm, 4);
}

TEST(Occupancy, BlockSlotLimitedTinyBlocks)
{
    const Occupancy one_warp = theoretical_occupancy(sm90, 32, 16, 0);
    EXPECT_EQ(one_warp.blocks_per_sm, 32);
    EXPECT_DOUBLE_EQ(one_warp.occupancy, 0.5);
    EXPECT_EQ(one_warp.limiter, OccupancyLimiter::blocks);

    const Occupancy one_thread = theoretical_occupancy(sm90, 1, 16, 0);
    EXPECT_EQ(one_thread.blocks_per_sm, 32);
    EXPECT_EQ(one_thread.limiter, OccupancyLimiter::blocks);

    const Occupancy consumer = theoretical_occupancy(arch_limits("sm_86"), 32, 16, 0);
    EXPECT_EQ(consumer.blocks_per_sm, 16);
    EXPECT_EQ(format_occupancy_percent(consumer.occupancy), "33.3 %");
}

TEST(Occupancy, WarpLimited)
{
    const Occupancy odd = theoretical_occupancy(sm90, 288, 16, 0); // 9 warps: 64 / 9
    EXPECT_EQ(odd.blocks_per_sm, 7);
    EXPECT_EQ(odd.limiter, OccupancyLimiter::warps);
    EXPECT_EQ(format_occupancy_percent(odd.occupancy), "98.4 %");
}

TEST(Occupancy, ThousandTwentyFourThreadBlocks)
{
    const Occupancy small = theoretical_occupancy(sm90, 1024, 32, 0);
    EXPECT_EQ(small.blocks_per_sm, 2);
    EXPECT_DOUBLE_EQ(small.occupancy, 1.0);
    EXPECT_EQ(small.limiter, OccupancyLimiter::warps);

    const Occupancy at64 = theoretical_occupancy(sm90, 1024, 64, 0); // exactly the 64 Ki register file
    EXPECT_EQ(at64.blocks_per_sm, 1);
    EXPECT_DOUBLE_EQ(at64.occupancy, 0.5);
    EXPECT_EQ(at64.limiter, OccupancyLimiter::registers);

    const Occupancy at65 = theoretical_occupancy(sm90, 1024, 65, 0); // 2304 per warp x 32 > 64 Ki
    EXPECT_EQ(at65.blocks_per_sm, 0);
    EXPECT_EQ(at65.limiter, OccupancyLimiter::registers);
    EXPECT_NE(at65.impossible_reason.find("73728 registers per block"), std::string::npos) << at65.impossible_reason;

    EXPECT_EQ(theoretical_occupancy(arch_limits("sm_86"), 1024, 32, 0).blocks_per_sm, 1); // 48 warp slots
    EXPECT_DOUBLE_EQ(theoretical_occupancy(arch_limits("sm_75"), 1024, 32, 0).occupancy, 1.0);
}

TEST(Occupancy, ImpossibleConfigurationsGiveZeroBlocksAndAReason)
{
    const Occupancy too_many_threads = theoretical_occupancy(sm90, 1025, 16, 0);
    EXPECT_EQ(too_many_threads.blocks_per_sm, 0);
    EXPECT_DOUBLE_EQ(too_many_threads.occupancy, 0.0);
    EXPECT_EQ(too_many_threads.limiter, OccupancyLimiter::warps);
    EXPECT_EQ(too_many_threads.impossible_reason, "sm_90: 1025 threads per block exceed the limit of 1024");

    EXPECT_EQ(theoretical_occupancy(sm90, 32, 16, 232448).blocks_per_sm, 1) << "exactly the opt-in maximum";
    const Occupancy too_much_shared = theoretical_occupancy(sm90, 32, 16, 232449);
    EXPECT_EQ(too_much_shared.blocks_per_sm, 0);
    EXPECT_EQ(too_much_shared.limiter, OccupancyLimiter::shared_memory);
    EXPECT_NE(too_much_shared.impossible_reason.find("exceed the 227 KiB"), std::string::npos)
        << too_much_shared.impossible_reason;

    OccupancyOptions no_opt_in;
    no_opt_in.shared_opt_in = false;
    EXPECT_EQ(theoretical_occupancy(sm90, 32, 16, 49152, no_opt_in).blocks_per_sm, 4);
    const Occupancy needs_opt_in = theoretical_occupancy(sm90, 32, 16, 49153, no_opt_in);
    EXPECT_EQ(needs_opt_in.blocks_per_sm, 0);
    EXPECT_NE(needs_opt_in.impossible_reason.find("without opting in"), std::string::npos)
        << needs_opt_in.impossible_reason;

    const Occupancy too_many_registers = theoretical_occupancy(sm90, 32, 256, 0);
    EXPECT_EQ(too_many_registers.blocks_per_sm, 0);
    EXPECT_EQ(too_many_registers.limiter, OccupancyLimiter::registers);
    EXPECT_FALSE(too_many_registers.impossible_reason.empty());

    const int huge = std::numeric_limits<int>::max();
    EXPECT_EQ(theoretical_occupancy(sm90, huge, huge, huge).blocks_per_sm, 0) << "no overflow on absurd input";

    EXPECT_TRUE(theoretical_occupancy(sm90, 256, 32, 0).impossible_reason.empty());
}

TEST(Occupancy, NamedBarriersLimitFromSm90On)
{
    OccupancyOptions sixteen;
    sixteen.barriers_per_block = 16;
    const Occupancy hopper = theoretical_occupancy(sm90, 32, 10, 0, sixteen);
    EXPECT_EQ(hopper.blocks_per_sm, 4); // 64 barriers per SM / 16
    EXPECT_EQ(hopper.limiter, OccupancyLimiter::barriers);
    EXPECT_EQ(theoretical_occupancy(arch_limits("sm_80"), 32, 10, 0, sixteen).blocks_per_sm, 32);
}

TEST(Occupancy, InvalidArgumentsThrow)
{
    EXPECT_THROW((void)theoretical_occupancy(sm90, 0, 32, 0), Error);
    EXPECT_THROW((void)theoretical_occupancy(sm90, 128, -1, 0), Error);
    EXPECT_THROW((void)theoretical_occupancy(sm90, 128, 32, -1), Error);
    OccupancyOptions carveout;
    carveout.shared_carveout_percent = 101;
    EXPECT_THROW((void)theoretical_occupancy(sm90, 128, 32, 0, carveout), Error);
}

TEST(Occupancy, FormatsPercentages)
{
    EXPECT_EQ(format_occupancy_percent(1.0), "100 %");
    EXPECT_EQ(format_occupancy_percent(0.75), "75 %");
    EXPECT_EQ(format_occupancy_percent(0.625), "62.5 %");
    EXPECT_EQ(format_occupancy_percent(0.0), "0 %");
    EXPECT_EQ(to_string(OccupancyLimiter::shared_memory), "shared memory");
}

// cuOccupancyMaxActiveBlocksPerMultiprocessor on an H200 for kernels with these resources.
struct MeasuredOccupancy {
    int registers;
    int static_shared;
    int dynamic_shared;
    int threads;
    bool opted_in; // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES raised to the opt-in maximum
    int barriers;
    int blocks;
};

constexpr MeasuredOccupancy measured_on_h200[] = {
    {10, 0, 1, 96, true, 4, 16},          {10, 0, 127, 192, true, 16, 4},       {10, 0, 1000, 33, false, 16, 4},
    {10, 0, 7000, 32, false, 4, 16},      {10, 0, 16384, 96, false, 16, 4},     {10, 0, 127, 32, true, 0, 32},
    {10, 0, 3072, 1, false, 0, 32},       {10, 1024, 1, 32, true, 1, 32},       {39, 0, 3072, 32, true, 0, 32},
    {48, 0, 49152, 384, false, 0, 3},     {55, 0, 128, 512, false, 0, 2},       {80, 0, 3072, 384, false, 0, 2},
    {102, 0, 128, 128, false, 0, 4},      {102, 0, 7168, 320, true, 0, 1},      {103, 0, 7000, 256, false, 0, 2},
    {102, 0, 128, 896, true, 0, 0},       {103, 0, 0, 768, true, 0, 0},         {103, 0, 100000, 896, true, 0, 0},
    {209, 0, 1000, 768, false, 0, 0},     {212, 0, 48000, 576, false, 0, 0},    {10, 0, 50000, 256, true, 1, 4},
    {10, 0, 80000, 256, true, 0, 2},      {10, 0, 231424, 320, true, 0, 1},     {12, 112, 49152, 160, true, 1, 4},
    {12, 20000, 30000, 256, true, 1, 4},  {30, 0, 49152, 320, true, 0, 4},      {168, 0, 48000, 1, false, 0, 4},
    {10, 0, 233472, 33, true, 4, 0},      {10, 16, 232448, 128, true, 1, 0},    {10, 49152, 3072, 320, false, 1, 0},
    {12, 48000, 48000, 96, false, 1, 0},  {102, 0, 233472, 32, true, 0, 0},     {8, 16, 3072, 128, false, 1, 16},
    {8, 16, 3072, 512, false, 1, 4},      {12, 4224, 3072, 576, false, 1, 3},   {12, 4224, 16384, 288, false, 1, 7},
    {12, 20000, 7000, 896, true, 1, 2},   {16, 432, 0, 224, true, 1, 9},        {30, 0, 127, 448, false, 0, 4},
    {12, 40000, 80000, 1025, true, 1, 0}, {32, 0, 227000, 1025, true, 0, 0},    {33, 0, 3072, 1025, true, 0, 0},
    {32, 0, 0, 256, true, 0, 8},          {33, 0, 0, 256, true, 0, 6},          {40, 0, 0, 256, true, 0, 6},
    {64, 0, 0, 1024, true, 0, 1},         {65, 0, 0, 1024, true, 0, 0},         {56, 0, 0, 128, true, 0, 9},
    {12, 10000, 30000, 128, true, 1, 5},  {12, 10000, 100000, 128, true, 1, 2},
};

TEST(Occupancy, MatchesTheDriverOnH200)
{
    for (const MeasuredOccupancy& m : measured_on_h200) {
        OccupancyOptions options;
        options.barriers_per_block = m.barriers;
        options.shared_opt_in = m.opted_in;
        const Occupancy occupancy =
            theoretical_occupancy(sm90, m.threads, m.registers, m.static_shared + m.dynamic_shared, options);
        EXPECT_EQ(occupancy.blocks_per_sm, m.blocks)
            << m.threads << " threads, " << m.registers << " registers, " << m.static_shared << " + "
            << m.dynamic_shared << " bytes shared, " << m.barriers << " barriers, opt-in " << m.opted_in << " (limiter "
            << to_string(occupancy.limiter) << ")";
    }
}

TEST(Occupancy, CarveoutPreferenceMatchesTheDriverOnH200)
{
    // A kernel with 10000 bytes of static shared memory, 12 registers and 128 threads, under
    // CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, for 0 / 10000 / 30000 / 60000 / 100000
    // bytes of dynamic shared memory.
    struct Row {
        int carveout_percent;
        int blocks[5];
    };
    const Row rows[] = {{0, {1, 1, 1, 1, 1}},   {10, {2, 1, 1, 1, 1}},  {25, {5, 3, 1, 1, 1}},
                        {50, {12, 6, 3, 1, 1}}, {75, {16, 9, 4, 2, 1}}, {100, {16, 11, 5, 3, 2}}};
    const int dynamic_shared[] = {0, 10000, 30000, 60000, 100000};
    for (const Row& row : rows) {
        for (int i = 0; i < 5; ++i) {
            OccupancyOptions options;
            options.shared_carveout_percent = row.carveout_percent;
            options.barriers_per_block = 1;
            EXPECT_EQ(theoretical_occupancy(sm90, 128, 12, 10000 + dynamic_shared[i], options).blocks_per_sm,
                      row.blocks[i])
                << "carveout " << row.carveout_percent << " %, dynamic " << dynamic_shared[i];
        }
    }
}

} // namespace
} // namespace occupancy_test
} // namespace harness::compile
