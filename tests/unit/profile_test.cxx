// The host side of profiling: which metrics a plan collects, derived metrics, hotspot ranking and
// instruction-to-line mapping on a real NVRTC cubin (no GPU needed for any of it).

#include "harness/compile/compile_suite.hxx"
#include "harness/core/error.hxx"
#include "harness/core/metrics.hxx"
#include "harness/profile/case_profiler.hxx"
#include "harness/profile/derived_metrics.hxx"
#include "harness/profile/hotspots.hxx"
#include "harness/profile/ncu_crosscheck.hxx"
#include "harness/profile/source_lines.hxx"
#include "harness/suite/suite.hxx"
#include "test_paths.hxx"

#include <algorithm>
#include <gtest/gtest.h>
#include <set>

namespace profile_test {

using namespace harness;

namespace {

bool contains(const std::vector<std::string>& v, const std::string& x)
{
    return std::find(v.begin(), v.end(), x) != v.end();
}

} // namespace

TEST(MetricTable, NamesAreUniqueAndCuptiSourcesCarryARollup)
{
    std::set<std::string_view> names;
    for (const auto& m : metric_table()) {
        EXPECT_TRUE(names.insert(m.name).second) << "duplicate metric " << m.name;
        EXPECT_FALSE(m.unit.empty()) << m.name;
        EXPECT_FALSE(m.description.empty()) << m.name;
        if (m.collector == Collector::range_profiler) {
            // The range profiler rejects a metric without a rollup (.sum, .avg...).
            EXPECT_NE(m.source.find("__"), std::string_view::npos) << m.name;
            EXPECT_NE(m.source.find('.'), std::string_view::npos) << m.name << ": " << m.source;
        }
        if (m.collector == Collector::sass_metrics) {
            EXPECT_TRUE(m.source.starts_with("smsp__sass_")) << m.name;
            EXPECT_TRUE(contains(profile::hotspot_sass_metrics(), std::string(m.source))) << m.name;
        }
    }
}

TEST(ProfilePlan, DefaultSetCoversTheDesignCard)
{
    const auto plan = profile::plan_profile({});
    for (const char* m : {"global_ld_requests", "global_ld_sectors", "global_st_sectors", "achieved_occupancy",
                          "dram_read_bytes", "dram_write_bytes", "fp32_fma_thread_instructions"})
        EXPECT_TRUE(contains(plan.range_metrics, m)) << m;
    EXPECT_FALSE(contains(plan.range_metrics, "shared_bank_conflicts_raw")) << "the raw counter is opt-in";
    for (const char* m : {"shared_ld_wavefronts", "shared_st_wavefronts"})
        EXPECT_FALSE(contains(plan.range_metrics, m)) << m << ": a pass of its own, opt-in";
    EXPECT_TRUE(plan.sass) << "shared-memory wavefronts and bank conflicts come from the SASS run";

    const auto opted = profile::plan_profile({"shared_ld_wavefronts"});
    EXPECT_EQ(opted.range_metrics, (std::vector<std::string>{"shared_ld_wavefronts"}));
}

TEST(ProfilePlan, DerivedMetricsPullInTheirInputsOnly)
{
    const auto plan = profile::plan_profile({"global_ld_sectors_per_request"});
    EXPECT_EQ(plan.range_metrics, (std::vector<std::string>{"global_ld_requests", "global_ld_sectors"}));
    EXPECT_FALSE(plan.sass);

    const auto sass = profile::plan_profile({"excess_shared_wavefronts"});
    EXPECT_TRUE(sass.range_metrics.empty());
    EXPECT_TRUE(sass.sass);

    const auto none = profile::plan_profile({"registers", "time_median"});
    EXPECT_TRUE(none.range_metrics.empty());
    EXPECT_FALSE(none.sass);
}

TEST(ProfilePlan, UnknownMetricIsABadInputWithASuggestion)
{
    try {
        profile::plan_profile({"global_ld_sector"});
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::bad_input);
        EXPECT_NE(std::string(e.what()).find("global_ld_sectors"), std::string::npos) << e.what();
    }
}

