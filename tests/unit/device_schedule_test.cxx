// Spreading cases over the GPUs of a host: every case once, case by case by expected cost (a
// point's cases may land on several GPUs), the same every time; where the costs come from; and
// the `--devices` values that are refused; and how a worker is confined to its GPU.

#include "harness/core/child_process.hxx"
#include "harness/core/error.hxx"
#include "harness/pipeline/case_costs.hxx"
#include "harness/run/device_schedule.hxx"
#include "harness/run/driver.hxx"
#include "harness/run/gpu_session.hxx"
#include "harness/suite/suite.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"

#include <algorithm>
#include <cstdlib>
#include <gtest/gtest.h>
#include <map>
#include <numeric>
#include <set>

namespace device_schedule_test {

using namespace harness;

namespace {

double makespan(const run::DeviceSchedule& schedule)
{
    return *std::max_element(schedule.expected_s.begin(), schedule.expected_s.end());
}

} // namespace

TEST(DeviceSchedule, EveryCaseRunsOnceInItsOrderAndTheLoadIsBalanced)
{
    std::vector<double> costs;
    for (int i = 0; i < 35; ++i) costs.push_back(1.0 + (i * 7 % 5));
    const double total = std::accumulate(costs.begin(), costs.end(), 0.0);
    const double largest = *std::max_element(costs.begin(), costs.end());
    for (std::size_t devices : {1u, 2u, 3u, 4u, 8u, 40u}) {
        const auto schedule = run::schedule_on_devices(costs, devices);
        ASSERT_EQ(schedule.items.size(), devices);
        std::multiset<std::size_t> seen;
        for (std::size_t d = 0; d < devices; ++d) {
            EXPECT_TRUE(std::is_sorted(schedule.items[d].begin(), schedule.items[d].end()))
                << "a GPU runs its cases in the sweep's order, a point's reference first";
            double sum = 0;
            for (const auto i : schedule.items[d]) {
                seen.insert(i);
                sum += costs[i];
            }
            EXPECT_DOUBLE_EQ(schedule.expected_s[d], sum);
        }
        ASSERT_EQ(seen.size(), costs.size());
        for (std::size_t i = 0; i < costs.size(); ++i) EXPECT_EQ(seen.count(i), 1u) << "case " << i;
        // The longest-processing-time rule: no GPU above the mean by more than the largest case.
        EXPECT_LE(makespan(schedule), total / static_cast<double>(devices) + largest) << devices << " GPUs";
        const auto again = run::schedule_on_devices(costs, devices);
        EXPECT_EQ(schedule.items, again.items) << "deterministic";
    }
    EXPECT_EQ(run::schedule_on_devices(costs, 1).items.front().size(), costs.size()) << "one GPU runs everything";
    EXPECT_THROW(run::schedule_on_devices(costs, 0), Error);
}

TEST(DeviceSchedule, APointWhoseOneCaseDominatesIsSplitOverGpus)
{
    // Four points of six variants, the reference first at each, as gemm's N = 256 .. 4096: the
    // naive variant at the largest point costs 12 s, its other cases 1.5 s, every other case 0.5 s.
    struct Item {
        std::size_t point;
        double cost;
    };
    std::vector<Item> items;
    for (std::size_t point = 0; point < 4; ++point)
        for (std::size_t variant = 0; variant < 6; ++variant)
            items.push_back({point, point == 3 ? (variant == 0 ? 12.0 : 1.5) : 0.5});
    std::vector<double> costs;
    for (const auto& item : items) costs.push_back(item.cost);
    const auto schedule = run::schedule_on_devices(costs, 2);
    std::set<std::size_t> gpus_of_largest_point;
    for (std::size_t d = 0; d < 2; ++d)
        for (const auto i : schedule.items[d])
            if (items[i].point == 3) gpus_of_largest_point.insert(d);
    EXPECT_EQ(gpus_of_largest_point.size(), 2u) << "the largest point's cases run on both GPUs";
    // Kept whole, the largest point alone would take 19.5 s of the 28.5 s; split, the costliest
    // case sets the pace: 12 s on one GPU, 16.5 s on the other.
    EXPECT_LE(makespan(schedule), 16.5);
    EXPECT_GE(makespan(schedule), 28.5 / 2);
}

namespace {

/// What a schedule with points charges each GPU: the recomputation of each point it runs cases of
/// without the point's reference case, worked out afresh from the schedule.
std::vector<double> charges_of(const run::DeviceSchedule& schedule, const std::vector<run::CasePoint>& points)
{
    std::vector<double> charges;
    for (const auto& items : schedule.items) {
        std::map<std::size_t, std::pair<bool, double>> held; // point: (its reference here, recompute)
        for (const auto i : items) {
            auto& [reference, recompute] = held[points[i].point];
            reference = reference || points[i].reference;
            recompute = points[i].recompute_s;
        }
        double sum = 0;
        for (const auto& [point, entry] : held)
            if (!entry.first) sum += entry.second;
        charges.push_back(sum);
    }
    return charges;
}

} // namespace

TEST(DeviceSchedule, APointsCasesStayWithItsReferenceWhereTheLoadsAllowIt)
{
    // Four points, each a reference of 1 s and three variants of 0.1 s; recomputing a point's
    // reference costs 0.2 s. The plain rule deals the small cases out in turn, so GPUs run points
    // without their reference; charged for that, the small cases follow their reference.
    std::vector<double> costs;
    std::vector<run::CasePoint> points;
    for (std::size_t point = 0; point < 4; ++point)
        for (std::size_t variant = 0; variant < 4; ++variant) {
            costs.push_back(variant == 0 ? 1.0 : 0.1);
            points.push_back({point, variant == 0, 0.2});
        }
    const auto sum = [](const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); };
    const auto plain = run::schedule_on_devices(costs, 2);
    const auto schedule = run::schedule_on_devices(costs, 2, points);
    const auto charges = charges_of(schedule, points);
    EXPECT_GT(sum(charges_of(plain, points)), 0.0) << "the plain rule splits points";
    EXPECT_LT(sum(charges), sum(charges_of(plain, points)));
    for (std::size_t d = 0; d < 2; ++d) {
        EXPECT_TRUE(std::is_sorted(schedule.items[d].begin(), schedule.items[d].end()));
        double own = 0;
        for (const auto i : schedule.items[d]) own += costs[i];
        EXPECT_NEAR(schedule.expected_s[d], own + charges[d], 1e-12) << "GPU " << d;
    }
    EXPECT_LE(makespan(schedule), makespan(plain) + 0.2) << "balanced within a recomputation of the plain rule";

