// A range-profiler counter needs its row of the metric table and nothing else (docs/architecture.md,
// "A metric"): a copy of the table with one row added stands in for the table, and the profiler's
// plan and counters, how its launches combine, the gate's rule, the reports, the listings and the
// cross-check with Nsight Compute all take the new figure from that row alone.

#include "harness/core/metrics.hxx"
#include "harness/core/run_report.hxx"
#include "harness/profile/case_profiler.hxx"
#include "harness/profile/hotspots.hxx"
#include "harness/profile/ncu_crosscheck.hxx"
#include "harness/report/reporters.hxx"
#include "harness/suite/suite.hxx"

#include <algorithm>
#include <gtest/gtest.h>
#include <string>
#include <tuple>
#include <vector>

namespace metric_row_test {

using namespace harness;

namespace {

constexpr const char* l2_counter = "lts__t_sectors_srcunit_tex_op_read.sum";

/// The metric table with one more range-profiler counter, and a ratio read in percent.
std::vector<MetricInfo> table_with_new_counters()
{
    std::vector<MetricInfo> rows(metric_table().begin(), metric_table().end());
    rows.push_back({"l2_read_sectors", l2_counter, "sectors", Direction::lower_is_better, Stability::exact,
                    Collector::range_profiler, "report", true, "L2 sectors read by the SMs' texture units",
                    MetricRoles{.ncu = {.compared = true}}});
    rows.push_back({"l2_hit_rate", "lts__t_sector_hit_rate.pct", "fraction", Direction::higher_is_better,
                    Stability::noisy, Collector::range_profiler, "ignore", false, "L2 sector hit rate",
                    MetricRoles{.counter = {.launches = LaunchCombine::duration_weighted, .percent = true}}});
    return rows;
}

bool has(const std::vector<std::string>& names, const std::string& name)
{
    return std::find(names.begin(), names.end(), name) != names.end();
}

/// A run of one case of two labelled launches whose counters the profiler read.
RunReport run_with(const std::vector<std::string>& names, const std::vector<std::vector<double>>& readings)
{
    CaseResult r;
    r.suite = "l2";
    r.variant = "two_pass";
    r.params_text = "N=1024";
    r.params = {{"N", 1024}};
    r.arch = "sm_90";
    r.status = CaseStatus::passed;
    r.launches = {{"first", "first", "k.cu", std::nullopt}, {"second", "second", "k.cu", std::nullopt}};
    profile::set_range_metrics(names, readings, r);
    RunReport report;
    report.suite = "l2";
    report.arch = "sm_90";
    report.device_name = "NVIDIA H200";
    report.results = {r};
    return report;
}

} // namespace

TEST(MetricRow, ARangeCounterNeedsItsRowAlone)
{
    ASSERT_FALSE(find_metric("l2_read_sectors")) << "the built-in table must not have the row yet";
    const std::vector<MetricInfo> rows = table_with_new_counters();
    {
        const ScopedMetricTable table(rows);

        // The profiler's plan collects it by default, and configures CUPTI with its counter.
        const profile::ProfilePlan plan = profile::plan_profile({});
        ASSERT_TRUE(has(plan.range_metrics, "l2_read_sectors"));
        EXPECT_FALSE(has(plan.range_metrics, "l2_hit_rate")) << "not in the default set";
        const auto asked = profile::plan_profile({"l2_read_sectors", "l2_hit_rate"});
        EXPECT_EQ(asked.range_metrics, (std::vector<std::string>{"l2_read_sectors", "l2_hit_rate"}));
        const auto counters = profile::range_counters(asked.range_metrics);
        ASSERT_EQ(counters.size(), 3u);
        EXPECT_EQ(counters[0], l2_counter);
        EXPECT_EQ(counters[1], "lts__t_sector_hit_rate.pct");
        EXPECT_EQ(counters[2], "gpu__time_duration.sum") << "the duration that weights ratios comes last";

        // Its launches combine as its row says: the count summed, the rate weighted by duration
        // (300 and 100 ns) and read as a fraction; each launch keeps its own figure.
        const RunReport run = run_with(asked.range_metrics, {{1000, 80, 300}, {24, 40, 100}});
        const CaseResult& r = run.results.front();
        EXPECT_EQ(r.metric("l2_read_sectors"), 1024);
        EXPECT_EQ(r.metric("l2_read_sectors@first"), 1000);
        EXPECT_EQ(r.metric("l2_read_sectors@second"), 24);
        ASSERT_TRUE(r.metric("l2_hit_rate"));
        EXPECT_DOUBLE_EQ(*r.metric("l2_hit_rate"), 0.75 * 0.8 + 0.25 * 0.4);
        EXPECT_DOUBLE_EQ(*r.metric("l2_hit_rate@second"), 0.4);

        // The gate takes its default rule from the row.
        const suite::Suite suite;
        EXPECT_EQ(suite.rule_for(suite::VariantSpec{}, "l2_read_sectors").kind, suite::RuleKind::report);

        // The reports: every figure of the CSV with its unit, results.json, the HTML page's units.
        const std::string csv = report::results_csv(run);
        EXPECT_NE(csv.find("\"l2_read_sectors\",\"1024\",\"sectors\""), std::string::npos) << csv;
        EXPECT_NE(csv.find("\"l2_read_sectors@first\",\"1000\",\"sectors\""), std::string::npos) << csv;
        EXPECT_NE(csv.find("\"l2_hit_rate\""), std::string::npos) << csv;
        const std::string json = results_json(run);
        EXPECT_NE(json.find("\"l2_read_sectors\": 1024"), std::string::npos);

        // The listings `harness metrics` prints and docs/metrics.md holds.
        EXPECT_NE(metric_table_markdown().find("| `l2_read_sectors` | sectors | exact | lower is better | `report` | "
                                               "yes | range_profiler: `lts__t_sectors_srcunit_tex_op_read.sum` |"),
                  std::string::npos);
        EXPECT_NE(metric_table_text().find("\nl2_hit_rate "), std::string::npos);
        EXPECT_NE(metric_table_text().find("(not in the default set)\n", metric_table_text().find("\nl2_hit_rate ")),
                  std::string::npos);

        // The cross-check with Nsight Compute asks ncu for it and compares it, summing the kernels.
        EXPECT_NE(profile::ncu_metric_list().find(l2_counter), std::string::npos);
        const auto kernels = profile::parse_ncu_csv(
            "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"lts__t_sectors_srcunit_tex_op_read.sum\"\n"
            "\"0\",\"two_pass N=1024/first\",\"300\",\"1000\"\n"
            "\"1\",\"two_pass N=1024/second\",\"100\",\"24\"\n",
            "ncu.csv");
        const auto checked = profile::crosscheck(run, {kernels});
        ASSERT_EQ(checked.size(), 1u);
        EXPECT_EQ(checked[0].metric, "l2_read_sectors");
        EXPECT_EQ(checked[0].ncu, 1024);
        EXPECT_TRUE(checked[0].within);
    }
    EXPECT_FALSE(find_metric("l2_read_sectors")) << "the built-in table is back";
}

// The table's own range counters combine as their rows say, not as their CUPTI names read.
TEST(MetricRow, AchievedOccupancyIsWeightedByDurationAndReadAsAFraction)
{
    const auto info = find_metric(metric::achieved_occupancy);
    ASSERT_TRUE(info);
    EXPECT_EQ(info->roles.counter.launches, LaunchCombine::duration_weighted);
    EXPECT_TRUE(info->roles.counter.percent);
    for (const auto& m : metric_table())
        if (m.collector == Collector::range_profiler && m.name != metric::achieved_occupancy) {
            EXPECT_EQ(m.roles.counter.launches, LaunchCombine::sum) << m.name;
            EXPECT_FALSE(m.roles.counter.percent) << m.name;
        }
    const std::vector<std::string> names = {metric::achieved_occupancy, metric::dram_read_bytes};
    const RunReport run = run_with(names, {{50, 1000, 300}, {90, 24, 100}});
    EXPECT_DOUBLE_EQ(*run.results.front().metric(metric::achieved_occupancy), 0.01 * (50 * 0.75 + 90 * 0.25));
    EXPECT_EQ(run.results.front().metric(metric::dram_read_bytes), 1024);
}

// A derived figure is its row's formula, evaluated in table order; the hotspots rank the lines of
// the rows that say so, from their SASS metrics.
TEST(MetricRow, FormulasAndLineRankingsReadOnlyTheirRows)
{
    std::vector<std::string> ranked;
    for (std::size_t i = 0; i < metric_table().size(); ++i) {
        const MetricInfo& m = metric_table()[i];
        const Formula& f = m.roles.formula;
        EXPECT_EQ(m.collector == Collector::derived, f.compute != nullptr) << m.name;
        for (std::size_t k = 0; k < f.input_count(); ++k) {
            const auto input = find_metric(f.inputs[k]);
            ASSERT_TRUE(input) << m.name << " reads " << f.inputs[k];
            // An input derived itself comes earlier in the table.
            if (input->collector == Collector::derived) {
                const auto at = std::find_if(metric_table().begin(), metric_table().end(),
                                             [&](const MetricInfo& row) { return row.name == f.inputs[k]; });
                EXPECT_LT(static_cast<std::size_t>(at - metric_table().begin()), i) << m.name;
            }
            // The formula as text names each input (flops' text names them by what they count).
            if (m.name != metric::flops) {
                EXPECT_NE(m.source.find(f.inputs[k]), std::string_view::npos) << m.name;
            }
        }
        if (!m.roles.lines.access.empty()) ranked.emplace_back(m.name);
    }
    EXPECT_EQ(ranked, (std::vector<std::string>{metric::local_sectors, metric::divergent_branch_targets,
                                                metric::excess_global_sectors, metric::excess_shared_wavefronts}));
    // Every metric a hotspot family names ranks lines, or is predicted (explained by accesses).
    for (const auto& m : metric_table()) {
        const auto family = find_metric(m.roles.hotspot.metric);
        if (!family || family->collector == Collector::access_model) continue;
        EXPECT_FALSE(family->roles.lines.access.empty()) << m.name << ": " << family->name;
    }
}

// What the cross-check and the SASS profiler read from the table is what they listed themselves
// before the table held it: the same metrics, names and tolerances, in the same order.
TEST(MetricRow, TheCrosscheckAndTheSassProfilerReadWhatTheyOnceListed)
{
    const std::vector<std::tuple<std::string, std::string, double, bool, double>> listed = {
        {"global_ld_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 0.0, false, 0.0},
        {"global_ld_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 0.0, false, 0.0},
        {"global_st_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", 0.0, false, 0.0},
        {"global_st_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", 0.0, false, 0.0},
        {"shared_ld_wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", 0.03, false, 0.0},
        {"shared_st_wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", 0.03, false, 0.0},
        {"shared_ld_instructions", "smsp__sass_inst_executed_op_shared_ld.sum", 0.0, false, 0.0},
        {"shared_st_instructions", "smsp__sass_inst_executed_op_shared_st.sum", 0.0, false, 0.0},
        {"instructions", "smsp__inst_executed.sum", 0.0, false, 0.0},
        {"fp32_fma_thread_instructions", "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 0.0, false, 0.0},
        {"shared_wavefronts", "smsp__sass_l1tex_pipe_lsu_wavefronts_mem_shared.sum", 0.0, false, 0.0},
        {"divergent_branch_targets", "smsp__sass_branch_targets_threads_divergent.sum", 0.0, false, 0.0},
        {"dram_read_bytes", "dram__bytes_read.sum", 0.02, false, 1048576.0},
        {"dram_write_bytes", "dram__bytes_write.sum", 0.02, false, 1048576.0},
        {"achieved_occupancy", "sm__warps_active.avg.pct_of_peak_sustained_active", 0.05, true, 0.0},
    };
    const auto metrics = profile::crosscheck_metrics();
    ASSERT_EQ(metrics.size(), listed.size());
    for (std::size_t i = 0; i < listed.size(); ++i) {
        const auto& [ours, ncu, tolerance, absolute, floor] = listed[i];
        EXPECT_EQ(metrics[i].ours, ours);
        EXPECT_EQ(metrics[i].ncu, ncu) << ours;
        EXPECT_EQ(metrics[i].tolerance, tolerance) << ours;
        EXPECT_EQ(metrics[i].absolute, absolute) << ours;
        EXPECT_EQ(metrics[i].floor, floor) << ours;
        EXPECT_EQ(metrics[i].percent, ours == "achieved_occupancy") << ours;
    }
    EXPECT_EQ(profile::ncu_dram_metric_list(), "gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum");

    EXPECT_EQ(profile::hotspot_sass_metrics(),
              (std::vector<std::string>{"smsp__sass_sectors_mem_global", "smsp__sass_sectors_mem_global_ideal",
                                        "smsp__sass_l1tex_pipe_lsu_wavefronts_mem_shared",
                                        "smsp__sass_l1tex_pipe_lsu_wavefronts_mem_shared_ideal",
                                        "smsp__sass_sectors_mem_local", "smsp__sass_branch_targets_threads_divergent",
                                        "smsp__sass_inst_executed_op_st", "smsp__sass_inst_executed_op_atom",
                                        "smsp__sass_inst_executed_op_global_red"}));
}

} // namespace metric_row_test
