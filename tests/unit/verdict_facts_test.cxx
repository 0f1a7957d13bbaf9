// Verdicts, launches and cliff maps carry their facts as fields, which results.json keeps and the
// reports read: a verdict's tolerance band and why it was not compared, a launch that repeats a
// kernel, a map's other parameters, the NVRTC status of a failed compile. Files of schema 3 and
// older, which kept them only as text, are read with the facts taken from that text once.

#include "harness/compare/rules.hxx"
#include "harness/compile/compile_error.hxx"
#include "harness/compile/nvrtc_compiler.hxx"
#include "harness/core/metrics.hxx"
#include "harness/core/older_results.hxx"
#include "harness/core/run_report.hxx"
#include "harness/report/html_parts.hxx"
#include "harness/report/reporters.hxx"
#include "harness/suite/compile_params.hxx"
#include "harness/suite/sweep.hxx"
#include "test_files.hxx"

#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <nvrtc.h>
#include <sstream>

namespace verdict_facts_test {

using namespace harness;
namespace fs = std::filesystem;

namespace {

using Kind = ToleranceBand::Kind;

MetricInfo info_of(const char* name)
{
    return *find_metric(name);
}

/// A run of one passed case holding `verdicts`, with a launch labelled as older versions labelled
/// a repeated kernel, and one cliff map.
RunReport run_with(std::vector<MetricVerdict> verdicts)
{
    CaseResult r;
    r.suite = "facts";
    r.variant = "tiled";
    r.params_text = "K=64 N=128";
    r.params = {{"K", 64}, {"N", 128}};
    r.arch = "sm_90";
    r.status = CaseStatus::passed;
    r.set_metric(metric::registers, 40);
    r.launches = {{"copy#1", "copy", "k.cu", std::nullopt, true},
                  {"copy#2", "copy", "k.cu", std::nullopt, true},
                  {"fold", "fold", "k.cu", std::nullopt, false}};
    r.verdicts = std::move(verdicts);
    CliffMap m;
    m.variant = "tiled";
    m.axis = "N";
    m.others = "K=64";
    m.other_params = {{"K", 64}};
    m.arch = "sm_90";
    m.figure = "theoretical_occupancy";
    m.unit = "fraction";
    m.x = {127, 128};
    m.values = {1, 1};
    RunReport report;
    report.suite = "facts";
    report.mode = RunMode::static_tier;
    report.arch = "sm_90";
    report.results = {r};
    report.cliff_maps = {m};
    return report;
}

MetricVerdict verdict(const char* metric, Verdict kind, std::string rule, std::string message = "")
{
    MetricVerdict v;
    v.metric = metric;
    v.verdict = kind;
    v.rule = std::move(rule);
    v.message = std::move(message);
    v.baseline = 100;
    v.value = 104;
    return v;
}

RunReport read_back(const std::string& json)
{
    const TempDir dir;
    write_file(dir.path / "results.json", json);
    return read_results_json(dir.path / "results.json");
}

} // namespace

TEST(VerdictFacts, AVerdictKeepsItsRulesBandAsTheRuleSyntaxReadsIt)
{
    EXPECT_EQ(tolerance_band(parse_rule("rel 5% min 1048576")), (ToleranceBand{Kind::relative, 5}));
    EXPECT_EQ(tolerance_band(parse_rule("samples 2% min 0.5")), (ToleranceBand{Kind::relative, 2}));
    EXPECT_EQ(tolerance_band(parse_rule("abs 0.15")), (ToleranceBand{Kind::absolute, 0.15}));
    EXPECT_EQ(tolerance_band(parse_rule("exact")), (ToleranceBand{Kind::relative, 0}));
    EXPECT_FALSE(tolerance_band(parse_rule("report")));
    EXPECT_FALSE(tolerance_band(parse_rule("ignore")));
    // The percentage as written, the fraction the judge compares with: 7 %, not 7.000000000000001.
    EXPECT_EQ(parse_rule("rel 7%").percent, 7.0);
    EXPECT_EQ(parse_rule("rel 7%").tolerance, 0.07);

    const auto judged = compare::judge_value(info_of(metric::dram_bytes), parse_rule("rel 5%"), 100, 104);
    EXPECT_EQ(judged.tolerance, (ToleranceBand{Kind::relative, 5}));
    const auto occupancy = compare::judge_value(info_of(metric::achieved_occupancy), parse_rule("abs 0.15"), 0.5, 0.4);
    EXPECT_EQ(occupancy.tolerance, (ToleranceBand{Kind::absolute, 0.15}));
    const std::vector<double> samples = {1.0, 1.01, 0.99, 1.0, 1.02, 0.98};
    const auto timed =
        compare::judge_samples(info_of(metric::time_median), parse_rule("samples 2% min 0.5"), samples, samples);
    EXPECT_EQ(timed.tolerance, (ToleranceBand{Kind::relative, 2}));
    EXPECT_NE(timed.rule.find("(p"), std::string::npos) << "the rule's text carries the p-value: " << timed.rule;
    EXPECT_FALSE(compare::judge_value(info_of(metric::registers), parse_rule("report"), 32, 40).tolerance);
}

// The chart's band comes from the field, whatever the rule's text says.
TEST(VerdictFacts, TheReportsReadTheBandAndTheReasonFromTheirFields)
{
    MetricVerdict v = verdict(metric::dram_bytes, Verdict::passed, "rel 50%");
    v.tolerance = ToleranceBand{Kind::relative, 5};
    EXPECT_EQ(report::html::tolerance_percent(v), 5.0);
    v.tolerance = ToleranceBand{Kind::absolute, 2};
    EXPECT_EQ(report::html::tolerance_percent(v), 2.0) << "2 of a baseline of 100";
    v.baseline = 0;
    EXPECT_FALSE(report::html::tolerance_percent(v)) << "no percentage of a zero baseline";
    v.tolerance.reset();
    v.baseline = 100;
    EXPECT_FALSE(report::html::tolerance_percent(v));

    // Skipped figures are counted by their reason, not by what follows a ':' in their message.
    MetricVerdict a = verdict(metric::registers, Verdict::skipped, "report", "registers: odd: text");
    a.not_compared = "not predicted: kernel k: a data-dependent address";
    MetricVerdict b = a;
    b.metric = metric::barriers;
    b.message = "no colon here";
    RunReport run = run_with({a, b});
    std::ostringstream out;
    report::write_console_verdicts(run, out);
    EXPECT_NE(out.str().find("  not compared (2x): not predicted: kernel k: a data-dependent address\n"),
              std::string::npos)
        << out.str();
    EXPECT_EQ(out.str().find("odd: text"), std::string::npos) << out.str();
}

TEST(VerdictFacts, ResultsOfSchema4KeepTheFactsAsFields)
{
    MetricVerdict banded = verdict(metric::dram_bytes, Verdict::passed, "rel 50%");
    banded.tolerance = ToleranceBand{Kind::relative, 5};
    MetricVerdict skipped = verdict(metric::registers, Verdict::skipped, "report", "registers: elsewhere: text");
    skipped.not_compared = "not measured in this run";
    const RunReport run = run_with({banded, skipped});
    const std::string json = results_json(run);
    const auto j = nlohmann::json::parse(json);
    EXPECT_EQ(j.at("schema_version"), 4);
    const auto& verdicts = j.at("results")[0].at("verdicts");
    EXPECT_EQ(verdicts[0].at("tolerance"), (nlohmann::json{{"kind", "relative"}, {"amount", 5.0}}));
    EXPECT_FALSE(verdicts[1].contains("tolerance"));
    EXPECT_EQ(verdicts[1].at("not_compared"), "not measured in this run");
    EXPECT_FALSE(verdicts[0].contains("not_compared"));
    EXPECT_EQ(j.at("results")[0].at("launches")[0].at("repeated"), true);
    EXPECT_FALSE(j.at("results")[0].at("launches")[2].contains("repeated"));
    EXPECT_EQ(j.at("cliff_maps")[0].at("other_params"), (nlohmann::json{{"K", 64}}));

    // Read back, the fields stand: not the rule's 50 %, not the message's text.
    const RunReport back = read_back(json);
    const auto& r = back.results.front();
    EXPECT_EQ(r.verdicts[0].tolerance, (ToleranceBand{Kind::relative, 5}));
    EXPECT_EQ(r.verdicts[1].not_compared, "not measured in this run");
    EXPECT_TRUE(r.launches[0].repeated);
    EXPECT_FALSE(r.launches[2].repeated);
    EXPECT_EQ(back.cliff_maps.front().other_params, (std::map<std::string, std::int64_t>{{"K", 64}}));

    // A band of a kind no version writes is bad input, naming it.
    auto odd = j;
    odd["results"][0]["verdicts"][0]["tolerance"]["kind"] = "sideways";
    try {
        read_back(odd.dump());
        ADD_FAILURE() << "read a band of an unknown kind";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::bad_input);
        EXPECT_NE(std::string(e.what()).find("unknown tolerance kind 'sideways'"), std::string::npos) << e.what();
    }
}