    // A GPU that starts 2 s after the other gets 2 s less work; what it is expected to do does
    // not count its wait.
    const auto late = run::schedule_on_devices(costs, 2, points, {0.0, 2.0});
    EXPECT_NEAR(late.expected_s[0] - late.expected_s[1], 2.0, 0.2 + 1.0);
    EXPECT_GT(late.expected_s[0], late.expected_s[1]);
    EXPECT_EQ(late.items[0].size() + late.items[1].size(), costs.size());
    EXPECT_THROW(run::schedule_on_devices(costs, 2, points, {0.0}), Error) << "a start per GPU";
}

TEST(DeviceSchedule, WithPointsADominantPointIsStillSplitAndEachGpuChargedForWhatItRecomputes)
{
    // gemm's shape, as above: the naive reference at the largest point costs 12 s.
    std::vector<double> costs;
    std::vector<run::CasePoint> points;
    for (std::size_t point = 0; point < 4; ++point)
        for (std::size_t variant = 0; variant < 6; ++variant) {
            costs.push_back(point == 3 ? (variant == 0 ? 12.0 : 1.5) : 0.5);
            points.push_back({point, variant == 0, 0.1});
        }
    const auto schedule = run::schedule_on_devices(costs, 2, points);
    const auto charges = charges_of(schedule, points);
    std::set<std::size_t> gpus_of_largest_point;
    for (std::size_t d = 0; d < 2; ++d) {
        double sum = 0;
        for (const auto i : schedule.items[d]) {
            sum += costs[i];
            if (points[i].point == 3) gpus_of_largest_point.insert(d);
        }
        EXPECT_NEAR(schedule.expected_s[d], sum + charges[d], 1e-12) << "GPU " << d;
    }
    EXPECT_EQ(gpus_of_largest_point.size(), 2u) << "the largest point's cases run on both GPUs";
    EXPECT_LE(makespan(schedule), 16.5 + 0.1);
    const auto plain = charges_of(run::schedule_on_devices(costs, 2), points);
    EXPECT_GT(charges[0] + charges[1], 0.0) << "the largest point is recomputed where it is split";
    EXPECT_LE(charges[0] + charges[1], plain[0] + plain[1]) << "no more points split than by the plain rule";

    // Costs of many sizes: every case once, the plain rule's bound plus the charges, the same
    // schedule every time.
    std::vector<double> mixed;
    std::vector<run::CasePoint> mixed_points;
    for (std::size_t i = 0; i < 60; ++i) {
        mixed.push_back(0.05 + static_cast<double>(i * 37 % 23) * (i % 7 == 0 ? 1.0 : 0.1));
        mixed_points.push_back({i / 5, i % 5 == 0, 0.03});
    }
    const double total = std::accumulate(mixed.begin(), mixed.end(), 0.0);
    const double largest = *std::max_element(mixed.begin(), mixed.end());
    for (const std::size_t devices : {1u, 2u, 3u, 4u, 8u}) {
        const auto s = run::schedule_on_devices(mixed, devices, mixed_points);
        std::multiset<std::size_t> seen;
        for (const auto& items : s.items) seen.insert(items.begin(), items.end());
        ASSERT_EQ(seen.size(), mixed.size());
        for (std::size_t i = 0; i < mixed.size(); ++i) EXPECT_EQ(seen.count(i), 1u);
        const auto c = charges_of(s, mixed_points);
        for (std::size_t d = 0; d < devices; ++d)
            EXPECT_LE(s.expected_s[d], total / static_cast<double>(devices) + largest + c[d] + 1e-9);
        EXPECT_EQ(s.items, run::schedule_on_devices(mixed, devices, mixed_points).items) << "deterministic";
    }
    EXPECT_THROW(run::schedule_on_devices(costs, 2, {}), Error) << "a point per case";
    points.front().recompute_s = -1;
    EXPECT_THROW(run::schedule_on_devices(costs, 2, points), Error);
}

