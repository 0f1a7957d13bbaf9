// `harness run --changed-only`, planned without a GPU: two suites' cases hashed from their
// kernels' normalised SASS (NVRTC and nvdisasm) and inputs, recorded as a GPU baseline update
// records them; then one kernel of one suite changed: only that suite's cases of that kernel (and
// the reference at their points, which verifies them) are planned, every other case is carried,
// named and counted. Lines moved by a comment carry; a changed input runs.
#include "harness/compare/baseline_update.hxx"
#include "harness/compare/sass_baseline.hxx"
#include "harness/compile/compile_suite.hxx"
#include "harness/compile/sass_disassembly.hxx"
#include "harness/core/run_report.hxx"
#include "harness/core/sass_code.hxx"
#include "harness/pipeline/changed_only.hxx"
#include "harness/pipeline/pool_runs.hxx"
#include "harness/report/reporters.hxx"
#include "harness/suite/suite.hxx"
#include "harness/suite/sweep.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"

#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <gtest/gtest.h>
#include <regex>
#include <sstream>

namespace changed_only_test {

using namespace harness;
namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

void replace_in(const fs::path& path, const std::string& from, const std::string& to)
{
    std::string text = read(path);
    const auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << path << " no longer holds " << from;
    text.replace(at, from.size(), to);
    std::ofstream(path, std::ios::binary) << text;
}

/// A suite's cases and their code as a GPU run on sm_90 computes them.
struct Hashed {
    suite::Suite suite;
    std::vector<suite::Case> cases;
    SassCodeFile code;
};

Hashed hashed(const fs::path& file)
{
    Hashed h{suite::load_suite(file), {}, {}};
    h.cases = suite::expand_cases(h.suite);
    const auto compiled = compile::compile_suite(h.suite, h.cases, "sm_90", nullptr);
    h.code = pipeline::gpu_sass_code(h.suite, h.cases, compiled, "sm_90", nullptr);
    return h;
}

/// Records `h`'s code as `harness baseline update` on a GPU does (or, `static_tier`, as a static
/// update does): every case passed.
void record_baseline(const Hashed& h, const fs::path& baselines, bool static_tier = false)
{
    RunReport report;
    report.suite = h.suite.name;
    report.mode = static_tier ? RunMode::static_tier : RunMode::gpu;
    for (const auto& c : h.cases) {
        CaseResult r;
        r.variant = h.suite.variants[c.variant].name;
        r.params_text = c.params_text;
        r.arch = "sm_90";
        r.status = CaseStatus::passed;
        report.results.push_back(r);
    }
    report.sass_code["sm_90"] = h.code;
    if (static_tier)
        for (auto& [key, sides] : report.sass_code["sm_90"].cases) std::swap(sides.first, sides.second);
    std::vector<std::string> unchanged;
    const auto files = compare::sass_code_changes(h.suite, report, baselines, unchanged);
    ASSERT_EQ(files.size(), 1u);
    fs::create_directories(files[0].first.parent_path());
    std::ofstream(files[0].first, std::ios::binary) << files[0].second;
}

/// The names of the cases `plan` runs, "variant params".
std::vector<std::string> planned(const Hashed& h, const pipeline::ChangedOnlyPlan& plan)
{
    std::vector<std::string> out;
    for (std::size_t i = 0; i < h.cases.size(); ++i)
        if (!plan.carried[i]) out.push_back(h.suite.variants[h.cases[i].variant].name + " " + h.cases[i].params_text);
    return out;
}

} // namespace

