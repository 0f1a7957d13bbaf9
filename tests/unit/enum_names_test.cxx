// The data model holds enums; text exists only where files are read and written and where reports
// print. Each enum's names round-trip, files keep the text they always had, and a verdict says
// where it came from without its rule's text being read back.

#include "harness/core/case_result.hxx"
#include "harness/core/enum_names.hxx"
#include "harness/core/error.hxx"
#include "harness/core/run_report.hxx"
#include "harness/history/run_record.hxx"
#include "harness/pipeline/bisect.hxx"
#include "harness/report/html_parts.hxx"
#include "harness/report/reporters.hxx"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace enum_names_test {

using namespace harness;

namespace {

enum class Colour { red, green, blue };
constexpr EnumName<Colour> colour_names[] = {{Colour::red, "red"}, {Colour::green, "green"}};

/// A report of one case with one verdict, for the report writers.
RunReport report_with(const MetricVerdict& verdict)
{
    RunReport rep;
    rep.suite = "gemm";
    CaseResult r;
    r.suite = "gemm";
    r.variant = "tiled";
    r.params_text = "N=1024";
    r.arch = "sm_90";
    r.status = CaseStatus::passed;
    r.set_metric(verdict.metric, *verdict.value);
    r.verdicts = {verdict};
    rep.results = {r};
    return rep;
}

} // namespace

TEST(EnumNames, TableLooksUpBothWaysAndFallsBackForWhatItLacks)
{
    EXPECT_STREQ(enum_name(colour_names, Colour::green), "green");
    EXPECT_STREQ(enum_name(colour_names, Colour::blue), "?");
    EXPECT_STREQ(enum_name(colour_names, Colour::blue, "none"), "none");
    EXPECT_EQ(enum_from_name(colour_names, "red"), Colour::red);
    EXPECT_EQ(enum_from_name(colour_names, "blue"), std::nullopt);
    EXPECT_EQ(enum_from_name(colour_names, ""), std::nullopt);
    static_assert(enum_from_name(colour_names, "green") == Colour::green, "usable at compile time");
}

TEST(EnumNames, CaseStatusesAndVerdictsRoundTripUnderDistinctNames)
{
    std::set<std::string> names;
    for (const auto s : {CaseStatus::passed, CaseStatus::failed_verification, CaseStatus::compile_error,
                         CaseStatus::launch_error, CaseStatus::fault, CaseStatus::timeout, CaseStatus::skipped}) {
        EXPECT_EQ(case_status_from_name(case_status_name(s)), s) << case_status_name(s);
        names.insert(case_status_name(s));
    }
    EXPECT_EQ(names.size(), 7u);
    EXPECT_STREQ(case_status_name(CaseStatus::failed_verification), "failed_verification");
    names.clear();
    for (const auto v :
         {Verdict::passed, Verdict::regressed, Verdict::improved, Verdict::waived, Verdict::expect_failed,
          Verdict::no_baseline, Verdict::skipped, Verdict::drifted, Verdict::not_gated, Verdict::not_measured}) {
        EXPECT_EQ(verdict_from_name(verdict_name(v)), v) << verdict_name(v);
        names.insert(verdict_name(v));
        EXPECT_STRNE(report::html::verdict_label(v), "?") << verdict_name(v);
    }
    EXPECT_EQ(names.size(), 10u);
    EXPECT_STREQ(verdict_name(Verdict::not_measured), "not_measured");
    EXPECT_STREQ(report::html::verdict_label(Verdict::skipped), "not compared");

    try {
        case_status_from_name("failed");
        FAIL() << "an unknown status was read";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::bad_input);
        EXPECT_NE(std::string(e.what()).find("unknown case status 'failed'"), std::string::npos) << e.what();
    }
    EXPECT_THROW(verdict_from_name("Passed"), Error);
}

TEST(EnumNames, RunModesAreWrittenGpuAndStatic)
{
    EXPECT_STREQ(mode_name(RunMode::gpu), "gpu");
    EXPECT_STREQ(mode_name(RunMode::static_tier), "static");
    EXPECT_EQ(mode_from_name("gpu"), RunMode::gpu);
    EXPECT_EQ(mode_from_name("static"), RunMode::static_tier);
    EXPECT_EQ(mode_from_name("static_tier"), std::nullopt);
}

