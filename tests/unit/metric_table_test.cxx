// The metric table as `harness metrics` prints it, and docs/metrics.md kept equal to it; the roles
// the table gives its metrics (hotspot families, occupancy, report columns) and the reports that
// read them.

#include "harness/core/metrics.hxx"
#include "harness/report/html_text.hxx"
#include "harness/report/reporters.hxx"
#include "test_paths.hxx"

#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <regex>
#include <set>
#include <sstream>

namespace metric_table_test {

using namespace harness;

TEST(MetricTable, DocsHoldTheTableAsTheToolPrintsIt)
{
    std::ifstream in(repo_root() / "docs" / "metrics.md");
    ASSERT_TRUE(in) << "docs/metrics.md is missing";
    std::stringstream text;
    text << in.rdbuf();
    const std::string doc = text.str();
    const std::string begin = "<!-- metric-table:begin -->\n", end = "<!-- metric-table:end -->";
    const auto from = doc.find(begin), to = doc.find(end);
    ASSERT_NE(from, std::string::npos);
    ASSERT_NE(to, std::string::npos);
    EXPECT_EQ(doc.substr(from + begin.size(), to - from - begin.size()), metric_table_markdown())
        << "regenerate the table in docs/metrics.md with `harness metrics --markdown`";
}

TEST(MetricTable, EveryMetricHasOneRowInBothForms)
{
    const std::string markdown = metric_table_markdown(), text = metric_table_text();
    for (const auto& m : metric_table()) {
        const std::string name(m.name);
        EXPECT_NE(markdown.find("| `" + name + "` |"), std::string::npos) << name;
        EXPECT_NE(text.find("\n" + name + " "), std::string::npos) << name;
        // Every CUPTI counter needs a rollup suffix, or CUPTI rejects the whole configuration.
        if (m.collector == Collector::range_profiler) {
            const std::string source(m.source);
            EXPECT_TRUE(source.ends_with(".sum") || source.ends_with(".avg.pct_of_peak_sustained_active")) << source;
        }
    }
    EXPECT_NE(text.find("achieved_occupancy             fraction         noisy  higher is better  abs 0.15"),
              std::string::npos)
        << text;
}

// Code names metrics through harness::metric: every constant is a row of the table, in table order,
// and every row has its constant.
TEST(MetricTable, EveryRowHasANameConstantAndEveryConstantARow)
{
    const auto table = metric_table();
    ASSERT_EQ(std::size(metric::all), table.size());
    for (std::size_t i = 0; i < table.size(); ++i) {
        EXPECT_EQ(table[i].name, metric::all[i]);
        EXPECT_TRUE(find_metric(metric::all[i])) << metric::all[i];
    }
    EXPECT_STREQ(metric::theoretical_occupancy, "theoretical_occupancy");
}

namespace {

std::vector<std::string> names_where(bool (*keep)(const MetricInfo&))
{
    std::vector<std::string> names;
    for (const auto& m : metric_table())
        if (keep(m)) names.emplace_back(m.name);
    return names;
}

std::vector<std::string> labels_of(ReportPlace MetricRoles::*place)
{
    std::vector<std::string> labels;
    for (const auto& m : report_metrics(place)) labels.emplace_back((m.roles.*place).label);
    return labels;
}

} // namespace

// A regression is explained by the source lines of one of the four metrics profile/hotspots.cxx
// ranks lines by; each family explains itself, and its access kinds are the ones those lines carry.
TEST(MetricTable, EveryHotspotFamilyIsARankedMetricOfItsOwnFamily)
{
    const std::map<std::string, std::set<std::string>> accesses = {
        {"excess_global_sectors", {"", "global load", "global store"}},
        {"excess_shared_wavefronts", {"", "shared load", "shared store"}},
        {"local_sectors", {"local"}},
        {"divergent_branch_targets", {"branch"}},
        // Predicted figures are explained by the predicted accesses of their kind (compare_run.cxx).
        {"predicted_excess_global_sectors", {"", "global load", "global store"}},
        {"predicted_excess_shared_wavefronts", {""}},
    };
    for (const auto& m : metric_table()) {
        const HotspotFamily& family = m.roles.hotspot;
        if (family.metric.empty()) {
            EXPECT_TRUE(family.access.empty()) << m.name;
            continue;
        }
        const auto ranked = accesses.find(std::string(family.metric));
        ASSERT_NE(ranked, accesses.end()) << m.name << " names " << family.metric;
        EXPECT_TRUE(ranked->second.contains(std::string(family.access))) << m.name << ": " << family.access;
        const auto row = find_metric(family.metric);
        ASSERT_TRUE(row) << family.metric;
        EXPECT_EQ(row->roles.hotspot.metric, family.metric) << family.metric << " does not explain itself";
        EXPECT_TRUE(row->collector == Collector::sass_metrics || row->collector == Collector::derived ||
                    row->collector == Collector::access_model)
            << row->name;
        // A measured figure is never explained by a prediction, nor a prediction by a measurement.
        EXPECT_EQ(m.collector == Collector::access_model, row->collector == Collector::access_model) << m.name;
    }
    // What the names once decided: a load figure prefers load lines, spills and local memory are
    // explained by local-memory lines, and raw requests or the hardware's own counters by none.
    EXPECT_EQ(find_metric(metric::global_ld_sectors_per_request)->roles.hotspot.access, "global load");
    EXPECT_EQ(find_metric(metric::global_st_sectors)->roles.hotspot.access, "global store");
    EXPECT_EQ(find_metric(metric::shared_ld_wavefronts)->roles.hotspot.access, "shared load");
    EXPECT_EQ(find_metric(metric::spill_store_bytes)->roles.hotspot.metric, metric::local_sectors);
    EXPECT_EQ(find_metric(metric::local_bytes)->roles.hotspot.metric, metric::local_sectors);
    EXPECT_TRUE(find_metric(metric::global_ld_requests)->roles.hotspot.metric.empty());
    EXPECT_TRUE(find_metric(metric::shared_bank_conflicts_raw)->roles.hotspot.metric.empty());
}

// Every predicted figure says so: its own name, its unit and its description; it is exact and
// gated where its measured twin is.
TEST(MetricTable, PredictedFiguresAreNamedAsPredictions)
{
    std::size_t predicted = 0;
    for (const auto& m : metric_table()) {
        const std::string name(m.name);
        EXPECT_EQ(m.collector == Collector::access_model, name.starts_with("predicted_")) << name;
        if (m.collector != Collector::access_model) continue;
        ++predicted;
        EXPECT_TRUE(is_predicted(name)) << name;
        EXPECT_TRUE(is_predicted(launch_metric_name(name, "rstd_kernel"))) << name;
        EXPECT_NE(std::string(m.unit).find("(predicted)"), std::string::npos) << name;
        EXPECT_TRUE(std::string(m.description).starts_with("predicted, not measured")) << name;
        EXPECT_EQ(m.stability, Stability::exact) << name;
        const auto measured = find_metric(name.substr(std::string("predicted_").size()));
        ASSERT_TRUE(measured) << name;
        EXPECT_EQ(m.default_rule, measured->default_rule) << name;
        EXPECT_EQ(m.direction, measured->direction) << name;
    }
    EXPECT_EQ(predicted, 12u);
    EXPECT_FALSE(is_predicted(metric::excess_global_sectors));
}

// Occupancy cliffs are described for the calculator's inputs and for the occupancy itself: static
// resources, exact figures.
TEST(MetricTable, OccupancyRolesAreTheCalculatorsInputsAndResults)
{
    EXPECT_EQ(names_where([](const MetricInfo& m) { return m.roles.occupancy == OccupancyRole::limits; }),
              (std::vector<std::string>{"registers", "static_shared_bytes", "dynamic_shared_bytes", "barriers"}));
    EXPECT_EQ(names_where([](const MetricInfo& m) { return m.roles.occupancy == OccupancyRole::measures; }),
              (std::vector<std::string>{"blocks_per_sm", "theoretical_occupancy"}));
    for (const auto& m : metric_table())
        if (m.roles.occupancy != OccupancyRole::none) {
            EXPECT_EQ(m.collector, Collector::resources) << m.name;
            EXPECT_EQ(m.stability, Stability::exact) << m.name;
        }
}

// Measured again in another process when it regresses: the range profiler's noisy counters and
// what is derived from them alone, for a variant's figure and a launch's alike.
TEST(MetricTable, NoisyCountersAreTheRangeProfilersAndWhatIsDerivedFromThemAlone)
{
    EXPECT_TRUE(is_noisy_counter(metric::dram_read_bytes));
    EXPECT_TRUE(is_noisy_counter(metric::achieved_occupancy));
    EXPECT_TRUE(is_noisy_counter(metric::dram_bytes));
    EXPECT_TRUE(is_noisy_counter(launch_metric_name(metric::dram_write_bytes, "rstd_kernel")));
    EXPECT_FALSE(is_noisy_counter(metric::global_ld_sectors));    // exact
    EXPECT_FALSE(is_noisy_counter(metric::arithmetic_intensity)); // flops are exact, not counted noise
    EXPECT_FALSE(is_noisy_counter(metric::time_median));
    EXPECT_FALSE(is_noisy_counter("no_such_metric"));
    for (const auto& m : metric_table())
        if (m.roles.from_noisy_counters) {
            EXPECT_EQ(m.collector, Collector::derived) << m.name;
            EXPECT_EQ(m.stability, Stability::noisy) << m.name;
        }
}

// Each report's figures are numbered once, label a metric of the table, and add only a companion
// that is a row of the table in the same unit.
TEST(MetricTable, ReportColumnsAreNumberedOnceAndTheirCompanionsExist)
{
    for (const auto place : {&MetricRoles::html, &MetricRoles::console}) {
        const auto shown = report_metrics(place);
        ASSERT_FALSE(shown.empty());
        for (std::size_t i = 0; i < shown.size(); ++i) {
            const ReportPlace& at = shown[i].roles.*place;
            EXPECT_EQ(at.order, static_cast<int>(i) + 1) << shown[i].name;
            EXPECT_FALSE(at.label.empty()) << shown[i].name;
            if (!at.with_companion) continue;
            const auto companion = find_metric(shown[i].roles.companion);
            ASSERT_TRUE(companion) << shown[i].name << " adds " << shown[i].roles.companion;
            EXPECT_EQ(companion->unit, shown[i].unit) << shown[i].name;
        }
    }
    for (const auto& m : metric_table()) {
        EXPECT_EQ(m.roles.html.order == 0, m.roles.html.label.empty()) << m.name;
        EXPECT_EQ(m.roles.console.order == 0, m.roles.console.label.empty()) << m.name;
        // A console part's label is the format of its number.
        if (m.roles.console.order > 0) {
            EXPECT_NO_THROW((void)fmt::format(fmt::runtime(m.roles.console.label), 1.0)) << m.name;
        }
    }
    EXPECT_EQ(labels_of(&MetricRoles::html),
              (std::vector<std::string>{"median", "noise", "throughput", "bandwidth", "registers", "shared", "local",
                                        "spill", "resident", "theoretical occ.", "achieved occ."}));
    // What the HTML table once decided by name: shared memory is static plus dynamic, spills and
    // local memory show only where they occur.
    const auto shared = find_metric(metric::static_shared_bytes);
    EXPECT_EQ(shared->roles.companion, metric::dynamic_shared_bytes);
    EXPECT_TRUE(shared->roles.html.with_companion);
    EXPECT_TRUE(find_metric(metric::local_bytes)->roles.html.only_when_nonzero);
    EXPECT_TRUE(find_metric(metric::spill_store_bytes)->roles.html.only_when_nonzero);
}

// The HTML table of cases has the table's columns in its order, only those some case has a figure
// for (spills only where nonzero), shared memory as static plus dynamic.
TEST(MetricTable, HtmlCasesTableTakesItsColumnsFromTheTable)
{
    RunReport report;
    report.suite = "columns";
    CaseResult first, second;
    first.variant = "first";
    second.variant = "second";
    first.status = second.status = CaseStatus::passed;
    first.set_metric(metric::time_median, 10);
    first.set_metric(metric::registers, 32);
    first.set_metric(metric::static_shared_bytes, 1024);
    first.set_metric(metric::dynamic_shared_bytes, 512);
    first.set_metric(metric::local_bytes, 0);
    first.set_metric(metric::spill_store_bytes, 0);
    first.set_metric(metric::theoretical_occupancy, 0.5);
    second.set_metric(metric::time_median, 20);
    second.set_metric(metric::local_bytes, 0);
    second.set_metric(metric::spill_store_bytes, 8);
    second.set_metric(metric::blocks_per_sm, 4);
    report.results = {first, second};
    const std::string html = report::html_report(report);
    const auto from = html.find("<table class=\"sortable cases\">");
    ASSERT_NE(from, std::string::npos);
    const std::string head = html.substr(from, html.find("</thead>", from) - from);
    std::vector<std::string> headings;
    const std::regex heading("<th>([^<]+)<span class=\"unit\">");
    for (auto it = std::sregex_iterator(head.begin(), head.end(), heading); it != std::sregex_iterator(); ++it)
        headings.push_back((*it)[1]);
    EXPECT_EQ(headings,
              (std::vector<std::string>{"median", "registers", "shared", "spill", "resident", "theoretical occ."}));
    EXPECT_NE(html.find(">" + report::format_in_unit(1536, "B") + "<", from), std::string::npos) << head;
}

// Each launch of a case of several has one console line with the table's parts in their order:
// spills as stores plus loads, shared memory as static plus dynamic, occupancy in percent.
TEST(MetricTable, ConsoleLaunchLinesTakeTheirPartsFromTheTable)
{
    RunReport report;
    report.suite = "parts";
    CaseResult r;
    r.variant = "layernorm";
    r.params_text = "N=1024";
    r.status = CaseStatus::passed;
    r.launches = {{"mean", "row_mean", "", {}}, {"rstd", "row_rstd", "", {}}, {"scale", "normalize", "", {}}};
    const auto set = [&](const char* m, const char* label, double v) { r.set_metric(launch_metric_name(m, label), v); };
    set(metric::time_median, "mean", 12.5);
    set(metric::registers, "mean", 32);
    set(metric::spill_store_bytes, "mean", 8);
    set(metric::spill_load_bytes, "mean", 4);
    set(metric::static_shared_bytes, "mean", 1024);
    set(metric::dynamic_shared_bytes, "mean", 512);
    set(metric::theoretical_occupancy, "mean", 0.5);
    set(metric::global_ld_sectors, "mean", 100);
    set(metric::dram_bytes, "mean", 2048);
    // Loads without stores, dynamic without static shared memory: the parts need the first.
    set(metric::registers, "rstd", 16);
    set(metric::spill_load_bytes, "rstd", 4);
    set(metric::dynamic_shared_bytes, "rstd", 256);
    report.results = {r};
    std::ostringstream out;
    report::write_console_table(report, out);
    const std::string text = out.str();
    EXPECT_NE(
        text.find("\n    1. mean: 12.50 us, 32 regs, spill 12, smem 1536, occ 50%, ld sectors 100, DRAM 2048 B\n"),
        std::string::npos)
        << text;
    EXPECT_NE(text.find("\n    2. rstd: 16 regs\n"), std::string::npos) << text;
    EXPECT_NE(text.find("\n    3. scale: -\n"), std::string::npos) << text;
}

} // namespace metric_table_test