TEST(ChangedOnly, OneChangedKernelRunsItsCasesAndTheirReferenceAndCarriesTheRest)
{
    if (compile::find_nvdisasm().program.empty()) GTEST_SKIP() << compile::find_nvdisasm().not_found_reason;
    const TempDir scratch{"harness-changed-only"};
    const fs::path root = scratch.path;
    for (const char* dir : {"suites", "kernels"}) fs::copy(repo_root() / dir, root / dir, fs::copy_options::recursive);
    const fs::path baselines = root / "baselines";
    for (const char* name : {"transpose", "reduce"})
        record_baseline(hashed(root / "suites" / (std::string(name) + ".yaml")), baselines);
    const fs::path code_file = compare::sass_code_path(baselines, "transpose", "sm_90");
    ASSERT_TRUE(fs::exists(code_file));
    const auto recorded = compare::read_sass_code(code_file, "transpose", "sm_90");
    ASSERT_TRUE(recorded);
    EXPECT_FALSE(recorded->cases.at({"smem", "M=1000 N=1000"}).second.hash.empty());
    EXPECT_TRUE(recorded->cases.at({"smem", "M=1000 N=1000"}).first.hash.empty()); // no static recording
    // A static update records its side and keeps the GPU's.
    record_baseline(hashed(root / "suites/transpose.yaml"), baselines, true);
    const auto both = compare::read_sass_code(code_file, "transpose", "sm_90");
    ASSERT_TRUE(both);
    EXPECT_EQ(both->cases.at({"smem", "M=1000 N=1000"}).second, recorded->cases.at({"smem", "M=1000 N=1000"}).second);
    EXPECT_EQ(both->cases.at({"smem", "M=1000 N=1000"}).first, recorded->cases.at({"smem", "M=1000 N=1000"}).second);

    // Nothing changed: everything is carried.
    {
        const Hashed t = hashed(root / "suites/transpose.yaml");
        const auto plan = pipeline::plan_changed_only(t.suite, t.cases, t.code, baselines);
        EXPECT_EQ(plan.carried_count, t.cases.size());
        EXPECT_EQ(plan.changed, 0u);
    }

    // A comment above the padded tile's kernel moves its lines: its figures cannot move, it carries.
    replace_in(root / "kernels/transpose/transpose_smem_padded.cu", "template <int TILE, int BLOCK_ROWS>",
               "// one line more\ntemplate <int TILE, int BLOCK_ROWS>");
    {
        const Hashed t = hashed(root / "suites/transpose.yaml");
        EXPECT_EQ(pipeline::plan_changed_only(t.suite, t.cases, t.code, baselines).changed, 0u);
    }

    // The padded tile padded by two: its six cases run, and the reference (naive) at their points.
    replace_in(root / "kernels/transpose/transpose_smem_padded.cu", "__shared__ float tile[TILE][TILE + 1];",
               "__shared__ float tile[TILE][TILE + 2];");
    const Hashed t = hashed(root / "suites/transpose.yaml");
    const auto plan = pipeline::plan_changed_only(t.suite, t.cases, t.code, baselines);
    std::vector<std::string> expected;
    for (const char* point :
         {"M=1000 N=1000", "M=1000 N=2048", "M=1000 N=4096", "M=4096 N=1000", "M=4096 N=2048", "M=4096 N=4096"})
        for (const char* variant : {"naive", "smem_padded"}) expected.push_back(std::string(variant) + " " + point);
    std::vector<std::string> got = planned(t, plan);
    std::sort(got.begin(), got.end(), [](const std::string& a, const std::string& b) {
        return a.substr(a.find(' ')) + a < b.substr(b.find(' ')) + b;
    });
    EXPECT_EQ(got, expected);
    EXPECT_EQ(plan.changed, 12u);
    EXPECT_EQ(plan.carried_count, 6u); // every smem case
    std::vector<std::string> carried;
    for (std::size_t i = 0; i < t.cases.size(); ++i)
        if (plan.carried[i])
            carried.push_back(t.suite.variants[t.cases[i].variant].name + " " + t.cases[i].params_text);
    for (const auto& name : carried) EXPECT_TRUE(name.starts_with("smem ")) << name;
    // The console's table names each carried case, "unchanged", beside the cases that ran.
    {
        RunReport run;
        run.suite = "transpose";
        run.mode = RunMode::gpu;
        for (std::size_t i = 0; i < t.cases.size(); ++i) {
            if (plan.carried[i]) {
                run.results.push_back(pipeline::carried_case(t.suite, t.cases[i], "sm_90"));
                continue;
            }
            CaseResult ran;
            ran.variant = t.suite.variants[t.cases[i].variant].name;
            ran.params_text = t.cases[i].params_text;
            ran.arch = "sm_90";
            ran.status = CaseStatus::passed;
            run.results.push_back(ran);
        }
        std::ostringstream table;
        report::write_console_table(run, table);
        for (const auto& name : carried) {
            const std::string variant = name.substr(0, name.find(' ')), params = name.substr(name.find(' ') + 1);
            EXPECT_TRUE(std::regex_search(table.str(), std::regex("\\n" + variant + " +" + params + " +unchanged ")))
                << name << "\n"
                << table.str();
        }
        EXPECT_NE(table.str().find("transpose: 12 passed, 0 failed, 0 regressed, 0 not gated, 6 skipped"),
                  std::string::npos)
            << table.str();
        EXPECT_NE(table.str().find("unchanged: 6 of the skipped cases not run"), std::string::npos) << table.str();
    }
    ASSERT_FALSE(plan.notes.empty());
    EXPECT_NE(plan.notes.back().find("12 cases run"), std::string::npos) << plan.notes.back();
    EXPECT_NE(plan.notes.back().find("6 carried as unchanged"), std::string::npos) << plan.notes.back();

    // The other suite: every case carried, each reported as unchanged, skipped, counted apart.
    const Hashed r = hashed(root / "suites/reduce.yaml");
    const auto reduce_plan = pipeline::plan_changed_only(r.suite, r.cases, r.code, baselines);
    EXPECT_EQ(reduce_plan.changed, 0u);
    EXPECT_EQ(reduce_plan.carried_count, r.cases.size());
    RunReport report;
    for (std::size_t i = 0; i < r.cases.size(); ++i)
        if (reduce_plan.carried[i]) report.results.push_back(pipeline::carried_case(r.suite, r.cases[i], "sm_90"));
    ASSERT_FALSE(report.results.empty());
    EXPECT_EQ(report.results[0].status, CaseStatus::skipped);
    EXPECT_TRUE(report.results[0].unchanged);
    EXPECT_EQ(report.results[0].message.find("unchanged: SASS identical to the baseline's"), 0u);
    EXPECT_TRUE(report.results[0].metrics.empty()); // carried, never measured
    const Totals totals = harness::totals(report);
    EXPECT_EQ(totals.passed, 0u);
    EXPECT_EQ(totals.unchanged, r.cases.size());
    EXPECT_EQ(gate_counts(report).compared, 0u);
    // Every report counts them apart.
    report.suite = "reduce";
    report.mode = RunMode::gpu;
    const std::string summary = report::markdown_summary(report);
    EXPECT_NE(summary.find(fmt::format("{} of the skipped cases are **unchanged**", r.cases.size())), std::string::npos)
        << summary;
    std::ostringstream console;
    report::write_console_verdicts(report, console);
    EXPECT_NE(console.str().find(fmt::format("unchanged: {} of the skipped cases not run", r.cases.size())),
              std::string::npos)
        << console.str();

    // An input changed (the input buffer's seed): every case of the suite runs.
    replace_in(root / "suites/reduce.yaml", "seed: ", "seed: 9");
    const Hashed seeded = hashed(root / "suites/reduce.yaml");
    EXPECT_EQ(pipeline::plan_changed_only(seeded.suite, seeded.cases, seeded.code, baselines).carried_count, 0u);
}