TEST(DerivedMetrics, ComputedFromInputsAndSkippedOnZeroDenominators)
{
    CaseResult r;
    r.set_metric("global_ld_requests", 1000);
    r.set_metric("global_ld_sectors", 32000);
    r.set_metric("global_st_requests", 0);
    r.set_metric("global_st_sectors", 0);
    r.set_metric("shared_wavefronts", 17301504);
    r.set_metric("shared_wavefronts_ideal", 1048576);
    r.set_metric("global_sectors", 1500);
    r.set_metric("global_sectors_ideal", 1000);
    r.set_metric("fp32_add_thread_instructions", 10);
    r.set_metric("fp32_mul_thread_instructions", 20);
    r.set_metric("fp32_fma_thread_instructions", 100);
    r.set_metric("dram_read_bytes", 100);
    r.set_metric("dram_write_bytes", 15);
    r.set_metric("time_median", 2.0); // us
    profile::add_derived_metrics(r);

    EXPECT_DOUBLE_EQ(*r.metric("global_ld_sectors_per_request"), 32.0);
    EXPECT_FALSE(r.metric("global_st_sectors_per_request")) << "no stores: no ratio";
    EXPECT_DOUBLE_EQ(*r.metric("excess_shared_wavefronts"), 17301504.0 - 1048576.0);
    EXPECT_DOUBLE_EQ(*r.metric("shared_conflict_ways"), 16.5);
    EXPECT_DOUBLE_EQ(*r.metric("excess_global_sectors"), 500.0);
    EXPECT_DOUBLE_EQ(*r.metric("excess_global_sectors_pct"), 50.0);
    EXPECT_DOUBLE_EQ(*r.metric("flops"), 230.0);
    EXPECT_DOUBLE_EQ(*r.metric("dram_bytes"), 115.0);
    EXPECT_DOUBLE_EQ(*r.metric("arithmetic_intensity"), 2.0);
    EXPECT_DOUBLE_EQ(*r.metric("achieved_gflops"), 230.0 / 2.0 / 1e3);
}

TEST(Hotspots, RankedByExcessPerLineWithLoadsAndStoresApart)
{
    auto instruction = [](int line, std::map<std::string, double> v) {
        profile::AttributedInstruction i;
        i.kernel = "transpose_naive";
        i.file = "kernels/transpose/transpose.cu";
        i.line = line;
        i.values = std::move(v);
        return i;
    };
    const std::vector<profile::AttributedInstruction> instructions = {
        // a coalesced load: no excess
        instruction(20, {{"smsp__sass_sectors_mem_global", 4096}, {"smsp__sass_sectors_mem_global_ideal", 4096}}),
        // a strided store, split over two instructions of the same line
        instruction(21, {{"smsp__sass_sectors_mem_global", 16384},
                         {"smsp__sass_sectors_mem_global_ideal", 2048},
                         {"smsp__sass_inst_executed_op_st", 512}}),
        instruction(21, {{"smsp__sass_sectors_mem_global", 16384},
                         {"smsp__sass_sectors_mem_global_ideal", 2048},
                         {"smsp__sass_inst_executed_op_st", 512}}),
        // a conflicted shared load
        instruction(30, {{"smsp__sass_l1tex_pipe_lsu_wavefronts_mem_shared", 33000},
                         {"smsp__sass_l1tex_pipe_lsu_wavefronts_mem_shared_ideal", 1000}}),
        // an uncoalesced reduction (RED) and an atomic with a return value (ATOM)
        instruction(40, {{"smsp__sass_sectors_mem_global", 300},
                         {"smsp__sass_sectors_mem_global_ideal", 100},
                         {"smsp__sass_inst_executed_op_global_red", 100}}),
        instruction(41, {{"smsp__sass_sectors_mem_global", 250},
                         {"smsp__sass_sectors_mem_global_ideal", 100},
                         {"smsp__sass_inst_executed_op_atom", 100}}),
    };
    const auto hotspots = profile::rank_hotspots(instructions, 5);
    ASSERT_EQ(hotspots.size(), 4u);
    EXPECT_EQ(hotspots[0].metric, "excess_shared_wavefronts");
    EXPECT_EQ(hotspots[0].access, "shared load");
    EXPECT_EQ(hotspots[0].line, 30);
    EXPECT_DOUBLE_EQ(hotspots[0].excess, 32000);
    EXPECT_EQ(hotspots[1].metric, "excess_global_sectors");
    EXPECT_EQ(hotspots[1].access, "global store");
    EXPECT_EQ(hotspots[1].line, 21);
    EXPECT_DOUBLE_EQ(hotspots[1].actual, 32768);
    EXPECT_DOUBLE_EQ(hotspots[1].excess, 28672);
    EXPECT_EQ(hotspots[2].access, "global atomic");
    EXPECT_EQ(hotspots[2].line, 40);
    EXPECT_DOUBLE_EQ(hotspots[2].excess, 200);
    EXPECT_EQ(hotspots[3].access, "global atomic");
    EXPECT_EQ(hotspots[3].line, 41);

    EXPECT_EQ(profile::rank_hotspots(instructions, 0).size(), 0u);
}

