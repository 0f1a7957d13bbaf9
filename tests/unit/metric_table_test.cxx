// The metric table as `harness metrics` prints it, and docs/metrics.md kept equal to it.

#include "harness/core/metrics.hxx"
#include "test_paths.hxx"

#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

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
