#include "harness/cli/commands.hxx"
#include "harness/core/error.hxx"
#include "harness/report/merge.hxx"
#include "harness/report/reporters.hxx"
#include "harness/suite/suite.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <regex>

namespace gating_report_test {

using namespace harness;
namespace fs = std::filesystem;

namespace {

harness::RunReport gated_report()
{
    harness::RunReport rep;
    rep.suite = "gemm";
    rep.mode = RunMode::gpu;
    rep.device_name = "NVIDIA H200";
    rep.arch = "sm_90";
    rep.timestamp = "2025-01-01T00:00:00Z";
    CaseResult ok;
    ok.suite = "gemm";
    ok.variant = "tiled32";
    ok.params_text = "N=1024";
    ok.arch = "sm_90";
    ok.status = CaseStatus::passed;
    ok.set_metric("registers", 40);
    CaseResult regressed = ok;
    regressed.params_text = "N=2048";
    regressed.verdicts = {{"registers",
                           Verdict::regressed,
                           32.0,
                           40.0,
                           "exact",
                           std::nullopt,
                           "registers 32 -> 40 <cliff> & \"more\" | pipes",
                           "k.cu:3",
                           "",
                           false,
                           {}}};
    CaseResult fault = ok;
    fault.variant = "broken";
    fault.status = CaseStatus::fault;
    fault.message = "illegal address\x01 at <0x10>";
    CaseResult wrong = ok;
    wrong.variant = "wrong";
    wrong.status = CaseStatus::failed_verification;
    wrong.message = "C[3] = 1, expected 2";
    CaseResult skipped = ok;
    skipped.variant = "cublas";
    skipped.status = CaseStatus::skipped;
    skipped.message = "no GPU";
    rep.results = {ok, regressed, fault, wrong, skipped};
    return rep;
}

/// A minimal XML reader: checks that tags nest, attributes are quoted, and every '&' starts an entity;
/// returns the element names in document order.
std::vector<std::string> xml_elements(const std::string& xml)
{
    std::vector<std::string> stack, names;
    const std::regex entity("&(amp|lt|gt|quot|apos|#x[0-9A-Fa-f]+);");
    for (std::size_t i = 0; i < xml.size(); ++i) {
        if (xml[i] == '&') {
            std::smatch m;
            const std::string rest = xml.substr(i, 12);
            if (!std::regex_search(rest, m, entity) || m.position(0) != 0) throw std::runtime_error("bare &");
            continue;
        }
        if (xml[i] != '<') continue;
        const std::size_t end = xml.find('>', i);
        if (end == std::string::npos) throw std::runtime_error("unclosed tag");
        std::string tag = xml.substr(i + 1, end - i - 1);
        i = end;
        if (tag.starts_with("?")) continue;
        if (tag.find('<') != std::string::npos) throw std::runtime_error("'<' inside a tag");
        if (std::count(tag.begin(), tag.end(), '"') % 2) throw std::runtime_error("unbalanced quotes");
        if (tag.starts_with("/")) {
            if (stack.empty() || stack.back() != tag.substr(1)) throw std::runtime_error("mismatched </" + tag);
            stack.pop_back();
            continue;
        }
        const bool empty = tag.ends_with("/");
        const std::string name = tag.substr(0, tag.find_first_of(" /"));
        names.push_back(name);
        if (!empty) stack.push_back(name);
    }
    if (!stack.empty()) throw std::runtime_error("unclosed <" + stack.back());
    return names;
}

std::string read(const fs::path& p)
{
    std::ifstream in(p);
    return {std::istreambuf_iterator<char>(in), {}};
}

} // namespace

TEST(JUnit, StructureTotalsAndEscaping)
{
    const std::string xml = report::junit_xml(gated_report());
    std::vector<std::string> names;
    ASSERT_NO_THROW(names = xml_elements(xml)) << xml;
    EXPECT_EQ(std::count(names.begin(), names.end(), "testcase"), 5);
    EXPECT_EQ(std::count(names.begin(), names.end(), "failure"), 2); // regression + wrong output
    EXPECT_EQ(std::count(names.begin(), names.end(), "error"), 1);
    EXPECT_EQ(std::count(names.begin(), names.end(), "skipped"), 1);
    EXPECT_NE(xml.find("<testsuite name=\"gemm\" tests=\"5\" failures=\"2\" errors=\"1\" skipped=\"1\""),
              std::string::npos);
    EXPECT_NE(xml.find("classname=\"gemm\" name=\"tiled32 N=2048\""), std::string::npos);
    EXPECT_NE(xml.find("registers 32 -&gt; 40 &lt;cliff&gt; &amp; &quot;more&quot;"), std::string::npos);
    EXPECT_EQ(xml.find('\x01'), std::string::npos);
}

// A metric that fails against its baseline and by an expect: rule is named once; the root names the suite.
TEST(JUnit, AFailingMetricIsNamedOnceAndTheRootNamesTheSuite)
{
    auto rep = gated_report();
    for (auto& r : rep.results)
        if (!r.verdicts.empty() && r.verdicts.front().verdict == Verdict::regressed) {
            auto expect = r.verdicts.front();
            expect.verdict = Verdict::expect_failed;
            expect.rule = "expect <= 32";
            r.verdicts.push_back(expect);
        }
    const std::string xml = report::junit_xml(rep);
    EXPECT_NE(xml.find("message=\"a metric regressed: registers\""), std::string::npos) << xml;
    EXPECT_EQ(xml.find("registers, registers"), std::string::npos) << xml;
    EXPECT_NE(xml.find("<testsuites name=\"harness gemm\""), std::string::npos) << xml;
}

TEST(Markdown, CellsRenderCompilerOutputLiterally)
{
    auto rep = gated_report();
    rep.results[0].status = CaseStatus::compile_error;
    rep.results[0].message = "error: __shared__ variable *tile* `x` exceeds | the limit";
    const std::string md = report::markdown_summary(rep);
    EXPECT_NE(md.find("error: \\_\\_shared\\_\\_ variable \\*tile\\* \\`x\\` exceeds \\| the limit"), std::string::npos)
        << md;
}

// Every figure compared with a baseline has a row: reference, current, difference, noise, verdict.
TEST(Markdown, SummaryTablesEveryComparedFigure)
{
    const auto rep = gated_report();
    const std::string md = report::markdown_summary(rep);
    const auto table = md.find("### Figures against the baseline");
    ASSERT_NE(table, std::string::npos) << md;
    EXPECT_NE(md.find("| case | arch | metric | reference | current | difference | % | noise | verdict |", table),
              std::string::npos);
    std::size_t compared = 0;
    for (const auto& r : rep.results)
        for (const auto& v : r.verdicts)
            if (v.baseline && v.value && !v.rule.starts_with("expect") && !v.rule.starts_with("report") &&
                v.verdict != Verdict::drifted && v.verdict != Verdict::skipped) {
                ++compared;
                EXPECT_NE(md.find("| `" + v.metric + "` |", table), std::string::npos) << v.metric;
            }
    EXPECT_GT(compared, 0u);
}

TEST(Markdown, SummaryListsRegressionsAndStaysUnderTheCap)
{
    auto rep = gated_report();
    const std::string md = report::markdown_summary(rep);
    EXPECT_NE(md.find(":x: 1 regressed, 2 failed"), std::string::npos) << md;
    // Message text renders literally: HTML, pipes and Markdown emphasis are escaped.
    EXPECT_NE(md.find("registers 32 -&gt; 40 &lt;cliff&gt; & \"more\" \\| pipes"), std::string::npos) << md;
    for (int i = 0; i < 2000; ++i) {
        auto r = rep.results[1];
        r.params_text = "N=" + std::to_string(i);
        rep.results.push_back(r);
    }
    const std::string capped = report::markdown_summary(rep, 16 * 1024);
    EXPECT_LE(capped.size(), 16u * 1024);
    EXPECT_NE(capped.find("more rows left out"), std::string::npos);
}

TEST(Csv, CarriesBaselineDeltaAndVerdict)
{
    const std::string csv = report::results_csv(gated_report());
    EXPECT_NE(csv.find("\"baseline\",\"delta\",\"verdict\""), std::string::npos);
    EXPECT_NE(csv.find("\"registers\",\"40\",\"regs/thread\",\"passed\",\"32\",\"8\",\"regressed\""), std::string::npos)
        << csv;
}

TEST(Merge, CombinesShardsAndRefusesMismatches)
{
    auto a = gated_report();
    auto b = gated_report();
    a.results.resize(2);
    b.results.erase(b.results.begin(), b.results.begin() + 2);
    const auto merged = report::merge_reports({a, b}, {"a.json", "b.json"});
    EXPECT_EQ(merged.results.size(), 5u);
    // Round trip through the JSON file.
    const TempDir scratch{"harness-merge"};
    const fs::path path = scratch.path / "merged.json";
    std::ofstream(path) << harness::results_json(merged);
    EXPECT_EQ(harness::read_results_json(path).results.size(), 5u);

    auto other_gpu = b;
    other_gpu.device_name = "NVIDIA H100";
    try {
        report::merge_reports({a, other_gpu}, {"a.json", "b.json"});
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("GPU 'NVIDIA H100'"), std::string::npos) << e.what();
    }
    EXPECT_THROW(report::merge_reports({a, a}, {"a.json", "a2.json"}), Error); // a case twice
    auto other_suite = b;
    other_suite.suite = "transpose";
    EXPECT_THROW(report::merge_reports({a, other_suite}, {"a.json", "b.json"}), Error);
}