TEST(ChangedOnly, AGpuBaselineUpdateRecordsTheHashThatChangedOnlyCompares)
{
    if (compile::find_nvdisasm().program.empty()) GTEST_SKIP() << compile::find_nvdisasm().not_found_reason;
    const TempDir scratch{"harness-changed-only-update"};
    const fs::path root = scratch.path;
    for (const char* dir : {"suites", "kernels"}) fs::copy(repo_root() / dir, root / dir, fs::copy_options::recursive);
    const fs::path baselines = root / "baselines";
    // Two runs of the suite as a GPU run reports them (its cases' code beside its results, from
    // gpu_run's plan), pooled and recorded as `harness baseline update --runs 2` does.
    const Hashed h = hashed(root / "suites/transpose.yaml");
    RunReport run;
    run.suite = h.suite.name;
    run.mode = RunMode::gpu;
    run.device_name = "NVIDIA H200";
    run.arch = "sm_90";
    for (const auto& c : h.cases) {
        CaseResult r;
        r.suite = h.suite.name;
        r.variant = h.suite.variants[c.variant].name;
        r.params_text = c.params_text;
        r.arch = "sm_90";
        r.status = CaseStatus::passed;
        r.set_metric("registers", 32);
        run.results.push_back(r);
    }
    run.sass_code["sm_90"] = h.code;
    const auto pooled = pipeline::pool_runs({run, run}, {"run 1", "run 2"}, &h.suite);
    const auto update = compare::update_baselines(h.suite, pooled.report, baselines);
    const fs::path code_file = compare::sass_code_path(baselines, "transpose", "sm_90");
    EXPECT_NE(std::find(update.written.begin(), update.written.end(), code_file.string()), update.written.end())
        << fmt::format("{}", fmt::join(update.written, ", "));
    const auto recorded = compare::read_sass_code(code_file, "transpose", "sm_90");
    ASSERT_TRUE(recorded);
    // Every case's GPU hash is the one a later GPU run computes, and no static one was invented.
    for (const auto& c : h.cases) {
        const std::pair<std::string, std::string> key{h.suite.variants[c.variant].name, c.params_text};
        ASSERT_TRUE(recorded->cases.contains(key)) << key.first << " " << key.second;
        EXPECT_EQ(recorded->cases.at(key).second.hash, h.code.cases.at(key).second.hash);
        EXPECT_FALSE(recorded->cases.at(key).second.hash.empty());
        EXPECT_TRUE(recorded->cases.at(key).first.hash.empty());
    }
    // So --changed-only carries every case of the unchanged suite.
    const Hashed again = hashed(root / "suites/transpose.yaml");
    const auto plan = pipeline::plan_changed_only(again.suite, again.cases, again.code, baselines);
    EXPECT_EQ(plan.carried_count, again.cases.size());
    // An update from results.json holds no code: it leaves the recorded hashes as they are.
    const fs::path json = root / "results.json";
    std::ofstream(json, std::ios::binary) << harness::results_json(run);
    const RunReport from_json = harness::read_results_json(json);
    EXPECT_TRUE(from_json.sass_code.empty());
    compare::update_baselines(h.suite, from_json, baselines);
    EXPECT_EQ(compare::read_sass_code(code_file, "transpose", "sm_90")->cases, recorded->cases);
}

TEST(ChangedOnly, WithoutARecordedCodeFileEveryCaseRunsAndTheNoteSaysWhy)
{
    const TempDir scratch{"harness-changed-only-none"};
    const suite::Suite s = suite::load_suite(repo_root() / "suites/transpose.yaml");
    const auto cases = suite::expand_cases(s);
    SassCodeFile code{"transpose", "sm_90", {}, {}};
    const auto plan = pipeline::plan_changed_only(s, cases, code, scratch.path);
    EXPECT_EQ(plan.changed, cases.size());
    EXPECT_EQ(plan.carried_count, 0u);
    ASSERT_EQ(plan.notes.size(), 1u);
    EXPECT_NE(plan.notes[0].find("no sm_90.sass.gz"), std::string::npos) << plan.notes[0];
}

} // namespace changed_only_test
