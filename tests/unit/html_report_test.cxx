// The HTML report as text: order of sections, escaping, units, self-containment, and the
// `harness report` command's exit codes. The browser rendering is in html_render_test.

#include "harness/cli/commands.hxx"
#include "harness/cli/exit_codes.hxx"
#include "harness/report/html_text.hxx"
#include "harness/report/reporters.hxx"
#include "harness/report/svg_chart.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <regex>
#include <sstream>

namespace html_report_test {

using namespace harness;
namespace fs = std::filesystem;

namespace {

fs::path fixture(const char* name)
{
    return repo_root() / "tests" / "fixtures" / name;
}

std::string gpu_report_html()
{
    return report::html_report(harness::read_results_json(fixture("gemm_results.json")));
}

std::string read_text(const fs::path& file)
{
    std::ifstream in(file, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

/// The `data-marks` count of `<svg data-chart="name">`, or -1 when the chart is absent.
int chart_marks(const std::string& html, const std::string& name)
{
    const std::regex pattern("data-chart=\"" + name + "\" data-marks=\"([0-9]+)\"");
    std::smatch match;
    return std::regex_search(html, match, pattern) ? std::stoi(match[1]) : -1;
}

} // namespace

TEST(HtmlText, EscapesMarkupAndQuotes)
{
    EXPECT_EQ(report::html_escape("a<b>&\"c\"'d'"), "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39;");
    EXPECT_EQ(report::html_escape("plain"), "plain");
}

TEST(HtmlText, NumbersCarryUnitsFromTheMetricTable)
{
    EXPECT_EQ(report::format_number(8321499136), "8,321,499,136");
    EXPECT_EQ(report::format_number(-1234567), "-1,234,567");
    EXPECT_EQ(report::format_number(651.43), "651.4");
    EXPECT_EQ(report::format_number(9.071), "9.07");
    EXPECT_EQ(report::format_with_unit(0.5, report::metric_unit("theoretical_occupancy")), "50 %");
    EXPECT_EQ(report::format_with_unit(7166, report::metric_unit("time_median")), "7,166 us");
    EXPECT_EQ(report::metric_unit("excess_shared_wavefronts"), "wavefronts");
    EXPECT_EQ(report::metric_unit("no_such_metric"), "");
}

TEST(SvgChart, LogAxisForDataSpanningDecadesWithDecadeTicks)
{
    const auto axis = report::fit_axis("time", {10.0, 100.0, 10000.0});
    EXPECT_EQ(axis.scale, report::Scale::log);
    const auto ticks = report::axis_ticks(axis);
    EXPECT_NE(std::find(ticks.begin(), ticks.end(), 1000.0), ticks.end());
    EXPECT_EQ(report::fit_axis("N", {1024.0, 2048.0}).scale, report::Scale::linear);
}

TEST(HtmlReport, RegressionsComeFirstWithMetricChangeToleranceAndSource)
{
    const std::string html = gpu_report_html();
    const auto regressions = html.find("id=\"regressions\"");
    const auto first_chart = html.find("<svg");
    ASSERT_NE(regressions, std::string::npos);
    ASSERT_NE(first_chart, std::string::npos);
    EXPECT_LT(regressions, first_chart) << "the regressions table must precede the charts";
    EXPECT_LT(html.find("id=\"failures\""), first_chart);

    const std::string table = html.substr(regressions, html.find("</section>", regressions) - regressions);
    EXPECT_NE(table.find("excess_shared_wavefronts"), std::string::npos);
    EXPECT_NE(table.find("kernels/gemm/gemm_smem_tiled.cu:29"), std::string::npos);
    EXPECT_NE(table.find("href=\"#hotspot-0\""), std::string::npos) << "the source line links to its snippet";
    EXPECT_NE(table.find("samples 5% (p=0.0001)"), std::string::npos);
    EXPECT_NE(table.find("+37.65 %"), std::string::npos);
    EXPECT_NE(table.find("8,321,499,136 wavefronts"), std::string::npos) << "values carry their unit";
    EXPECT_EQ(table.find("vectorized N=4096"), std::string::npos) << "an improvement is not a regression";
}

TEST(HtmlReport, HeaderNamesTheRunAndCountsOutcomes)
{
    const std::string html = gpu_report_html();
    for (const char* text : {"NVIDIA H200", "580.65", "13.0", "3f9c2e1a7b4d", "2025-06-12T14:03:27Z", "REGRESSED",
                             "<b>7</b> passed", "<b>1</b> regressed", "<b>1</b> improved", "<b>1</b> failed"})
        EXPECT_NE(html.find(text), std::string::npos) << text;
}

TEST(HtmlReport, EveryChartOfAGpuRunHasMarks)
{
    const std::string html = gpu_report_html();
    for (const char* chart : {"vs-baseline-time_median", "vs-baseline-excess_shared_wavefronts", "scaling-time_median",
                              "scaling-gflops", "roofline", "occupancy"})
        EXPECT_GT(chart_marks(html, chart), 0) << chart;
    EXPECT_NE(html.find("FP32 peak 66,900 GFLOP/s"), std::string::npos);
    EXPECT_NE(html.find("memory 4,800 GB/s"), std::string::npos);
    EXPECT_NE(html.find("(log scale)"), std::string::npos);
}

TEST(HtmlReport, HotspotShowsTheSnippetWithTheLineMarked)
{
    const std::string html = gpu_report_html();
    EXPECT_NE(html.find("id=\"hotspot-0\""), std::string::npos);
    EXPECT_NE(html.find("<span class=\"line hot\"><span class=\"ln\">29</span>"), std::string::npos);
    EXPECT_NE(html.find("b_tile[tx][i]"), std::string::npos);
    EXPECT_NE(html.find("16.50× ideal"), std::string::npos);
}

TEST(HtmlReport, TablesSortAndNumbersHaveSortKeys)
{
    const std::string html = gpu_report_html();
    EXPECT_NE(html.find("table class=\"sortable"), std::string::npos);
    EXPECT_NE(html.find("function sortBy"), std::string::npos);
    EXPECT_NE(html.find("data-value=\"7166"), std::string::npos);
    EXPECT_NE(html.find("<span class=\"unit\">us</span>"), std::string::npos) << "column units in the heading";
}

TEST(HtmlReport, SelfContainedWithoutExternalResources)
{
    for (const char* file : {"gemm_results.json", "gemm_static_results.json"}) {
        const std::string html = report::html_report(harness::read_results_json(fixture(file)));
        EXPECT_EQ(html.find("http://"), std::string::npos) << file;
        EXPECT_EQ(html.find("https://"), std::string::npos) << file;
        EXPECT_FALSE(std::regex_search(html, std::regex("(src|href)=\"(?!#)"))) << file << ": only in-page links";
        EXPECT_EQ(html.find("<link"), std::string::npos) << file;
        EXPECT_EQ(html.find("@import"), std::string::npos) << file;
    }
}

TEST(HtmlReport, EscapesVariantNamesMessagesAndSnippets)
{
    harness::RunReport run;
    run.suite = "evil<suite>";
    run.mode = RunMode::gpu;
    CaseResult r;
    r.suite = run.suite;
    r.variant = "<script>alert(1)</script>";
    r.params = {{"N", 1}};
    r.params_text = "N=1";
    r.status = CaseStatus::fault;
    r.message = "trap at \"x < y\" & 'z'";
    Hotspot h;
    h.metric = "excess_global_sectors";
    h.file = "k.cu";
    h.line = 2;
    h.snippet = {"if (a < b && c > d)", "  x = \"<b>\";"};
    h.snippet_first_line = 1;
    r.hotspots = {h};
    MetricVerdict v;
    v.metric = "registers";
    v.verdict = Verdict::regressed;
    v.baseline = 32;
    v.value = 40;
    v.rule = "exact";
    v.message = "regs <32> -> 40";
    r.verdicts = {v};
    run.results = {r};
    const std::string html = report::html_report(run);
    EXPECT_EQ(html.find("<script>alert"), std::string::npos);
    EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
    EXPECT_NE(html.find("trap at &quot;x &lt; y&quot; &amp; &#39;z&#39;"), std::string::npos);
    EXPECT_NE(html.find("if (a &lt; b &amp;&amp; c &gt; d)"), std::string::npos);
    EXPECT_NE(html.find("regs &lt;32&gt; -&gt; 40"), std::string::npos);
    EXPECT_NE(html.find("<h1>evil&lt;suite&gt;</h1>"), std::string::npos);
    // Exactly one script element: the page's own.
    EXPECT_EQ(html.find("<script>", html.find("<script>") + 1), std::string::npos);
}

TEST(HtmlReport, StaticTierShowsOccupancyPerArchAndSaysWhyTimingIsMissing)
{
    const std::string html = report::html_report(harness::read_results_json(fixture("gemm_static_results.json")));
    EXPECT_NE(html.find("static (compiled, not run)"), std::string::npos);
    // Sections a static run has no data for are left out, and the page says once why.
    EXPECT_NE(html.find("never launched, so this report has no times, throughputs, counters"), std::string::npos);
    EXPECT_EQ(html.find("id=\"scaling\""), std::string::npos);
    EXPECT_EQ(html.find("id=\"roofline\""), std::string::npos);
    EXPECT_NE(html.find("theoretical occupancy"), std::string::npos);
    EXPECT_EQ(html.find("achieved vs theoretical"), std::string::npos)
        << "the static tier measures no achieved occupancy";
    EXPECT_GT(chart_marks(html, "occupancy"), 0);
    EXPECT_NE(html.find("vectorized sm_80"), std::string::npos) << "one occupancy column per variant and arch";
    EXPECT_NE(html.find("No metric regressed"), std::string::npos);
    EXPECT_EQ(html.find("id=\"hotspots\""), std::string::npos) << "sections without data are omitted";
    EXPECT_EQ(html.find("id=\"improvements\""), std::string::npos);
}

TEST(HtmlReport, RunWithoutVerdictsSaysNothingWasCompared)
{
    harness::RunReport run;
    run.suite = "gemm";
    run.mode = RunMode::gpu;
    CaseResult r;
    r.variant = "naive";
    r.params_text = "N=1";
    r.status = CaseStatus::passed;
    run.results = {r};
    const std::string html = report::html_report(run);
    EXPECT_NE(html.find("Nothing was compared"), std::string::npos);
    EXPECT_NE(html.find("PASSED"), std::string::npos);
}

TEST(ReportCommand, WritesTheReportAndExitsZero)
{
    const TempDir dir{"harness-html-test"};
    const fs::path out = dir.path / "report.html";
    EXPECT_EQ(cli::dispatch({"report", fixture("gemm_results.json").string(), "-o", out.string()}), cli::exit_pass);
    const std::string html = read_text(out);
    EXPECT_NE(html.find("<!DOCTYPE html>"), std::string::npos);
    EXPECT_NE(html.find("excess_shared_wavefronts"), std::string::npos);
}

TEST(ReportCommand, MissingOrBadFilesAreBadInput)
{
    const TempDir dir{"harness-html-test"};
    const fs::path out = dir.path / "report.html";
    EXPECT_EQ(cli::dispatch({"report", (dir.path / "absent.json").string(), "-o", out.string()}), cli::exit_bad_input);
    const fs::path garbage = dir.path / "garbage.json";
    std::ofstream(garbage) << "{ not json";
    EXPECT_EQ(cli::dispatch({"report", garbage.string(), "-o", out.string()}), cli::exit_bad_input);
    const fs::path wrong_schema = dir.path / "other.json";
    std::ofstream(wrong_schema) << R"({"schema": "something-else", "results": []})";
    EXPECT_EQ(cli::dispatch({"report", wrong_schema.string(), "-o", out.string()}), cli::exit_bad_input);
    EXPECT_EQ(cli::dispatch({"report"}), cli::exit_bad_input) << "the results file is required";
    EXPECT_FALSE(fs::exists(out));
}

TEST(HtmlReport, FailOnImprovementListsImprovementsAsRegressions)
{
    auto run = harness::read_results_json(fixture("gemm_results.json"));
    run.fail_on_improvement = true;
    const std::string html = report::html_report(run);
    const auto regressions = html.find("id=\"regressions\"");
    const std::string table = html.substr(regressions, html.find("</section>", regressions) - regressions);
    EXPECT_NE(table.find("vectorized N=4096"), std::string::npos);
    EXPECT_EQ(html.find("id=\"improvements\""), std::string::npos);
    EXPECT_NE(html.find("<b>2</b> regressed"), std::string::npos);
}

TEST(HtmlReport, ManyImprovementsAreFoldedUnderASummaryByMetric)
{
    auto run = harness::read_results_json(fixture("gemm_results.json"));
    const auto open_html = report::html_report(run);
    EXPECT_NE(open_html.find("id=\"improvements\""), std::string::npos);
    EXPECT_EQ(open_html.find("<details class=\"improvements\">"), std::string::npos) << "one improvement stays open";

    // A stale DRAM baseline: every case improves its dram_write_bytes, some their time too.
    std::size_t improved = 0;
    for (auto& r : run.results) {
        MetricVerdict v;
        v.metric = "dram_write_bytes";
        v.verdict = Verdict::improved;
        v.baseline = 2.0e7;
        v.value = 1.0e7;
        v.rule = "rel 5% min 1048576";
        r.verdicts.push_back(v);
        ++improved;
    }
    ASSERT_GT(improved, 5u);
    const std::string html = report::html_report(run);
    const auto details = html.find("<details class=\"improvements\"><summary>");
    ASSERT_NE(details, std::string::npos);
    const std::string summary = html.substr(details, html.find("</summary>", details) - details);
    EXPECT_NE(summary.find(std::to_string(improved + 1) + " improved figures"), std::string::npos) << summary;
    EXPECT_NE(summary.find("dram_write_bytes (" + std::to_string(improved) + "), time_median (1)"), std::string::npos)
        << summary;
    // A failing run shows what failed and its hotspots first; the folded improvements come after the charts.
    EXPECT_LT(html.find("id=\"hotspots\""), html.find("id=\"vs-baseline\""));
    EXPECT_LT(html.find("id=\"vs-baseline\""), html.find("id=\"improvements\""));
}

// A passing run leads with its verdict, then the charts; improvements and hotspots follow.
TEST(HtmlReport, APassingRunLeadsWithItsVerdictThenTheCharts)
{
    auto run = harness::read_results_json(fixture("gemm_results.json"));
    for (auto& r : run.results) {
        r.status = CaseStatus::passed;
        for (auto& v : r.verdicts)
            if (v.verdict == Verdict::regressed || v.verdict == Verdict::expect_failed) v.verdict = Verdict::passed;
    }
    const std::string html = report::html_report(run);
    const auto verdict = html.find("id=\"regressions\"");
    const auto first_chart = html.find("<svg");
    ASSERT_NE(verdict, std::string::npos);
    ASSERT_NE(first_chart, std::string::npos);
    EXPECT_LT(html.find("<header"), verdict);
    EXPECT_LT(verdict, first_chart);
    if (html.find("id=\"hotspots\"") != std::string::npos) {
        EXPECT_LT(first_chart, html.find("id=\"hotspots\""));
    }
    if (html.find("id=\"improvements\"") != std::string::npos) {
        EXPECT_LT(first_chart, html.find("id=\"improvements\""));
    }
    // Every table that lists cases has an arch column.
    EXPECT_NE(html.find("<th>arch</th>"), std::string::npos);
}

// A change from zero is drawn as values on an axis that fits them, and labels of neighbouring
// points never overlap.
TEST(HtmlReport, BaselineChartsFitTheChangeAndKeepLabelsApart)
{
    harness::RunReport run;
    run.suite = "planted";
    run.mode = RunMode::gpu;
    for (int i = 0; i < 12; ++i) {
        CaseResult r;
        r.variant = "k";
        r.arch = "sm_90";
        r.params_text = "N=" + std::to_string(i);
        r.set_metric("local_bytes", 128);
        MetricVerdict v;
        v.metric = "local_bytes";
        v.verdict = Verdict::regressed;
        v.baseline = 0.0;
        v.value = 128.0;
        v.rule = "exact";
        r.verdicts.push_back(v);
        run.results.push_back(r);
    }
    const std::string html = report::html_report(run);
    const auto chart = html.find("data-chart=\"vs-baseline-local_bytes\"");
    ASSERT_NE(chart, std::string::npos);
    const std::string svg = html.substr(chart, html.find("</svg>", chart) - chart);
    EXPECT_NE(svg.find("value (baseline: grey mark)"), std::string::npos) << "0 -> 128 B is not a percentage";
    // The y axis reaches the value: its highest tick is at least 128.
    const std::regex tick("<text class=\"tick\" x=\"[0-9.]+\" y=\"[0-9.]+\" text-anchor=\"end\">([0-9.]+)<");
    double top = 0;
    for (std::sregex_iterator it(svg.begin(), svg.end(), tick), end; it != end; ++it)
        top = std::max(top, std::stod((*it)[1]));
    EXPECT_GE(top, 128.0) << svg.substr(0, 3000);
    // Labels: no two within 30 px horizontally and 12 px vertically.
    const std::regex label("<text class=\"label strong\" x=\"([0-9.]+)\" y=\"([0-9.]+)\"");
    std::vector<std::pair<double, double>> at;
    for (std::sregex_iterator it(svg.begin(), svg.end(), label), end; it != end; ++it)
        at.emplace_back(std::stod((*it)[1]), std::stod((*it)[2]));
    EXPECT_GE(at.size(), 3u);
    for (std::size_t a = 0; a < at.size(); ++a)
        for (std::size_t b = a + 1; b < at.size(); ++b)
            EXPECT_FALSE(std::fabs(at[a].first - at[b].first) < 30 && std::fabs(at[a].second - at[b].second) < 12)
                << "labels " << a << " and " << b << " overlap";
}

TEST(HtmlReport, CasesWithCachedCountersSaySo)
{
    auto run = harness::read_results_json(fixture("gemm_results.json"));
    ASSERT_GE(run.results.size(), 2u);
    run.results[0].reused_metrics = {"global_ld_sectors", "global_sectors", "global_sectors_ideal"};
    const std::string html = report::html_report(run);
    const auto cases = html.find("id=\"cases\"");
    ASSERT_NE(cases, std::string::npos);
    const std::string table = html.substr(cases, html.find("</section>", cases) - cases);
    EXPECT_NE(table.find("3 exact figures and hotspots reused from the counter cache"), std::string::npos);
    // Only the case that reused them is marked (its note cell shows the text and carries it as a title).
    std::size_t marks = 0;
    for (auto at = table.find("reused from the counter cache"); at != std::string::npos;
         at = table.find("reused from the counter cache", at + 1))
        ++marks;
    EXPECT_EQ(marks, 2u);
}

} // namespace html_report_test