TEST(CaseCosts, BaselinesTimesOrderTheCasesAndMissingOnesTakeTheTypical)
{
    const auto s = suite::load_suite(repo_root() / "suites" / "gemm.yaml");
    const auto cases = suite::expand_cases(s);
    pipeline::CostSources sources;
    const auto cold =
        pipeline::expected_case_costs(s, cases, repo_root() / "baselines", nullptr, {true, false}, &sources);
    ASSERT_EQ(cold.size(), cases.size());
    EXPECT_EQ(sources.modelled, cases.size());
    EXPECT_EQ(sources.recorded, 0u);
    const auto costliest = std::max_element(cold.begin(), cold.end()) - cold.begin();
    EXPECT_EQ(s.variants[cases[costliest].variant].name, "naive");
    EXPECT_EQ(cases[costliest].params_text, "N=4096");
    // Counters reused from the cache take no instrumented runs: far cheaper, same order.
    const auto warm = pipeline::expected_case_costs(s, cases, repo_root() / "baselines", nullptr, {true, true});
    EXPECT_LT(warm[costliest] * 3, cold[costliest]);
    for (std::size_t i = 0; i < cases.size(); ++i) EXPECT_LE(warm[i], cold[i]);

    // No baselines at all: every case the same overhead, so case counts balance.
    const TempDir empty;
    const auto unknown = pipeline::expected_case_costs(s, cases, empty.path, nullptr, {true, false});
    for (const auto c : unknown) EXPECT_DOUBLE_EQ(c, unknown.front());
}