TEST(EnumNames, OccupancyLimitersKeepTheirTextInResultsFiles)
{
    for (const auto l : {OccupancyLimiter::warps, OccupancyLimiter::registers, OccupancyLimiter::shared_memory,
                         OccupancyLimiter::blocks, OccupancyLimiter::barriers})
        EXPECT_EQ(occupancy_limiter_from_name(occupancy_limiter_name(l)), l) << occupancy_limiter_name(l);
    EXPECT_STREQ(occupancy_limiter_name(OccupancyLimiter::shared_memory), "shared memory");
    EXPECT_EQ(occupancy_limiter_text(std::nullopt), "");
    EXPECT_THROW(occupancy_limiter_from_name("shared_memory"), Error);

    CaseResult r;
    r.suite = "gemm";
    r.variant = "tiled";
    r.params_text = "N=1024";
    r.status = CaseStatus::passed;
    r.occupancy_limiter = OccupancyLimiter::shared_memory;
    r.launches = {{"first", "first", "k.cu", OccupancyLimiter::registers}, {"second", "second", "k.cu", std::nullopt}};
    const nlohmann::json j = r;
    EXPECT_EQ(j.at("occupancy_limiter"), "shared memory");
    EXPECT_EQ(j.at("launches")[0].at("occupancy_limiter"), "registers");
    EXPECT_FALSE(j.at("launches")[1].contains("occupancy_limiter"));
    const auto back = j.get<CaseResult>();
    EXPECT_EQ(back.occupancy_limiter, OccupancyLimiter::shared_memory);
    EXPECT_EQ(back.launches[0].occupancy_limiter, OccupancyLimiter::registers);
    EXPECT_EQ(back.launches[1].occupancy_limiter, std::nullopt);

    // Unknown where nothing said it: written as "" as before, read back as unknown.
    r.occupancy_limiter.reset();
    const nlohmann::json unknown = r;
    EXPECT_EQ(unknown.at("occupancy_limiter"), "");
    EXPECT_EQ(unknown.get<CaseResult>().occupancy_limiter, std::nullopt);

    nlohmann::json odd = j;
    odd["occupancy_limiter"] = "smem";
    EXPECT_THROW(odd.get<CaseResult>(), Error);
}

TEST(EnumNames, TheOccupancyChartShortensSharedMemory)
{
    RunReport rep;
    CaseResult r;
    r.variant = "tiled";
    r.params_text = "N=1024";
    r.arch = "sm_90";
    r.status = CaseStatus::passed;
    r.set_metric("theoretical_occupancy", 0.5);
    r.occupancy_limiter = OccupancyLimiter::shared_memory;
    rep.results = {r};
    const std::string html = report::html::occupancy_section(rep);
    EXPECT_NE(html.find(">smem<"), std::string::npos) << html;
    EXPECT_NE(html.find("limited by shared memory"), std::string::npos) << html;
}

TEST(EnumNames, AVerdictsSourceIsReadFromItsRuleOnlyWhenAResultsFileIsRead)
{
    EXPECT_EQ(verdict_source_of_rule("expect <= 64"), VerdictSource::expectation);
    EXPECT_EQ(verdict_source_of_rule("expect cliff_count == 1 on exact maps"), VerdictSource::expectation);
    EXPECT_EQ(verdict_source_of_rule("report"), VerdictSource::drift);
    EXPECT_EQ(verdict_source_of_rule("exact (--strict)"), VerdictSource::baseline);
    EXPECT_EQ(verdict_source_of_rule("rel 5%"), VerdictSource::baseline);
    EXPECT_EQ(verdict_source_of_rule("measured"), VerdictSource::baseline);

    MetricVerdict v;
    v.metric = "registers";
    v.rule = "expect <= 64";
    v.value = 40;
    const nlohmann::json j = v;
    EXPECT_FALSE(j.contains("source")) << "results.json keeps the rule's text only";
    EXPECT_EQ(j.get<MetricVerdict>().source, VerdictSource::expectation);
    v.rule = "report";
    EXPECT_EQ(nlohmann::json(v).get<MetricVerdict>().source, VerdictSource::drift);
    v.rule = "exact";
    EXPECT_EQ(nlohmann::json(v).get<MetricVerdict>().source, VerdictSource::baseline);
}

TEST(EnumNames, ReportsCountAndShowAVerdictByItsSourceNotItsText)
{
    // A verdict made by an expectation whose rule text reads like a baseline rule: the source decides.
    MetricVerdict v;
    v.metric = "registers";
    v.verdict = Verdict::passed;
    v.rule = "exact";
    v.baseline = 32;
    v.value = 40;
    v.source = VerdictSource::expectation;
    const RunReport expected = report_with(v);
    GateCounts counts = gate_counts(expected);
    EXPECT_EQ(counts.expected, 1u);
    EXPECT_EQ(counts.compared, 0u);
    const std::string csv = report::results_csv(expected);
    EXPECT_NE(csv.find("\"registers\",\"40\",\"regs/thread\",\"passed\",\"\",\"\""), std::string::npos)
        << "an expectation has no baseline column: " << csv;
    EXPECT_EQ(report::markdown_summary(expected).find("### Figures against the baseline"), std::string::npos);

    v.source = VerdictSource::drift;
    counts = gate_counts(report_with(v));
    EXPECT_EQ(counts.reported, 1u);
    EXPECT_EQ(counts.compared, 0u);

    v.source = VerdictSource::baseline;
    v.rule = "expect <= 64";
    const RunReport compared = report_with(v);
    counts = gate_counts(compared);
    EXPECT_EQ(counts.compared, 1u);
    EXPECT_EQ(counts.expected, 0u);
    EXPECT_NE(report::results_csv(compared).find("\"passed\",\"32\",\"8\""), std::string::npos)
        << report::results_csv(compared);
    EXPECT_NE(report::markdown_summary(compared).find("### Figures against the baseline"), std::string::npos);
}