TEST(VerdictFacts, ResultsOfSchema3AreReadWithTheirFactsTakenFromTheirText)
{
    EXPECT_EQ(tolerance_of_older_rule("samples 5% (p = 0.41)"), (ToleranceBand{Kind::relative, 5}));
    EXPECT_EQ(tolerance_of_older_rule("samples 2% min 0.5 (p < 0.001)"), (ToleranceBand{Kind::relative, 2}));
    EXPECT_EQ(tolerance_of_older_rule("exact (--strict)"), (ToleranceBand{Kind::relative, 0}));
    EXPECT_EQ(tolerance_of_older_rule("abs 0.05"), (ToleranceBand{Kind::absolute, 0.05}));
    for (const char* none : {"report", "expect <= 64", "cliffs (min_depth 0.05)", "measured", "sass", ""})
        EXPECT_FALSE(tolerance_of_older_rule(none)) << none;
    EXPECT_EQ(not_compared_of_older_message("registers: not predicted: kernel k: why"), "not predicted: kernel k: why");
    EXPECT_EQ(not_compared_of_older_message("time_median is noisy"), "time_median is noisy");
    EXPECT_EQ(other_params_of_older_text("K=64 M=-3 odd =1 N=x"),
              (std::map<std::string, std::int64_t>{{"K", 64}, {"M", -3}}));

    // A file of version 3, as that version wrote it: no band, no reason, no repeat, no other_params.
    MetricVerdict banded = verdict(metric::time_median, Verdict::passed, "samples 5% (p = 0.41)");
    MetricVerdict skipped = verdict(metric::registers, Verdict::skipped, "report", "registers: not predicted: why");
    RunReport run = run_with({banded, skipped});
    for (auto& l : run.results.front().launches) l.repeated = false;
    run.cliff_maps.front().other_params.clear();
    auto j = nlohmann::json::parse(results_json(run));
    j["schema_version"] = 3;
    const RunReport back = read_back(j.dump());
    const auto& r = back.results.front();
    EXPECT_EQ(r.verdicts[0].tolerance, (ToleranceBand{Kind::relative, 5}));
    EXPECT_EQ(r.verdicts[1].not_compared, "not predicted: why");
    EXPECT_TRUE(r.launches[0].repeated);
    EXPECT_TRUE(r.launches[1].repeated);
    EXPECT_FALSE(r.launches[2].repeated);
    EXPECT_EQ(back.cliff_maps.front().other_params, (std::map<std::string, std::int64_t>{{"K", 64}}));

    // The same text in a file of version 4 is only text.
    j["schema_version"] = 4;
    const RunReport current = read_back(j.dump());
    EXPECT_FALSE(current.results.front().verdicts[0].tolerance);
    EXPECT_TRUE(current.results.front().verdicts[1].not_compared.empty());
    EXPECT_FALSE(current.results.front().launches[0].repeated);
}