TEST(CaseCosts, AnEarlierRunsMeasurementWinsOverTheModelPerCondition)
{
    const TempDir cache;
    const auto s = suite::load_suite(repo_root() / "suites" / "gemm.yaml");
    const auto cases = suite::expand_cases(s);
    CaseResult measured, reused;
    measured.variant = reused.variant = "tiled16";
    measured.params_text = reused.params_text = "N=1001";
    measured.cost.prepare = 0.5;
    measured.cost.profile.sass = 4.0;
    {
        pipeline::CaseCostBook book(cache.path, "NVIDIA H100 80GB HBM3", "gemm");
        book.record({measured});
        ASSERT_TRUE(book.save());
    }
    {
        pipeline::CaseCostBook book(cache.path, "NVIDIA H100 80GB HBM3", "gemm");
        reused.cost.prepare = 0.5;
        reused.cost.profile.kernels = 0.1;
        reused.reused_metrics = {"global_load_sectors"};
        book.record({reused});
        ASSERT_TRUE(book.save());
    }
    const pipeline::CaseCostBook book(cache.path, "NVIDIA H100 80GB HBM3", "gemm");
    EXPECT_DOUBLE_EQ(*book.expected("tiled16", "N=1001", {true, false}), 4.5);
    EXPECT_DOUBLE_EQ(*book.expected("tiled16", "N=1001", {true, true}), 0.6);
    EXPECT_DOUBLE_EQ(*book.expected("tiled16", "N=1001", {false, false}), 0.5) << "the case less its profiling";
    EXPECT_FALSE(book.expected("tiled16", "N=256", {true, false}));
    EXPECT_DOUBLE_EQ(*book.buffers("tiled16", "N=1001"), 0.5);
    EXPECT_FALSE(book.buffers("tiled16", "N=256"));
    {
        // A case that computed its point's reference outputs, as its GPU lacked the reference
        // case, is kept at its own cost: the schedule charges the recomputation to the GPU.
        CaseResult elsewhere;
        elsewhere.variant = "tiled32";
        elsewhere.params_text = "N=2048";
        elsewhere.cost.prepare = 0.7;
        elsewhere.cost.reference = 0.3;
        elsewhere.cost.timing = 1.0;
        pipeline::CaseCostBook other(cache.path, "NVIDIA H100 80GB HBM3", "gemm-elsewhere");
        other.record({elsewhere});
        EXPECT_DOUBLE_EQ(*other.expected("tiled32", "N=2048", {false, false}), 1.4);
        EXPECT_DOUBLE_EQ(*other.buffers("tiled32", "N=2048"), 0.4);
    }
    // Another GPU model keeps its own book.
    EXPECT_FALSE(
        pipeline::CaseCostBook(cache.path, "NVIDIA H200", "gemm").expected("tiled16", "N=1001", {true, false}));

    pipeline::CostSources sources;
    const auto costs =
        pipeline::expected_case_costs(s, cases, repo_root() / "baselines", &book, {true, false}, &sources);
    EXPECT_EQ(sources.recorded, 1u);
    EXPECT_EQ(sources.modelled, cases.size() - 1);
    for (std::size_t i = 0; i < cases.size(); ++i)
        if (s.variants[cases[i].variant].name == "tiled16" && cases[i].params_text == "N=1001") {
            EXPECT_DOUBLE_EQ(costs[i], 4.5);
        }

    // A damaged book is an empty one.
    write_file(cache.path / "case-costs" / "NVIDIA_H100_80GB_HBM3" / "gemm.json", "{not json");
    EXPECT_FALSE(pipeline::CaseCostBook(cache.path, "NVIDIA H100 80GB HBM3", "gemm")
                     .expected("tiled16", "N=1001", {true, false}));
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

TEST(DeviceConfinement, AWorkerSeesOnlyTheGpuAtItsOrdinalOfTheParentsView)
{
    EXPECT_EQ(run::visible_device_entry(nullptr, 2), "2");
    EXPECT_EQ(run::visible_device_entry("3,1", 0), "3");
    EXPECT_EQ(run::visible_device_entry("3,1", 1), "1");
    EXPECT_EQ(run::visible_device_entry(" GPU-8f2e , MIG-11aa ", 1), "MIG-11aa");
    EXPECT_EQ(run::visible_device_entry(" GPU-8f2e , MIG-11aa ", 0), "GPU-8f2e");
    // No such entry: the process is left as it is.
    EXPECT_EQ(run::visible_device_entry("3,1", 2), std::nullopt);
    EXPECT_EQ(run::visible_device_entry("", 0), std::nullopt);
    EXPECT_EQ(run::visible_device_entry("0,,1", 1), std::nullopt);
    EXPECT_EQ(run::visible_device_entry(nullptr, -1), std::nullopt);
}

TEST(DeviceConfinement, NarrowsTheListOnlyBeforeTheDriverStarts)
{
    // In children: the environment and the driver's state are per process.
    const auto confined = [](const char* visible, int ordinal, bool start_driver_first) {
        return run_in_child("confinement test", [&] {
            if (visible)
                setenv("CUDA_VISIBLE_DEVICES", visible, 1);
            else
                unsetenv("CUDA_VISIBLE_DEVICES");
            if (start_driver_first) (void)run::driver_available();
            const int local = run::confine_to_device(ordinal);
            const char* now = std::getenv("CUDA_VISIBLE_DEVICES");
            return std::to_string(local) + " " + (now ? now : "(unset)");
        });
    };
    if (!run::driver_started()) {
        EXPECT_EQ(confined(nullptr, 3, false), "0 3");
        EXPECT_EQ(confined("GPU-aa,GPU-bb,GPU-cc", 2, false), "0 GPU-cc");
        EXPECT_EQ(confined("GPU-aa", 1, false), "1 GPU-aa");
    }
    EXPECT_EQ(confined("GPU-aa,GPU-bb", 1, true), "1 GPU-aa,GPU-bb");
}

} // namespace device_schedule_test