TEST(Hotspots, SnippetIsTheLinesAroundTheHotspot)
{
    Hotspot h;
    h.line = 2;
    const auto file = repo_root() / "kernels" / "transpose" / "transpose_naive.cu";
    profile::attach_snippet(h, file, 2);
    ASSERT_FALSE(h.snippet.empty());
    EXPECT_EQ(h.snippet_first_line, 1);
    EXPECT_EQ(h.snippet.size(), 4u); // lines 1..4

    Hotspot missing;
    missing.line = 3;
    profile::attach_snippet(missing, "/no/such/file.cu", 2);
    EXPECT_TRUE(missing.snippet.empty());
}

// -lineinfo puts a line table in the cubin; CUPTI maps instructions to it without a GPU.
TEST(SourceMap, InstructionsOfAnNvrtcCubinMapToKernelLines)
{
    const auto s = suite::load_suite(repo_root() / "suites" / "transpose.yaml");
    const auto compiled = compile::compile_suite(s, "sm_90", nullptr);
    ASSERT_TRUE(compiled.errors.empty());
    const auto& module = compiled.modules.begin()->second;
    const std::string function = module.lowered_names.begin()->second;
    profile::SourceMap lines(module.cubin);
    int mapped = 0;
    std::set<int> seen_lines;
    for (std::uint32_t pc = 0; pc < 4096; pc += 16) {
        if (const auto pos = lines.find(function, pc)) {
            EXPECT_EQ(pos->file, s.variants.front().source.filename().string());
            seen_lines.insert(pos->line);
            ++mapped;
        }
    }
    EXPECT_GT(mapped, 4);
    EXPECT_GT(seen_lines.size(), 2u);
    EXPECT_FALSE(lines.find("no_such_function", 0));
}