TEST(EnumNames, HistoryRunFilesKeepStatusAndModeAsText)
{
    history::RunRecord r;
    r.suite = "gemm";
    r.commit = "0123456789ab";
    r.commit_date = r.timestamp = "2026-01-01T00:00:00Z";
    r.mode = RunMode::static_tier;
    history::CaseFigures passed;
    passed.variant = "tiled";
    passed.params = "N=1024";
    passed.arch = "sm_90";
    passed.status = CaseStatus::passed;
    passed.figures = {{"registers", 40.0}};
    history::CaseFigures failed = passed;
    failed.status = CaseStatus::compile_error;
    failed.figures.clear();
    r.cases = {passed, failed};
    const std::string text = history::run_file_text(r);
    EXPECT_NE(text.find("\"mode\":\"static\""), std::string::npos) << text;
    EXPECT_NE(text.find("\"compile_error\""), std::string::npos) << text;
    const auto back = history::parse_run_file(text, "run.json");
    EXPECT_EQ(back.mode, RunMode::static_tier);
    ASSERT_EQ(back.cases.size(), 2u);
    EXPECT_EQ(back.cases[0].status, CaseStatus::passed);
    EXPECT_EQ(back.cases[1].status, CaseStatus::compile_error);

    const auto error_of = [](const std::string& bad) -> std::string {
        try {
            history::parse_run_file(bad, "runs/gemm/x.json");
        } catch (const Error& e) {
            return e.what();
        }
        return "";
    };
    std::string odd_status = text;
    odd_status.replace(odd_status.find("\"compile_error\""), 15, "\"broken\"");
    EXPECT_NE(error_of(odd_status).find("runs/gemm/x.json: a case of tiled: unknown case status 'broken'"),
              std::string::npos)
        << error_of(odd_status);
    std::string odd_mode = text;
    odd_mode.replace(odd_mode.find("\"static\""), 8, "\"cpu\"");
    EXPECT_NE(error_of(odd_mode).find("runs/gemm/x.json: mode 'cpu' is neither 'gpu' nor 'static'"), std::string::npos)
        << error_of(odd_mode);
}

TEST(EnumNames, BisectStepsAreWrittenByRoleAndVerdict)
{
    using pipeline::BisectStep;
    using pipeline::Probe;
    using pipeline::StepRole;
    EXPECT_STREQ(pipeline::step_role_name(StepRole::good), "good");
    EXPECT_STREQ(pipeline::step_role_name(StepRole::bad), "bad");
    EXPECT_STREQ(pipeline::step_role_name(StepRole::step), "step");
    const auto text = [](StepRole role, Probe verdict) {
        BisectStep s;
        s.role = role;
        s.verdict = verdict;
        return std::string(pipeline::step_verdict_text(s));
    };
    EXPECT_EQ(text(StepRole::good, Probe::same), "good");
    EXPECT_EQ(text(StepRole::bad, Probe::same), "same as good");
    EXPECT_EQ(text(StepRole::bad, Probe::different), "bad");
    EXPECT_EQ(text(StepRole::bad, Probe::skipped), "skipped");
    EXPECT_EQ(text(StepRole::step, Probe::same), "same");
    EXPECT_EQ(text(StepRole::step, Probe::different), "different");
    EXPECT_EQ(text(StepRole::step, Probe::skipped), "skipped");

    pipeline::BisectResult result;
    result.mode = RunMode::gpu;
    result.outcome = pipeline::BisectOutcome::range;
    BisectStep step;
    step.commit = "abc";
    step.role = StepRole::bad;
    step.verdict = Probe::different;
    result.steps = {step};
    const auto j = pipeline::bisect_json(result);
    EXPECT_EQ(j.at("mode"), "gpu");
    EXPECT_EQ(j.at("outcome"), "range");
    EXPECT_EQ(j.at("steps")[0].at("role"), "bad");
    EXPECT_EQ(j.at("steps")[0].at("verdict"), "bad");
}

} // namespace enum_names_test