TEST(VerdictFacts, ALaunchOfARepeatedKernelAndAMapsPointsAreFieldsOfTheirOwn)
{
    suite::Suite s;
    s.project_root = "/project";
    s.params = {{"K", {64}}, {"N", {127, 128}}};
    suite::VariantSpec v;
    v.name = "twice";
    v.source = "/project/kernels/passes.cu";
    for (const char* entry : {"stage", "fold", "stage"}) {
        suite::LaunchSpec l;
        l.entry = entry;
        v.launches.push_back(l);
    }
    const suite::Bindings point{{"K", 64}, {"N", 128}};
    const auto launches = suite::case_launches(s, v, point);
    ASSERT_EQ(launches.size(), 3u);
    EXPECT_EQ(launches[0].label, "stage#1");
    EXPECT_TRUE(launches[0].repeated);
    EXPECT_EQ(launches[1].label, "fold");
    EXPECT_FALSE(launches[1].repeated);
    EXPECT_TRUE(launches[2].repeated);

    const auto others = suite::other_params(point, "N");
    EXPECT_EQ(others, (std::map<std::string, std::int64_t>{{"K", 64}}));
    EXPECT_EQ(suite::others_text(s, point, "N"), "K=64");
    EXPECT_EQ(suite::point_text(s, "N", 127, others), "K=64 N=127");
}

TEST(VerdictFacts, AFailedCompileCarriesNvrtcsStatus)
{
    const TempDir scratch{"harness-test"};
    std::ofstream(scratch.path / "bad.cu") << "extern \"C\" __global__ void k(float* p)\n{\n    p[0] = missing;\n}\n";
    compile::CompileRequest r;
    r.source = scratch.path / "bad.cu";
    r.arch = "sm_90";
    r.entries = {"k"};
    try {
        compile::compile(r);
        ADD_FAILURE() << "compiled";
    } catch (const compile::CompileError& e) {
        EXPECT_EQ(e.nvrtc_status(), NVRTC_ERROR_COMPILATION);
        EXPECT_EQ(e.kind(), ErrorKind::bad_input);
    }
}

} // namespace verdict_facts_test
