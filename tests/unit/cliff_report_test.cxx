// Cliff maps in every report: the chart and table of report.html, the rows of results.csv, the
// section of summary.md and the lines of the console; a run without maps reads as before.

#include "harness/report/reporters.hxx"
#include "test_files.hxx"

#include <algorithm>
#include <cmath>
#include <csv.h>
#include <gtest/gtest.h>
#include <regex>
#include <sstream>

namespace cliff_report_test {

using namespace harness;

namespace {

constexpr std::size_t scan_points = 4096;
constexpr std::size_t static_points = 32;

Cliff cliff(double x_before, double level_before, double level_after, double noise, CliffCause cause,
            std::string explanation)
{
    Cliff c;
    c.x_before = x_before;
    c.x_after = x_before + 1;
    c.level_before = level_before;
    c.level_after = level_after;
    c.depth = level_after / level_before - 1;
    c.significance = noise > 0 ? std::fabs(level_after - level_before) / noise : INFINITY;
    c.cause = cause;
    c.explanation = std::move(explanation);
    return c;
}

/// Time per unit of work over N = 1..4096 with its noise, stepping at three places: a wave, a
/// tile and an alignment change.
CliffMap timed_scan()
{
    CliffMap map;
    map.variant = "gemm_tiled";
    map.axis = "N";
    map.others = "K=64";
    map.arch = "sm_90";
    map.figure = "time_per_work";
    map.unit = "ns/elem";
    const double noise = 0.01;
    map.cliffs = {cliff(1000, 1.0, 1.38, noise, CliffCause::waves,
                        "wave quantisation: 264 -> 265 blocks, 2 -> 3 waves of 132 SMs x 1 block"),
                  cliff(2048, 1.38, 1.38 * 1.12, noise, CliffCause::tiles, "N / 64 tiles: 32 -> 33 blocks per row"),
                  cliff(3000, 1.38 * 1.12, 1.38 * 1.12 * 0.8, noise, CliffCause::alignment,
                        "pitch of <rows> is a multiple of 32 B \"sectors\" & aligned again")};
    for (std::size_t i = 1; i <= scan_points; ++i) {
        const double n = static_cast<double>(i);
        double level = 1.0;
        for (const auto& c : map.cliffs)
            if (n >= c.x_after) level = c.level_after;
        map.x.push_back(n);
        // A little wobble within the noise, so that no two neighbours are equal.
        map.values.push_back(level + noise * 0.5 * std::sin(n * 0.7));
        map.noise.push_back(noise);
    }
    return map;
}

/// Resident blocks per SM over the block size in the static tier: exact, one occupancy step.
CliffMap static_scan()
{
    CliffMap map;
    map.variant = "<script>alert(1)</script>";
    map.axis = "BLOCK";
    map.arch = "sm_80";
    map.figure = "blocks_per_sm";
    map.unit = "blocks";
    for (std::size_t i = 1; i <= static_points; ++i) {
        map.x.push_back(32.0 * static_cast<double>(i));
        map.values.push_back(map.x.back() <= 256 ? 8 : 4);
    }
    Cliff c = cliff(256, 8, 4, 0, CliffCause::occupancy, "registers 64 -> 72 per thread: 8 -> 4 blocks per SM");
    c.x_after = 288;
    map.cliffs = {c};
    return map;
}

CliffVerdict verdict_at(double x_before, double x_after, Verdict kind, std::optional<double> baseline,
                        std::optional<double> value, std::string rule, std::string message)
{
    CliffVerdict v;
    v.x_before = x_before;
    v.x_after = x_after;
    v.carrier = "N=" + std::to_string(static_cast<long>(x_after));
    v.judgement.metric = cliff_verdict_metric("N");
    v.judgement.verdict = kind;
    v.judgement.baseline = baseline;
    v.judgement.value = value;
    v.judgement.rule = std::move(rule);
    v.judgement.message = std::move(message);
    return v;
}

/// The timed scan against a baseline: the wave cliff is new, the tile cliff as before, the
/// alignment cliff also breaks an expect rule, and a cliff the baseline had at N = 500 is gone.
CliffMap judged_scan()
{
    CliffMap map = timed_scan();
    map.verdicts = {
        verdict_at(500, 501, Verdict::improved, 0.15, std::nullopt, "cliffs min_depth 0.05", "cliff +15 % vanished"),
        verdict_at(1000, 1001, Verdict::regressed, std::nullopt, 0.38, "cliffs min_depth 0.05",
                   "new cliff +38 % (waves)"),
        verdict_at(2048, 2049, Verdict::passed, 0.12, 0.12, "cliffs min_depth 0.05", "as before"),
        verdict_at(3000, 3001, Verdict::passed, -0.2, -0.2, "cliffs min_depth 0.05", "as before"),
        verdict_at(3000, 3001, Verdict::expect_failed, std::nullopt, -0.2, "expect cliff_depth <= 0.1",
                   "|depth| 20 % > 10 %")};
    return map;
}

/// The static scan the baseline does not hold: one verdict on the whole map.
CliffMap unjudged_static_scan()
{
    CliffMap map = static_scan();
    CliffVerdict v = verdict_at(0, 0, Verdict::not_gated, std::nullopt, std::nullopt, "",
                                "no baseline for this map <BLOCK> (CI mode)");
    map.verdicts = {v};
    return map;
}

RunReport run_without_maps()
{
    RunReport run;
    run.suite = "gemm";
    run.mode = RunMode::gpu;
    run.device_name = "NVIDIA H100";
    run.arch = "sm_90";
    CaseResult r;
    r.suite = "gemm";
    r.variant = "gemm_tiled";
    r.params = {{"N", 1024}};
    r.params_text = "N=1024";
    r.arch = "sm_90";
    r.status = CaseStatus::passed;
    r.set_metric("time_median", 12.5);
    r.set_metric("registers", 64);
    run.results = {r};
    return run;
}

RunReport run_with_maps()
{
    RunReport run = run_without_maps();
    run.cliff_maps = {timed_scan(), static_scan()};
    return run;
}

/// Parses CSV text with libcsv into rows of fields; throws on text that is not CSV.
std::vector<std::vector<std::string>> parse_csv(const std::string& text)
{
    struct State {
        std::vector<std::vector<std::string>> rows{{}};
    } state;
    csv_parser p;
    csv_init(&p, CSV_STRICT | CSV_STRICT_FINI);
    const auto field = [](void* s, size_t n, void* data) {
        static_cast<State*>(data)->rows.back().emplace_back(static_cast<char*>(s), n);
    };
    const auto row = [](int, void* data) { static_cast<State*>(data)->rows.emplace_back(); };
    const bool parsed = csv_parse(&p, text.data(), text.size(), field, row, &state) == text.size() &&
                        csv_fini(&p, field, row, &state) == 0;
    csv_free(&p);
    if (!parsed) throw std::runtime_error("not CSV");
    state.rows.pop_back();
    return state.rows;
}

/// The text of `<section id="cliffs">` ... `</section>`; "" when the page has none.
std::string cliff_section(const std::string& html)
{
    const auto from = html.find("<section id=\"cliffs\">");
    if (from == std::string::npos) return {};
    const std::string end = "</section>\n";
    return html.substr(from, html.find(end, from) + end.size() - from);
}

/// The `<svg data-chart="name"` ... `</svg>` of one chart.
std::string chart(const std::string& html, const std::string& name)
{
    const auto from = html.find("data-chart=\"" + name + "\"");
    if (from == std::string::npos) return {};
    return html.substr(from, html.find("</svg>", from) - from);
}

std::size_t count(const std::string& text, const std::string& what)
{
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
    return n;
}

std::string console_text(const RunReport& run)
{
    std::ostringstream out;
    report::write_console_table(run, out);
    return out.str();
}

} // namespace

TEST(CliffReport, HtmlChartsEachMapWithItsCliffsMarkedAndLabelled)
{
    const std::string html = report::html_report(run_with_maps());
    const std::string section = cliff_section(html);
    ASSERT_FALSE(section.empty());
    EXPECT_NE(section.find("<h2>Cliff maps</h2>"), std::string::npos);
    // One chart per map, each with its series and one marker per cliff.
    const std::string timed = chart(section, "cliff-map-0"), exact = chart(section, "cliff-map-1");
    ASSERT_FALSE(timed.empty());
    ASSERT_FALSE(exact.empty());
    EXPECT_NE(timed.find("data-marks=\"4\""), std::string::npos) << "the series and three markers";
    EXPECT_NE(exact.find("data-marks=\"2\""), std::string::npos) << "the series and one marker";
    EXPECT_EQ(count(timed, "<polyline"), 1u);
    EXPECT_EQ(count(timed, "<circle"), 0u) << "a scan is a line, not a point per value";
    EXPECT_EQ(count(timed, "<polygon class=\"band\""), 1u) << "the noise as a band";
    EXPECT_EQ(count(exact, "<polygon"), 0u) << "an exact series has no noise";
    // Each cliff labelled with its cause and depth, its explanation in the marker's title.
    for (const char* label : {">waves +38 %<", ">tiles +12 %<", ">alignment -20 %<"})
        EXPECT_NE(timed.find(label), std::string::npos) << label;
    EXPECT_NE(exact.find(">occupancy -50 %<"), std::string::npos);
    EXPECT_NE(timed.find("<title>waves +38 % at N 1,000 → 1,001: 1 → 1.38 ns/elem, 38× noise — wave quantisation: "
                         "264 -&gt; 265 blocks"),
              std::string::npos)
        << timed.substr(0, 4000);
    // The tables under the charts: position, level, depth, significance, cause, explanation.
    EXPECT_EQ(count(section, "<table class=\"sortable cliffs\">"), 2u);
    for (const char* cell : {"<td class=\"num\" data-value=\"1000\">N 1,000 → 1,001</td>",
                             "<td class=\"num\" data-value=\"2048\">N 2,048 → 2,049</td>",
                             "<td class=\"num\" data-value=\"256\">BLOCK 256 → 288</td>", "<td>8 → 4 blocks</td>",
                             "<td class=\"num\" data-value=\"-0.5\">-50 %</td>",
                             "<td class=\"num\" data-value=\"\">exact</td>", "></i>tiles</td>", "></i>occupancy</td>",
                             "<td class=\"explanation\">N / 64 tiles: 32 -&gt; 33 blocks per row</td>"})
        EXPECT_NE(section.find(cell), std::string::npos) << cell;
    EXPECT_NE(section.find("gemm_tiled time_per_work vs N (K=64, sm_90)"), std::string::npos);
    EXPECT_NE(section.find("4,096 points, 3 cliffs; shaded: the measured noise"), std::string::npos);
    EXPECT_NE(section.find("32 points, 1 cliff; an exact series"), std::string::npos);
}

TEST(CliffReport, HtmlEscapesNamesAndExplanations)
{
    const std::string html = report::html_report(run_with_maps());
    EXPECT_EQ(html.find("<script>alert"), std::string::npos);
    EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt; blocks_per_sm vs BLOCK (sm_80)"), std::string::npos);
    EXPECT_NE(html.find("pitch of &lt;rows&gt; is a multiple of 32 B &quot;sectors&quot; &amp; aligned again"),
              std::string::npos);
    EXPECT_EQ(count(html, "<script>"), 1u) << "one script element: the page's own";
}

// Thousands of points stay light: the series is thinned to the chart's pixels, and every step
// still spans its full height.
TEST(CliffReport, HtmlStaysSmallForThousandsOfPoints)
{
    const std::string section = cliff_section(report::html_report(run_with_maps()));
    const double bytes_per_point = static_cast<double>(section.size()) / (scan_points + static_points);
    EXPECT_LT(bytes_per_point, 12.0) << section.size() << " bytes";
    const std::string timed = chart(section, "cliff-map-0");
    const std::regex polyline("<polyline class=\"mark series\" points=\"([^\"]*)\"");
    std::smatch match;
    ASSERT_TRUE(std::regex_search(timed, match, polyline));
    const std::string points = match[1];
    const std::size_t shown = count(points, ",");
    EXPECT_LT(shown, 2u * 760u) << "at most two points per pixel column";
    EXPECT_GT(shown, 100u);
    // The lowest and highest levels are both still drawn: y of the first and of the highest step.
    std::vector<double> ys;
    const std::regex pair("[0-9.]+,([0-9.]+)");
    for (std::sregex_iterator it(points.begin(), points.end(), pair), end; it != end; ++it)
        ys.push_back(std::stod((*it)[1]));
    const auto [top, bottom] = std::minmax_element(ys.begin(), ys.end());
    EXPECT_GT(*bottom - *top, 80.0) << "the steps reach their full height";
}

// The section is well-formed XML (SVG included), so any parser reads it.
TEST(CliffReport, HtmlSectionIsWellFormed)
{
    if (std::system("command -v xmllint >/dev/null 2>&1") != 0) GTEST_SKIP() << "xmllint is not installed";
    TempDir dir{"harness-cliff-report-test"};
    write_file(dir.path / "cliffs.xml", cliff_section(report::html_report(run_with_maps())));
    EXPECT_EQ(std::system(("xmllint --noout " + (dir.path / "cliffs.xml").string()).c_str()), 0);
}

TEST(CliffReport, CsvHasARowPerCliffAfterTheCases)
{
    const auto rows = parse_csv(report::results_csv(run_with_maps()));
    const auto plain = parse_csv(report::results_csv(run_without_maps()));
    ASSERT_EQ(rows.size(), plain.size() + 4);
    EXPECT_TRUE(std::equal(plain.begin(), plain.end(), rows.begin())) << "the cases' rows come first, unchanged";
    for (const auto& row : rows) EXPECT_EQ(row.size(), rows[0].size());
    const std::vector<std::vector<std::string>> cliffs(rows.end() - 4, rows.end());
    EXPECT_EQ(cliffs[0], (std::vector<std::string>{"gemm", "gemm_tiled", "N=1000..1001 K=64", "sm_90", "cliff", "0.38",
                                                   "fraction", "waves", "", "", ""}));
    EXPECT_EQ(cliffs[1][2], "N=2048..2049 K=64");
    EXPECT_EQ(cliffs[1][7], "tiles");
    EXPECT_EQ(cliffs[2][7], "alignment");
    EXPECT_EQ(cliffs[2][5], "-0.2");
    EXPECT_EQ(cliffs[3], (std::vector<std::string>{"gemm", "<script>alert(1)</script>", "BLOCK=256..288", "sm_80",
                                                   "cliff", "-0.5", "fraction", "occupancy", "", "", ""}));
}

TEST(CliffReport, MarkdownListsEachMapsCliffs)
{
    const std::string summary = report::markdown_summary(run_with_maps());
    const auto section = summary.find("\n### Cliffs\n");
    ASSERT_NE(section, std::string::npos) << summary;
    const std::string cliffs = summary.substr(section);
    EXPECT_NE(cliffs.find("gemm\\_tiled time\\_per\\_work vs N (K=64, sm\\_90): 4,096 points, 3 cliffs"),
              std::string::npos)
        << cliffs;
    EXPECT_NE(cliffs.find("| N 1,000 → 1,001 | 1 → 1.38 ns/elem | +38 % | 38× noise | waves | wave quantisation: 264 "
                          "-&gt; 265 blocks"),
              std::string::npos)
        << cliffs;
    EXPECT_NE(cliffs.find("| alignment | pitch of &lt;rows&gt; is a multiple"), std::string::npos) << cliffs;
    EXPECT_NE(cliffs.find("&lt;script&gt;alert(1)&lt;/script&gt; blocks\\_per\\_sm vs BLOCK (sm\\_80): 32 points, 1 "
                          "cliff"),
              std::string::npos)
        << cliffs;
    EXPECT_NE(cliffs.find("| BLOCK 256 → 288 | 8 → 4 blocks | -50 % | exact | occupancy |"), std::string::npos)
        << cliffs;
    EXPECT_EQ(summary.find("<script>"), std::string::npos);
}

TEST(CliffReport, MarkdownNamesAMapWithoutCliffs)
{
    RunReport run = run_without_maps();
    CliffMap smooth = timed_scan();
    smooth.cliffs.clear();
    run.cliff_maps = {smooth};
    EXPECT_NE(report::markdown_summary(run).find("(K=64, sm\\_90): 4,096 points, no cliff\n"), std::string::npos);
}

TEST(CliffReport, ConsoleHasOneLinePerMap)
{
    const std::string text = console_text(run_with_maps());
    EXPECT_NE(text.find("\ncliff maps:\n"
                        "  gemm_tiled time_per_work vs N (K=64, sm_90): 3 cliffs, deepest waves +38 % at N 1,000 -> "
                        "1,001\n"
                        "  <script>alert(1)</script> blocks_per_sm vs BLOCK (sm_80): 1 cliff, deepest occupancy -50 % "
                        "at BLOCK 256 -> 288\n"),
              std::string::npos)
        << text;
}

// A run without cliff maps reads exactly as before: no empty section, heading or row anywhere.
TEST(CliffReport, ReportsWithoutMapsAreUnchanged)
{
    const RunReport plain = run_without_maps(), mapped = run_with_maps();
    const std::string html = report::html_report(plain), mapped_html = report::html_report(mapped);
    EXPECT_EQ(html.find("Cliff maps"), std::string::npos);
    EXPECT_EQ(html.find("data-chart=\"cliff-map"), std::string::npos);
    EXPECT_EQ(html.find("id=\"cliffs\""), std::string::npos);
    std::string without_section = mapped_html;
    without_section.erase(without_section.find(cliff_section(mapped_html)), cliff_section(mapped_html).size());
    EXPECT_EQ(without_section, html) << "the maps add their section and nothing else";

    const std::string summary = report::markdown_summary(plain), mapped_summary = report::markdown_summary(mapped);
    EXPECT_EQ(summary.find("Cliffs"), std::string::npos);
    const auto cliffs = mapped_summary.find("\n### Cliffs\n");
    ASSERT_NE(cliffs, std::string::npos);
    EXPECT_EQ(mapped_summary.substr(0, cliffs), summary.substr(0, cliffs));

    const std::string console = console_text(plain), mapped_console = console_text(mapped);
    EXPECT_EQ(console.find("cliff"), std::string::npos) << console;
    std::string without_lines = mapped_console;
    const auto from = without_lines.find("\ncliff maps:\n");
    ASSERT_NE(from, std::string::npos);
    without_lines.erase(from, without_lines.find("\n\n", from + 1) + 1 - from);
    EXPECT_EQ(without_lines, console);

    EXPECT_EQ(report::results_csv(plain).find("cliff"), std::string::npos);
}

// The summary's size limit drops whole maps, never half a table.
TEST(CliffReport, MarkdownSizeLimitDropsWholeMaps)
{
    RunReport run = run_without_maps();
    for (int i = 0; i < 200; ++i) run.cliff_maps.push_back(timed_scan());
    const std::string summary = report::markdown_summary(run, 16 * 1024);
    EXPECT_LE(summary.size(), 16u * 1024u);
    EXPECT_NE(summary.find("### Cliffs"), std::string::npos);
    EXPECT_NE(summary.find("more rows left out"), std::string::npos);
    // Every map that is shown has its three cliffs.
    EXPECT_EQ(count(summary, "| waves |"), count(summary, "| alignment |"));
}

TEST(CliffReport, HtmlShowsEachCliffsVerdictAndTheVanishedOnes)
{
    RunReport run = run_without_maps();
    run.cliff_maps = {judged_scan(), unjudged_static_scan()};
    const std::string section = cliff_section(report::html_report(run));
    const std::string timed = chart(section, "cliff-map-0");
    // The new cliff's label is marked as failing; the vanished one is a dashed line with its old depth.
    EXPECT_NE(timed.find("class=\"label strong cliff-failing\""), std::string::npos);
    EXPECT_EQ(count(timed, "cliff-failing"), 2u) << "waves (regressed) and alignment (expect failed)";
    EXPECT_NE(timed.find(">vanished, was +15 %<"), std::string::npos);
    EXPECT_NE(timed.find("stroke-dasharray"), std::string::npos);
    EXPECT_NE(timed.find("data-marks=\"4\""), std::string::npos) << "a vanished cliff is no mark of this run";
    // The table: a verdict column, the vanished cliff in axis order before the others.
    EXPECT_NE(section.find("<th>verdict</th>"), std::string::npos);
    const auto vanished = section.find("<tr class=\"vanished\"><td class=\"num\" data-value=\"500\">N 500 → 501</td>");
    ASSERT_NE(vanished, std::string::npos) << section.substr(0, 20000);
    EXPECT_LT(vanished, section.find("N 1,000 → 1,001</td>"));
    EXPECT_NE(
        section.find("<span class=\"pill v-improved\" title=\"cliffs min_depth 0.05\">improved</span> cliff +15 % "
                     "vanished"),
        std::string::npos);
    EXPECT_NE(
        section.find("<span class=\"pill v-regressed\" title=\"cliffs min_depth 0.05\">regressed</span> new cliff "
                     "+38 % (waves)"),
        std::string::npos);
    EXPECT_NE(section.find("expect failed</span> |depth| 20 % &gt; 10 %"), std::string::npos);
    // A verdict on the whole map stands under its caption.
    EXPECT_NE(section.find("<p class=\"note map-verdict\"><span class=\"pill v-not_gated\">not gated (no baseline; CI "
                           "mode)</span> no baseline for this map &lt;BLOCK&gt; (CI mode)</p>"),
              std::string::npos);
    if (std::system("command -v xmllint >/dev/null 2>&1") == 0) {
        TempDir dir{"harness-cliff-report-test"};
        write_file(dir.path / "cliffs.xml", section);
        EXPECT_EQ(std::system(("xmllint --noout " + (dir.path / "cliffs.xml").string()).c_str()), 0);
    }
}

TEST(CliffReport, CsvCarriesEachCliffsBaselineAndVerdict)
{
    RunReport run = run_without_maps();
    run.cliff_maps = {judged_scan(), unjudged_static_scan()};
    const auto rows = parse_csv(report::results_csv(run));
    std::vector<std::vector<std::string>> cliffs;
    for (const auto& row : rows)
        if (row[4] == "cliff") cliffs.push_back(row);
    ASSERT_EQ(cliffs.size(), 6u);
    EXPECT_EQ(cliffs[0], (std::vector<std::string>{"gemm", "gemm_tiled", "N=1000..1001 K=64", "sm_90", "cliff", "0.38",
                                                   "fraction", "waves", "", "", "regressed"}));
    EXPECT_EQ(cliffs[1][8], "0.12");
    EXPECT_EQ(cliffs[1][10], "passed");
    EXPECT_EQ(cliffs[2][10], "expect_failed") << "the worst of the baseline's verdict and the expect rule's";
    EXPECT_EQ(cliffs[2][8], "-0.2") << "the baseline comes from the baseline's verdict";
    EXPECT_EQ(cliffs[3], (std::vector<std::string>{"gemm", "gemm_tiled", "N=500..501 K=64", "sm_90", "cliff", "",
                                                   "fraction", "", "0.15", "", "improved"}));
    EXPECT_EQ(cliffs[5], (std::vector<std::string>{"gemm", "<script>alert(1)</script>", "BLOCK=32..1024", "sm_80",
                                                   "cliff", "", "fraction", "", "", "", "not_gated"}));
}

TEST(CliffReport, MarkdownAndConsoleShowTheVerdicts)
{
    RunReport run = run_without_maps();
    run.cliff_maps = {judged_scan(), unjudged_static_scan()};
    const std::string summary = report::markdown_summary(run);
    EXPECT_NE(summary.find("| position | level | depth | significance | cause | explanation | verdict |"),
              std::string::npos);
    EXPECT_NE(summary.find("| N 500 → 501 | - | was +15 % | - | - | not found in this run | improved: cliff +15 % "
                           "vanished |"),
              std::string::npos)
        << summary;
    EXPECT_NE(summary.find("| waves | wave quantisation: 264 -&gt; 265 blocks, 2 -&gt; 3 waves of 132 SMs x 1 block | "
                           "regressed: new cliff +38 % (waves) |"),
              std::string::npos)
        << summary;
    EXPECT_NE(summary.find("passed: as before<br>expect_failed: \\|depth\\| 20 % &gt; 10 % |"), std::string::npos)
        << summary;
    EXPECT_NE(summary.find("32 points, 1 cliff — not_gated: no baseline for this map &lt;BLOCK&gt; (CI mode)\n"),
              std::string::npos)
        << summary;

    const std::string console = console_text(run);
    EXPECT_NE(console.find("deepest waves +38 % at N 1,000 -> 1,001; 1 expect_failed, 1 regressed, 1 improved\n"),
              std::string::npos)
        << console;
    EXPECT_NE(console.find("at BLOCK 256 -> 288; 1 not_gated\n"), std::string::npos) << console;
}

// Maps read from a results file may be odd: no points, lengths that disagree, values that are not
// numbers. Every report still renders, and the charts draw only what has a place.
TEST(CliffReport, OddMapsStillRender)
{
    RunReport run = run_without_maps();
    CliffMap empty;
    empty.variant = "empty";
    empty.axis = "N";
    CliffMap odd = timed_scan();
    odd.variant = "odd";
    odd.values.resize(100);
    odd.values[7] = NAN;
    odd.values[8] = INFINITY;
    odd.noise.resize(3);
    odd.cliffs[0].x_before = NAN;
    odd.cliffs[1].depth = NAN;
    odd.verdicts = {verdict_at(NAN, NAN, Verdict::improved, 0.1, std::nullopt, "cliffs", "gone")};
    run.cliff_maps = {empty, odd};

    const std::string section = cliff_section(report::html_report(run));
    EXPECT_NE(section.find("No point of this axis was measured."), std::string::npos);
    EXPECT_EQ(chart(section, "cliff-map-0"), "") << "no chart without points";
    const std::string drawn = chart(section, "cliff-map-1");
    ASSERT_FALSE(drawn.empty());
    EXPECT_NE(drawn.find("odd time_per_work vs N (K=64, sm_90): 100 points"), std::string::npos);
    EXPECT_FALSE(std::regex_search(drawn, std::regex("=\"[^\"]*\\b(nan|inf)\\b")))
        << "no coordinate that is not a number";
    EXPECT_NE(section.find(">n/a</td>"), std::string::npos) << "a depth that is not a number reads n/a";
    if (std::system("command -v xmllint >/dev/null 2>&1") == 0) {
        TempDir dir{"harness-cliff-report-test"};
        write_file(dir.path / "cliffs.xml", section);
        EXPECT_EQ(std::system(("xmllint --noout " + (dir.path / "cliffs.xml").string()).c_str()), 0);
    }
    EXPECT_NO_THROW(parse_csv(report::results_csv(run)));
    EXPECT_NE(report::markdown_summary(run).find("empty vs N: 0 points, no cliff"), std::string::npos);
    EXPECT_NE(console_text(run).find("  empty vs N: no cliff\n"), std::string::npos);
}

} // namespace cliff_report_test
