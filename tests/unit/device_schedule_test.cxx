// Spreading cases over the GPUs of a host: every case once, each parameter point on one GPU,
// balanced, the same every time; and the `--devices` values that are refused.

#include "harness/core/error.hxx"
#include "harness/run/device_schedule.hxx"

#include <gtest/gtest.h>
#include <set>

using namespace harness;

namespace {

/// `points` parameter points with `variants` variants each, in the sweep's order.
std::vector<suite::Case> grid(std::size_t points, std::size_t variants)
{
    std::vector<suite::Case> cases;
    for (std::size_t p = 0; p < points; ++p)
        for (std::size_t v = 0; v < variants; ++v) {
            suite::Case c;
            c.variant = v;
            c.point = p;
            c.params_text = "N=" + std::to_string(p);
            cases.push_back(c);
        }
    return cases;
}

} // namespace

TEST(DeviceSchedule, EveryCaseRunsOnceAndEachPointStaysOnOneGpu)
{
    const auto cases = grid(7, 5);
    for (std::size_t devices : {1u, 2u, 3u, 4u, 8u, 10u}) {
        const auto schedule = run::schedule_on_devices(cases, devices);
        ASSERT_EQ(schedule.size(), devices);
        std::multiset<std::size_t> seen;
        std::map<std::size_t, std::size_t> device_of_point;
        for (std::size_t d = 0; d < devices; ++d) {
            EXPECT_TRUE(std::is_sorted(schedule[d].begin(), schedule[d].end())) << "cases keep the sweep's order";
            for (const auto i : schedule[d]) {
                seen.insert(i);
                const auto [it, inserted] = device_of_point.emplace(cases[i].point, d);
                EXPECT_EQ(it->second, d) << "point " << cases[i].point << " split over GPUs";
            }
        }
        EXPECT_EQ(seen.size(), cases.size());
        for (std::size_t i = 0; i < cases.size(); ++i) EXPECT_EQ(seen.count(i), 1u) << "case " << i;
        // Balanced: 7 points of 5 cases on 2 GPUs is 4 and 3 points, never 7 and 0.
        std::size_t most = 0, least = cases.size();
        for (const auto& list : schedule) {
            most = std::max(most, list.size());
            least = std::min(least, list.size());
        }
        if (devices <= 7) EXPECT_LE(most - least, 5u) << devices << " GPUs";
        EXPECT_EQ(schedule, run::schedule_on_devices(cases, devices)) << "deterministic";
    }
}

TEST(DeviceSchedule, UnevenPointsAreBalancedByTheirCases)
{
    // Point 0 has 6 cases, points 1..6 one each: on two GPUs, 6 against 6.
    std::vector<suite::Case> cases = grid(1, 6);
    for (std::size_t p = 1; p <= 6; ++p) {
        suite::Case c;
        c.point = p;
        cases.push_back(c);
    }
    const auto schedule = run::schedule_on_devices(cases, 2);
    EXPECT_EQ(schedule[0].size(), 6u);
    EXPECT_EQ(schedule[1].size(), 6u);
}

TEST(DeviceSchedule, PointsAreBalancedByTheirExpectedCostWhereBaselinesGiveIt)
{
    // Four points of six cases, as gemm's N = 256, 1001, 2048, 4096: by case count 2 + 2 points,
    // by cost the largest point alone against the other three.
    const auto cases = grid(4, 6);
    const std::vector<double> costs = {6.0, 6.5, 8.0, 20.0};
    const auto schedule = run::schedule_on_devices(cases, 2, costs);
    auto points_of = [&](const std::vector<std::size_t>& list) {
        std::set<std::size_t> points;
        for (const auto i : list) points.insert(cases[i].point);
        return points;
    };
    const std::set<std::size_t> largest_alone = {3}, the_rest = {0, 1, 2};
    EXPECT_TRUE((points_of(schedule[0]) == largest_alone && points_of(schedule[1]) == the_rest) ||
                (points_of(schedule[1]) == largest_alone && points_of(schedule[0]) == the_rest));
    EXPECT_EQ(schedule, run::schedule_on_devices(cases, 2, costs)) << "deterministic";

    // Costs that do not cover every point (a point the baselines' suite lacks): case counts decide.
    const auto by_count = run::schedule_on_devices(cases, 2, {6.0, 6.5});
    EXPECT_EQ(by_count, run::schedule_on_devices(cases, 2));
    EXPECT_EQ(by_count[0].size(), 12u);
    EXPECT_EQ(by_count[1].size(), 12u);
}

TEST(DevicesOption, ParsesListsAndAll)
{
    EXPECT_EQ(run::parse_devices("all", 4), (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(run::parse_devices("0,2", 4), (std::vector<int>{0, 2}));
    EXPECT_EQ(run::parse_devices(" 3 , 1 ", 4), (std::vector<int>{3, 1}));
    EXPECT_EQ(run::parse_devices("0", 1), (std::vector<int>{0}));
}

TEST(DevicesOption, RefusesWhatIsNotAList)
{
    for (const char* bad : {"", "x", "0,", ",1", "0,,1", "-1", "1.5", "0;1", "0,0", "4", "01x"}) {
        try {
            run::parse_devices(bad, 4);
            ADD_FAILURE() << "'" << bad << "' was accepted";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::bad_input) << bad;
            EXPECT_NE(std::string(e.what()).find("--devices"), std::string::npos) << e.what();
        }
    }
    EXPECT_THROW(run::parse_devices("all", 0), Error);
}
