// Throttled time samples: which readings count as throttled, which samples are dropped, and a
// machine without NVML (this one, in CI) that simply does not check.

#include "harness/run/clock_monitor.hxx"

#include <gtest/gtest.h>

namespace clock_monitor_test {

using harness::run::ClockMonitor;
using harness::run::ClockReading;
using harness::run::samples_to_keep;

TEST(ClockReading, ThrottledBelowThreeQuartersOrWhenPowerOrHeatSlowsIt)
{
    EXPECT_FALSE((ClockReading{1980, 1980, 0}).throttled());
    EXPECT_FALSE((ClockReading{1755, 1980, 0}).throttled());         // boost varies: not throttled
    EXPECT_FALSE((ClockReading{1980, 1980, 0x1 | 0x2}).throttled()); // idle, application clocks: not slowing
    EXPECT_TRUE((ClockReading{1400, 1980, 0}).throttled());          // under 75 %
    EXPECT_TRUE((ClockReading{1980, 1980, 0x4}).throttled());        // power cap
    EXPECT_TRUE((ClockReading{1980, 1980, 0x40}).throttled());       // thermal
    EXPECT_TRUE((ClockReading{1980, 1980, 0x8}).throttled());        // hardware slowdown
    EXPECT_EQ((ClockReading{1410, 1980, 0x4 | 0x20}).describe(), "1410 of 1980 MHz, power cap, thermal");
    EXPECT_EQ((ClockReading{1410, 1980, 0}).describe(), "1410 of 1980 MHz");
}

TEST(ClockSamples, ThrottledOnesAreDroppedWhileEnoughRemain)
{
    const std::vector<bool> throttled = {false, true, true, false, false, false};
    EXPECT_EQ(samples_to_keep(throttled, 3), (std::vector<bool>{true, false, false, true, true, true}));
    // Fewer than the minimum would remain: keep them all (the caller notes it).
    EXPECT_EQ(samples_to_keep(throttled, 5), std::vector<bool>(6, true));
    EXPECT_EQ(samples_to_keep({}, 3), std::vector<bool>{});
    EXPECT_EQ(samples_to_keep({false, false}, 2), (std::vector<bool>{true, true}));
}

TEST(ClockMonitor, AnUnknownGpuIsNotWatched)
{
    const ClockMonitor monitor("0000:ff:1f.7");
    EXPECT_FALSE(monitor.available());
    EXPECT_FALSE(monitor.read());
}

} // namespace clock_monitor_test