// ncu's raw CSV page (program output and ==PROF== lines around it, a units row, grouped digits),
// joined with our results by NVTX range name, summing a case's kernels.
TEST(NcuCrosscheck, ParsesRawCsvAndJoinsByRangeName)
{
    const std::string csv =
        "==PROF== Connected to process 1\n"
        "some program output\n"
        "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum\","
        "\"sm__warps_active.avg.pct_of_peak_sustained_active\"\n"
        "\"\",\"\",\"ns\",\"sector\",\"%\"\n"
        "\"0\",\"naive N=256/void gemm_naive(const float *)\",\"100\",\"1,048,576\",\"80\"\n"
        "\"1\",\"two N=8/void pass_one()\",\"300\",\"10\",\"50\"\n"
        "\"2\",\"two N=8/void pass_two()\",\"100\",\"6\",\"90\"\n";
    const auto kernels = profile::parse_ncu_csv(csv, "ncu.csv");
    ASSERT_EQ(kernels.size(), 3u);
    EXPECT_DOUBLE_EQ(kernels[0].values.at("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), 1048576.0);

    harness::RunReport ours;
    CaseResult naive;
    naive.variant = "naive";
    naive.params_text = "N=256";
    naive.set_metric("global_ld_sectors", 1048576);
    naive.set_metric("achieved_occupancy", 0.78);
    CaseResult two;
    two.variant = "two";
    two.params_text = "N=8";
    two.set_metric("global_ld_sectors", 15);    // ncu says 16
    two.set_metric("achieved_occupancy", 0.60); // duration-weighted: 0.75 * 50 % + 0.25 * 90 % = 60 %
    ours.results = {naive, two};
    const auto rows = profile::crosscheck(ours, {kernels});
    ASSERT_EQ(rows.size(), 4u);
    EXPECT_TRUE(rows[0].within);
    EXPECT_TRUE(rows[1].within) << "occupancy within 5 points";
    EXPECT_FALSE(rows[2].within) << "sectors must be equal";
    EXPECT_DOUBLE_EQ(rows[2].ncu, 16);
    EXPECT_NEAR(rows[3].ncu, 0.60, 1e-12);
    EXPECT_TRUE(rows[3].within);
    const std::string table = profile::format_crosscheck(rows);
    EXPECT_NE(table.find("DIFFERS"), std::string::npos);
    EXPECT_NE(table.find("1048576"), std::string::npos) << "counts are printed in full, not as 1.04858e+06";
    const auto per_metric = table.find("per metric:");
    ASSERT_NE(per_metric, std::string::npos) << table;
    const auto summary = table.substr(per_metric);
    EXPECT_NE(summary.find("1 of   2 agree; largest difference -6.25% (two N=8: 15 vs 16)"), std::string::npos)
        << table;
    EXPECT_NE(summary.find("2 of   2 agree; largest difference -2.50% (naive N=256: 0.78 vs 0.8)"), std::string::npos)
        << table;

    EXPECT_THROW(profile::parse_ncu_csv("\"ID\",\"Name\"\n", "bad.csv"), Error);
}

// A DRAM-only ncu run after the full one: its figures replace the full run's, the duration in both
// runs weights a ratio only once, and DRAM agrees within 2 % or 1 MiB.
TEST(NcuCrosscheck, LaterRunReplacesEarlierFiguresAndDramHasAnAbsoluteFloor)
{
    const auto full = profile::parse_ncu_csv(
        "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"dram__bytes_write.sum\",\"dram__bytes_read.sum\","
        "\"sm__warps_active.avg.pct_of_peak_sustained_active\"\n"
        "\"0\",\"big N=1/k1\",\"300\",\"14000000\",\"33000000\",\"50\"\n"
        "\"1\",\"big N=1/k2\",\"100\",\"0\",\"0\",\"90\"\n"
        "\"2\",\"small N=1/k\",\"100\",\"8704\",\"12000\",\"70\"\n",
        "full.csv");
    const auto dram_only = profile::parse_ncu_csv(
        "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"dram__bytes_write.sum\",\"dram__bytes_read.sum\"\n"
        "\"0\",\"big N=1/k1\",\"310\",\"12500000\",\"33100000\"\n"
        "\"1\",\"big N=1/k2\",\"90\",\"0\",\"0\"\n"
        "\"2\",\"small N=1/k\",\"100\",\"4096\",\"12500\"\n",
        "dram.csv");

    harness::RunReport ours;
    CaseResult big;
    big.variant = "big";
    big.params_text = "N=1";
    big.set_metric("dram_write_bytes", 12800000); // 2.4 % above the DRAM-only run, 0.3 MB: agrees
    big.set_metric("dram_read_bytes", 36000000);  // 8.8 %, 2.9 MB: differs
    big.set_metric("achieved_occupancy", 0.60);   // 0.75 * 50 % + 0.25 * 90 %, from the full run alone
    CaseResult small;
    small.variant = "small";
    small.params_text = "N=1";
    small.set_metric("dram_write_bytes", 3840); // 6 % off, 256 bytes
    ours.results = {big, small};

    const auto rows = profile::crosscheck(ours, {full, dram_only});
    ASSERT_EQ(rows.size(), 4u);
    EXPECT_EQ(rows[0].metric, "dram_read_bytes");
    EXPECT_DOUBLE_EQ(rows[0].ncu, 33100000);
    EXPECT_FALSE(rows[0].within);
    EXPECT_EQ(rows[1].metric, "dram_write_bytes");
    EXPECT_DOUBLE_EQ(rows[1].ncu, 12500000) << "the DRAM-only run replaces the full run's figure";
    EXPECT_TRUE(rows[1].within);
    EXPECT_EQ(rows[2].metric, "achieved_occupancy");
    EXPECT_NEAR(rows[2].ncu, 0.60, 1e-12) << "weighted by the durations of the run that measured it";
    EXPECT_TRUE(rows[2].within);
    EXPECT_DOUBLE_EQ(rows[3].ncu, 4096);
    EXPECT_TRUE(rows[3].within) << "256 bytes is under the 1 MiB floor";

    // Alone, the full run's writes are 1.2 MB above ours: past both 2 % and the floor.
    const auto full_only = profile::crosscheck(ours, {full});
    ASSERT_EQ(full_only.size(), 4u);
    EXPECT_DOUBLE_EQ(full_only[1].ncu, 14000000);
    EXPECT_FALSE(full_only[1].within);

    EXPECT_NE(profile::ncu_dram_metric_list().find("dram__bytes_write.sum"), std::string::npos);
    EXPECT_EQ(profile::ncu_dram_metric_list().find("l1tex__"), std::string::npos);
}

TEST(NcuCrosscheck, StaticTierAgainstDriverComparesTheGpuArchitectureOnly)
{
    harness::RunReport static_run, gpu_run;
    gpu_run.arch = "sm_90";
    for (const char* arch : {"sm_80", "sm_90"}) {
        CaseResult r;
        r.variant = "fit";
        r.params_text = "N=1";
        r.arch = arch;
        r.set_metric("registers", arch == std::string("sm_90") ? 32 : 30);
        r.set_metric("theoretical_occupancy", 1.0);
        static_run.results.push_back(r);
    }
    CaseResult g;
    g.variant = "fit";
    g.params_text = "N=1";
    g.set_metric("registers", 32);
    g.set_metric("theoretical_occupancy", 0.75);
    gpu_run.results = {g};
    const auto rows = profile::static_vs_driver(static_run, gpu_run);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_TRUE(rows[0].within);
    EXPECT_FALSE(rows[1].within);
}

namespace {

/// A case with nothing but its time median, for the time crosscheck.
CaseResult timed_case(const std::string& variant, const std::string& params, double median_us)
{
    CaseResult r;
    r.variant = variant;
    r.params_text = params;
    r.set_metric(metric::time_median, median_us);
    return r;
}

} // namespace

TEST(NcuCrosscheck, TimeMediansSitNextToTheSumOfTheCasesKernelDurations)
{
    harness::RunReport ours;
    CaseResult untimed;
    untimed.variant = "static";
    untimed.params_text = "N=256";
    ours.results = {timed_case("tiled", "N=256", 10.1), timed_case("two_pass", "N=256", 4.0), untimed};
    std::vector<profile::NcuKernel> run = {
        {"tiled N=256/gemm_tiled<16>", {{"gpu__time_duration.sum", 10000}}},
        {"two_pass N=256/reduce_pass1", {{"gpu__time_duration.sum", 2500}}},
        {"two_pass N=256/reduce_pass2", {{"gpu__time_duration.sum", 1000}}},
    };
    const auto rows = profile::time_vs_ncu(ours, {run});
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_DOUBLE_EQ(rows[0].ncu, 10.0);
    EXPECT_TRUE(rows[0].within);        // 1 %
    EXPECT_DOUBLE_EQ(rows[1].ncu, 3.5); // both kernels of the case, ns to us
    EXPECT_FALSE(rows[1].within);       // 14 %
    const std::string text = profile::format_time_crosscheck(rows, 5.0);
    EXPECT_NE(text.find("time_median: cases of 5 us or more: 1 of 1 within 2 %"), std::string::npos) << text;
}

TEST(NcuCrosscheck, TimesAreTheMedianOfSeveralNcuRuns)
{
    harness::RunReport ours;
    ours.results = {timed_case("copy", "N=1", 5.05)};
    const auto run = [](double ns) {
        return std::vector<profile::NcuKernel>{{"copy N=1/copy_kernel", {{"gpu__time_duration.sum", ns}}}};
    };
    // One run far off: the median of three is the middle run, not the last one.
    auto rows = profile::time_vs_ncu(ours, {run(5000), run(5900), run(5100)});
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_DOUBLE_EQ(rows[0].ncu, 5.1);
    EXPECT_TRUE(rows[0].within);
    // An even number of runs: the mean of the middle two.
    rows = profile::time_vs_ncu(ours, {run(5000), run(6000), run(5200), run(5400)});
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_DOUBLE_EQ(rows[0].ncu, 5.3);
    EXPECT_FALSE(rows[0].within);
    // 4.7 % below ncu's median, but ncu's own runs went as low as 5.0 us: within their spread.
    EXPECT_DOUBLE_EQ(rows[0].ncu_low, 5.0);
    EXPECT_DOUBLE_EQ(rows[0].ncu_high, 6.0);
    EXPECT_TRUE(rows[0].within_ncu_spread);
    std::string text = profile::format_time_crosscheck(rows, 5.0);
    EXPECT_NE(text.find("0 of 1 within 2 % of gpu__time_duration"), std::string::npos) << text;
    EXPECT_NE(text.find("1 of 1 within 2 % of the range of ncu's runs"), std::string::npos) << text;
    EXPECT_NE(text.find("5.000 to  6.000  (within ncu's spread)"), std::string::npos) << text;
    // Below the lowest run by more than 2 %: outside the spread too.
    ours.results[0].set_metric(metric::time_median, 4.85);
    rows = profile::time_vs_ncu(ours, {run(5000), run(5100), run(5200)});
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_FALSE(rows[0].within);
    EXPECT_FALSE(rows[0].within_ncu_spread);
    text = profile::format_time_crosscheck(rows, 5.0);
    EXPECT_NE(text.find("0 of 1 within 2 % of the range of ncu's runs"), std::string::npos) << text;
    // A run that lacks the case does not count.
    rows = profile::time_vs_ncu(ours, {run(5000), {{"other N=1/k", {{"gpu__time_duration.sum", 1}}}}});
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_DOUBLE_EQ(rows[0].ncu, 5.0);
    EXPECT_DOUBLE_EQ(rows[0].ncu_low, 5.0);
    EXPECT_DOUBLE_EQ(rows[0].ncu_high, 5.0);
}

} // namespace profile_test