TEST(SuiteGating, CompareAndExpectErrorsNameTheLine)
{
    const auto error_of = [](const std::string& extra) -> std::string {
        const std::string text =
            "suite: toy\nparams: {N: [1]}\nreference: a\n" + extra +
            "buffers:\n  x: {type: f32, count: N, role: out}\n"
            "variants:\n  a:\n    source: ../kernels/memory/vector_add.cu\n"
            "    entry: vector_add\n    block: [256]\n    grid: [1]\n    args: [x, x, x, {i32: N}]\n";
        try {
            suite::parse_suite(text, repo_root() / "suites" / "toy.yaml");
        } catch (const InputError& e) {
            return e.what();
        }
        return "";
    };
    EXPECT_NE(error_of("expect: {registres: \"<= 64\"}\n")
                  .find("toy.yaml:4:10: expect.registres: unknown metric "
                        "'registres' (did you mean 'registers'?)"),
              std::string::npos)
        << error_of("expect: {registres: \"<= 64\"}\n");
    EXPECT_NE(error_of("expect: {registers: \"=< 64\"}\n").find("toy.yaml:4:21: expect.registers"), std::string::npos)
        << error_of("expect: {registers: \"=< 64\"}\n");
    EXPECT_NE(error_of("compare: {time_median: \"rel 5\"}\n").find("compare.time_median"), std::string::npos);
    EXPECT_NE(error_of("compare: {registers: \"samples 5%\"}\n").find("only time_median"), std::string::npos);
    EXPECT_EQ(error_of("compare: {time_median: \"samples 8%\"}\nexpect: {theoretical_occupancy: \">= 0.75\"}\n"), "");
}

TEST(EndToEnd, StaticTierGatesAgainstABaseline)
{
    const TempDir scratch{"harness-e2e"};
    const fs::path out = scratch.path / "out";
    const std::string suite = (repo_root() / "tests" / "suites" / "register_cliff.yaml").string();
    const std::string baselines = (repo_root() / "tests" / "baselines").string();
    // Above the cliff against the baseline recorded below it: a regression.
    testing::internal::CaptureStdout();
    const int cliff = cli::dispatch({"run", "--static", suite, "--baseline-dir", baselines, "--out", out.string()});
    const std::string console = testing::internal::GetCapturedStdout();
    EXPECT_EQ(cliff, 1);
    EXPECT_NE(console.find("registers 32 -> 40: resident blocks 8 -> 6, theoretical occupancy 100 % -> 75 % "
                           "(limiter: registers)"),
              std::string::npos)
        << console;
    EXPECT_NE(read(out / "register_cliff" / "junit.xml").find("failures=\"1\""), std::string::npos);

    // Record the current figures as the baseline, and the same run passes.
    testing::internal::CaptureStdout();
    EXPECT_EQ(
        cli::dispatch({"baseline", "update", "--static", "--no-ci", suite, "--baseline-dir", (out / "b").string()}), 0);
    EXPECT_EQ(cli::dispatch({"run", "--static", suite, "--baseline-dir", (out / "b").string(), "--out", out.string()}),
              0);
    // A malformed waiver file is bad input.
    std::ofstream(out / "b" / "waivers.yaml") << "waivers:\n  - suite: x\n    expires: soon\n";
    EXPECT_THROW(
        cli::dispatch({"run", "--static", suite, "--baseline-dir", (out / "b").string(), "--out", out.string()}),
        InputError);
    testing::internal::GetCapturedStdout();
}

} // namespace gating_report_test
