// Scanned axes and their cliff maps: the suite syntax and its errors, the static tier's maps and
// their explanations, results.json and baselines round trips, and the gate's verdicts.

#include "harness/compare/baseline_update.hxx"
#include "harness/compare/cliff_baseline.hxx"
#include "harness/compare/cliff_gate.hxx"
#include "harness/compare/compare_run.hxx"
#include "harness/compile/compile_suite.hxx"
#include "harness/compile/sass_disassembly.hxx"
#include "harness/core/error.hxx"
#include "harness/core/run_report.hxx"
#include "harness/pipeline/cliff_maps.hxx"
#include "harness/pipeline/run_suite.hxx"
#include "harness/suite/suite.hxx"
#include "harness/suite/sweep.hxx"
#include "suite_edits.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"
#include "tool_output.hxx"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <limits>
#include <string>
#include <vector>

namespace cliff_scan_test {

using namespace harness;
namespace fs = std::filesystem;

namespace {

// Parsed as if it lived in suites/, so that the kernel path resolves.
const fs::path suite_path = repo_root() / "suites" / "scan.yaml";

const std::string valid = R"yaml(suite: scan
archs: [sm_90]
params:
  N: [1048576]
  SLOTS_KIB: {scan: [20, 40], pitch: "SLOTS_KIB * 1024"}
reference: staged
buffers:
  table: {type: f32, count: 16777216, init: uniform, seed: 1, role: in}
  out: {type: f32, count: N, role: out}
cliffs: {min_depth: 0.05}
variants:
  staged:
    source: ../kernels/occupancy/occupancy_shared_staircase.cu
    entry: occupancy_shared_staircase
    block: [256]
    grid: ["ceil_div(N, 256)"]
    shared_bytes: SLOTS_KIB * 1024
    args: [table, out, {i32: N}, {u32: 2097152}, {i32: SLOTS_KIB}]
    expect: {cliff_depth: "<= 0.5"}
)yaml";

suite::Suite scan_suite(const std::string& text = valid)
{
    return suite::parse_suite(text, suite_path);
}

/// `text` with the first `from` replaced by `to`.
std::string edited(std::string text, const std::string& from, const std::string& to)
{
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    return text;
}

const std::string scan_text = "{scan: [20, 40], pitch: \"SLOTS_KIB * 1024\"}";

std::string error_after(const std::string& from, const std::string& to)
{
    return load_error_after_edit(valid, suite_path, from, to);
}

/// A map of `scan_suite()`'s variant on sm_90 along SLOTS_KIB 20..40, with the given cliffs.
CliffMap map_with(std::vector<Cliff> cliffs)
{
    CliffMap m;
    m.variant = "staged";
    m.axis = "SLOTS_KIB";
    m.others = "N=1048576";
    m.other_params = {{"N", 1048576}};
    m.arch = "sm_90";
    m.figure = "theoretical_occupancy";
    m.unit = "fraction";
    for (int x = 20; x <= 40; ++x) {
        m.x.push_back(x);
        m.values.push_back(1.0);
    }
    m.cliffs = std::move(cliffs);
    return m;
}

Cliff cliff_at(double x_before, double level_before, double level_after, CliffCause cause = CliffCause::occupancy)
{
    Cliff c;
    c.x_before = x_before;
    c.x_after = x_before + 1;
    c.level_before = level_before;
    c.level_after = level_after;
    c.depth = level_after / level_before - 1;
    c.significance = std::numeric_limits<double>::infinity();
    c.cause = cause;
    c.explanation = "occupancy: resident blocks 8 -> 7 per SM (limiter: shared memory)";
    return c;
}

/// The baseline a map records, as a file holds it.
compare::CliffBaselineFile baseline_of(const CliffMap& map)
{
    compare::CliffBaselineFile file;
    file.set_meta("schema_version", "1");
    file.rows = compare::cliff_rows(map);
    return compare::parse_cliff_baseline(compare::cliff_baseline_text(file), "sm_90.cliffs.csv");
}

/// The verdicts of `run` against a baseline recorded from `recorded` (no expectations).
std::vector<CliffVerdict> judged(const CliffMap& run, const CliffMap& recorded, double depth_tolerance = 0.25)
{
    auto s = scan_suite();
    s.variants.front().expect.clear();
    s.cliffs.depth_tolerance = depth_tolerance;
    const auto file = baseline_of(recorded);
    return compare::judge_cliff_map(run, s, &file);
}

} // namespace

TEST(CliffScan, ScanExpandsLikeAnyParameterAndRecordsItsAxis)
{
    const auto s = scan_suite();
    ASSERT_EQ(s.params.size(), 2u);
    const suite::ParamSpec* axis = s.scanned_param();
    ASSERT_NE(axis, nullptr);
    EXPECT_EQ(axis->name, "SLOTS_KIB");
    EXPECT_EQ(axis->values.size(), 21u);
    EXPECT_EQ(axis->values.front(), 20);
    EXPECT_EQ(axis->values.back(), 40);
    ASSERT_TRUE(axis->pitch);
    EXPECT_EQ(axis->pitch->evaluate({{"N", 1}, {"SLOTS_KIB", 3}}), 3072);
    EXPECT_FALSE(s.params.front().scanned);
    EXPECT_DOUBLE_EQ(s.cliffs.min_depth, 0.05);
    EXPECT_EQ(suite::expand_cases(s).size(), 21u);
    // The cliff expectation stays with the variant's expectations, judged on the maps.
    ASSERT_EQ(s.variants.front().expect.size(), 1u);
    EXPECT_TRUE(suite::is_cliff_expectation(s.variants.front().expect.front().metric));

    const auto stepped = scan_suite(edited(valid, scan_text, "{scan: [8, 64], step: 8}"));
    EXPECT_EQ(stepped.scanned_param()->values, (std::vector<std::int64_t>{8, 16, 24, 32, 40, 48, 56, 64}));
    EXPECT_FALSE(stepped.scanned_param()->pitch);
}

TEST(CliffScan, BadScansNameFileLineColumnAndField)
{
    const std::string file = suite_path.string();
    EXPECT_EQ(error_after("scan: [20, 40]", "scan: [40, 20]"),
              file + ":5:21: params.SLOTS_KIB.scan: [40, 20] is reversed: the first value must not exceed the last");
    EXPECT_EQ(error_after("scan: [20, 40],", "scan: [20, 40], step: 0,"),
              file + ":5:37: params.SLOTS_KIB.step: 0: the step must be positive");
    EXPECT_NE(error_after("scan: [20, 40],", "scan: [20, 40], step: -4,").find("params.SLOTS_KIB.step: -4"),
              std::string::npos);
    EXPECT_EQ(error_after("scan: [20, 40]", "scan: [20, 40.5]"),
              file + ":5:26: params.SLOTS_KIB.scan[1]: expected an integer, got '40.5'");
    EXPECT_NE(error_after("scan: [20, 40]", "scan: [20]").find(":5:21: params.SLOTS_KIB.scan: expected [first, last]"),
              std::string::npos);
    EXPECT_NE(
        error_after("scan: [20, 40]", "scan: [1, 100000]").find("the scan has 100000 values, more than the 10000"),
        std::string::npos);
    EXPECT_NE(
        error_after("pitch:", "pitsh:").find(":5:31: params.SLOTS_KIB.pitsh: unknown key (did you mean 'pitch'?)"),
        std::string::npos);
    EXPECT_NE(error_after("N: [1048576]", "N: {scan: [1, 2]}")
                  .find(":5:14: params.SLOTS_KIB: a suite scans one parameter, and 'N' is scanned already"),
              std::string::npos);
    EXPECT_NE(error_after("\"SLOTS_KIB * 1024\"}", "\"M * 4\"}").find("params.SLOTS_KIB.pitch: unknown name 'M'"),
              std::string::npos);
    EXPECT_NE(error_after("\"SLOTS_KIB * 1024\"}", "\"SLOTS_KIB - 30\"}")
                  .find("params.SLOTS_KIB.pitch: -10 bytes at N=1048576 SLOTS_KIB=20: a pitch is not negative"),
              std::string::npos);
    EXPECT_NE(error_after("cliffs: {min_depth: 0.05}", "cliffs: {min_dept: 0.05}")
                  .find(":10:10: cliffs.min_dept: unknown key (did you mean 'min_depth'?)"),
              std::string::npos);
    EXPECT_NE(error_after("min_depth: 0.05", "min_depth: -1").find("cliffs.min_depth: -1 is outside 0..100"),
              std::string::npos);

    // Without a scanned parameter there are no cliffs to configure or expect.
    const std::string unscanned = edited(valid, scan_text, "[20, 40]");
    EXPECT_NE(load_error_after_edit(unscanned, suite_path, "cliffs: {min_depth: 0.05}", "cliffs: {min_depth: 0.1}")
                  .find(":10:9: cliffs: the suite scans no parameter"),
              std::string::npos);
    EXPECT_NE(load_error_after_edit(unscanned, suite_path, "cliffs: {min_depth: 0.05}\n", "")
                  .find("variants.staged.expect.cliff_depth: the suite scans no parameter"),
              std::string::npos);
}

TEST(CliffScan, ScanCountsAgainstTheCasesOfASuite)
{
    // 9,000 points of a scan times two variants is past the 10,000 cases a suite may have.
    std::string text =
        edited(edited(valid, scan_text, "{scan: [1, 9000]}"), "shared_bytes: SLOTS_KIB * 1024", "shared_bytes: 1024");
    text += R"yaml(  again:
    source: ../kernels/occupancy/occupancy_shared_staircase.cu
    entry: occupancy_shared_staircase
    block: [256]
    grid: ["ceil_div(N, 256)"]
    shared_bytes: 1024
    args: [table, out, {i32: N}, {u32: 2097152}, {i32: 1}]
)yaml";
    try {
        scan_suite(text);
        ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("2 variants x 9000 sweep points make more than the 10000 cases allowed"),
                  std::string::npos)
            << e.what();
    }
}

TEST(CliffScan, OneCompilationPerConfigurationNotPerPoint)
{
    const auto s = suite::load_suite(repo_root() / "suites" / "occupancy_scan.yaml");
    EXPECT_EQ(suite::expand_cases(s).size(), 128u);
    EXPECT_EQ(compile::compile_units(s).size(), 2u);
    // A define that names the scanned parameter makes each of its values a configuration.
    const std::string text = edited(valid, "    entry: occupancy_shared_staircase",
                                    "    defines: {SLOTS: SLOTS_KIB}\n    entry: occupancy_shared_staircase");
    EXPECT_EQ(compile::compile_units(scan_suite(text)).size(), 21u);
}

TEST(CliffScan, StaticTierMapsTheStaircaseAndExplainsEachStep)
{
    const auto s = suite::load_suite(repo_root() / "suites" / "occupancy_scan.yaml");
    run::RunSettings options;
    options.static_only = true;
    options.archs = {"sm_90"};
    const RunReport rep = pipeline::run_suite_static(s, run::resolve_settings(options, s), nullptr);
    ASSERT_EQ(rep.cliff_maps.size(), 2u);
    const CliffMap& flat = rep.cliff_maps[0];
    EXPECT_EQ(flat.variant, "registers");
    EXPECT_EQ(flat.axis, "SLOTS_KIB");
    EXPECT_EQ(flat.others, "N=1048576");
    EXPECT_EQ(flat.arch, "sm_90");
    EXPECT_EQ(flat.figure, "theoretical_occupancy");
    EXPECT_EQ(flat.x.size(), 64u);
    EXPECT_TRUE(flat.noise.empty());
    EXPECT_TRUE(flat.cliffs.empty());

    const CliffMap& staged = rep.cliff_maps[1];
    EXPECT_EQ(staged.variant, "staged");
    ASSERT_EQ(staged.cliffs.size(), 5u);
    const double expected_before[] = {27, 31, 37, 44, 56};
    for (std::size_t i = 0; i < 5; ++i) {
        const Cliff& c = staged.cliffs[i];
        EXPECT_EQ(c.x_before, expected_before[i]);
        EXPECT_EQ(c.x_after, expected_before[i] + 1);
        EXPECT_EQ(c.cause, CliffCause::occupancy) << c.explanation;
        EXPECT_NE(c.explanation.find("limiter: shared memory"), std::string::npos) << c.explanation;
        EXPECT_TRUE(std::isinf(c.significance));
        EXPECT_LT(c.depth, 0);
    }
    EXPECT_DOUBLE_EQ(staged.cliffs[0].level_before, 1.0);
    EXPECT_DOUBLE_EQ(staged.cliffs[0].level_after, 0.875);
    EXPECT_NE(staged.cliffs[0].explanation.find("8 -> 7"), std::string::npos) << staged.cliffs[0].explanation;
}

TEST(CliffScan, ShardsGetNoMapsUntilMerged)
{
    const auto s = suite::load_suite(repo_root() / "suites" / "occupancy_scan.yaml");
    RunReport rep;
    rep.mode = RunMode::static_tier;
    rep.shard = {2, {1}, "x"};
    pipeline::add_static_cliff_maps(rep, s);
    EXPECT_TRUE(rep.cliff_maps.empty());
    ASSERT_EQ(rep.notes.size(), 1u);
    EXPECT_NE(rep.notes.front().find("cliff maps: none for shard 1/2"), std::string::npos);
}

TEST(CliffScan, ResultsJsonKeepsMapsCliffsAndVerdicts)
{
    TempDir dir;
    RunReport rep;
    rep.suite = "scan";
    rep.mode = RunMode::static_tier;
    rep.arch = "sm_90";
    CliffMap m = map_with({cliff_at(27, 1.0, 0.875)});
    m.values[3] = std::numeric_limits<double>::quiet_NaN(); // a point that did not run
    CliffVerdict v;
    v.x_before = 27;
    v.x_after = 28;
    v.carrier = "N=1048576 SLOTS_KIB=28";
    v.judgement.metric = cliff_verdict_metric("SLOTS_KIB");
    v.judgement.verdict = Verdict::regressed;
    v.judgement.value = -0.125;
    v.judgement.message = "new cliff";
    m.verdicts.push_back(v);
    rep.cliff_maps.push_back(m);
    write_file(dir.path / "results.json", results_json(rep));
    const RunReport back = read_results_json(dir.path / "results.json");
    ASSERT_EQ(back.cliff_maps.size(), 1u);
    const CliffMap& b = back.cliff_maps.front();
    EXPECT_EQ(b.variant, "staged");
    EXPECT_EQ(b.others, "N=1048576");
    EXPECT_EQ(b.x, m.x);
    EXPECT_TRUE(std::isnan(b.values[3]));
    EXPECT_EQ(b.values[0], 1.0);
    ASSERT_EQ(b.cliffs.size(), 1u);
    EXPECT_EQ(b.cliffs[0].x_before, 27);
    EXPECT_EQ(b.cliffs[0].depth, -0.125);
    EXPECT_TRUE(std::isinf(b.cliffs[0].significance));
    EXPECT_EQ(b.cliffs[0].cause, CliffCause::occupancy);
    EXPECT_EQ(b.cliffs[0].explanation, m.cliffs[0].explanation);
    ASSERT_EQ(b.verdicts.size(), 1u);
    EXPECT_EQ(b.verdicts[0].carrier, v.carrier);
    EXPECT_EQ(b.verdicts[0].judgement.verdict, Verdict::regressed);
    EXPECT_EQ(b.verdicts[0].judgement.metric, "cliff@SLOTS_KIB");

    // Files of the versions before maps read, without maps; a map of an unknown cause is bad input.
    write_file(dir.path / "old.json", R"({"schema": "harness-results", "schema_version": 2, "mode": "static",
        "suite": "scan", "results": []})");
    EXPECT_TRUE(read_results_json(dir.path / "old.json").cliff_maps.empty());
    const std::string text = edited(results_json(rep), "\"occupancy\"", "\"gravity\"");
    write_file(dir.path / "bad.json", text);
    try {
        read_results_json(dir.path / "bad.json");
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::bad_input);
        EXPECT_NE(std::string(e.what()).find("unknown cliff cause 'gravity'"), std::string::npos) << e.what();
    }
}

TEST(CliffScan, CliffBaselineReadsBackAndRefusesMalformedRows)
{
    const CliffMap stepped = map_with({cliff_at(27, 1.0, 0.875), cliff_at(31, 0.875, 0.75)});
    const auto file = baseline_of(stepped);
    ASSERT_EQ(file.rows.size(), 2u);
    EXPECT_TRUE(file.holds(stepped));
    EXPECT_EQ(file.cliffs_of(stepped).size(), 2u);
    EXPECT_EQ(*file.rows[1].x_before, 31);
    EXPECT_EQ(file.rows[1].depth, 0.75 / 0.875 - 1);
    EXPECT_EQ(file.rows[1].cause, "occupancy");
    // A flat map is one row without a place: held, with no cliffs.
    const auto flat = baseline_of(map_with({}));
    EXPECT_TRUE(flat.holds(map_with({})));
    EXPECT_TRUE(flat.cliffs_of(map_with({})).empty());

    const std::string head = "# harness cliff baseline\n# schema_version: 1\n"
                             "\"variant\",\"axis\",\"others\",\"figure\",\"x_before\",\"x_after\",\"level_before\","
                             "\"level_after\",\"depth\",\"cause\"\n";
    const auto error = [&](const std::string& rows) {
        try {
            compare::parse_cliff_baseline(head + rows, "f.cliffs.csv");
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(error("a,N,,t,3,4,1,0.5,-0.5,gravity\n"),
              "f.cliffs.csv:4:1: cause: unknown cause 'gravity'; one of waves, tiles, alignment, footprint, "
              "occupancy, unexplained");
    EXPECT_EQ(error("a,N,,t,4,4,1,0.5,-0.5,tiles\n"), "f.cliffs.csv:4:1: x_after: 4 is not after x_before 4");
    EXPECT_EQ(error("a,N,,t,x,4,1,0.5,-0.5,tiles\n"), "f.cliffs.csv:4:1: x_before: 'x' is not a number");
    EXPECT_NE(error("a,N,,t,3,4,1,0.5,-0.5,tiles\na,N,,t,3,4,1,0.5,-0.5,tiles\n").find("a second row for the map"),
              std::string::npos);
    EXPECT_NE(error("a,N,,t,,,,,,\na,N,,t,3,4,1,0.5,-0.5,tiles\n").find("has cliffs (line 5) and a row saying"),
              std::string::npos);
    EXPECT_NE(error("a,N,,t,3,4\n").find("expected 10 fields, found 6"), std::string::npos);
    EXPECT_TRUE(compare::parse_cliff_baseline(head, "f").rows.empty());
}

TEST(CliffScan, ACliffBaselineOfManyMapsIsLookedUpByMapAsAScanOfItsRowsWould)
{
    // 3,000 flat maps and 3,000 stepped ones, and the suite's own map, in one file.
    compare::CliffBaselineFile file;
    file.set_meta("schema_version", "1");
    for (int i = 0; i < 3000; ++i) {
        CliffMap flat = map_with({});
        flat.variant = fmt::format("flat_{}", i);
        CliffMap stepped = map_with({cliff_at(20 + i % 10, 1.0, 0.875), cliff_at(31, 0.875, 0.75)});
        stepped.others = fmt::format("N={}", i);
        for (auto& r : compare::cliff_rows(flat)) file.rows.push_back(std::move(r));
        for (auto& r : compare::cliff_rows(stepped)) file.rows.push_back(std::move(r));
    }
    const CliffMap own = map_with({cliff_at(27, 1.0, 0.875)});
    for (auto& r : compare::cliff_rows(own)) file.rows.push_back(std::move(r));
    const std::string text = compare::cliff_baseline_text(file);
    auto read = compare::parse_cliff_baseline(text, "sm_90.cliffs.csv");
    ASSERT_EQ(read.rows.size(), 9001u);
    const auto scanned = [&](const CliffMap& m) {
        std::vector<const compare::CliffRow*> out;
        for (const auto& r : read.rows)
            if (r.is_cliff() && r.of(m)) out.push_back(&r);
        return out;
    };
    for (const int i : {0, 1, 1234, 2999}) {
        CliffMap flat = map_with({});
        flat.variant = fmt::format("flat_{}", i);
        EXPECT_TRUE(read.holds(flat));
        EXPECT_TRUE(read.cliffs_of(flat).empty());
        CliffMap stepped = map_with({});
        stepped.others = fmt::format("N={}", i);
        EXPECT_TRUE(read.holds(stepped));
        ASSERT_EQ(read.cliffs_of(stepped), scanned(stepped));
        ASSERT_EQ(read.cliffs_of(stepped).size(), 2u);
        EXPECT_EQ(*read.cliffs_of(stepped)[0]->x_before, 20 + i % 10);
    }
    EXPECT_EQ(read.cliffs_of(own), scanned(own));
    CliffMap absent = map_with({});
    absent.figure = "blocks_per_sm";
    EXPECT_FALSE(read.holds(absent));
    // Rows added since the file was read are found too.
    read.rows.push_back(compare::cliff_rows(absent).front());
    EXPECT_TRUE(read.holds(absent));
    // A flat row and a cliff of one map, 9,000 rows apart, are still refused, naming both lines.
    const std::string clash = text + "\"flat_7\",\"SLOTS_KIB\",\"N=1048576\",\"theoretical_occupancy\",\"27\",\"28\","
                                     "\"1\",\"0.875\",\"-0.125\",\"occupancy\"\n";
    const auto last_line = std::count(text.begin(), text.end(), '\n') + 1;
    try {
        compare::parse_cliff_baseline(clash, "sm_90.cliffs.csv");
        ADD_FAILURE() << "a map with cliffs and a flat row was read";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(fmt::format("the map flat_7 SLOTS_KIB N=1048576 theoretical_occupancy has "
                                                         "cliffs (line {}) and a row saying it has none",
                                                         last_line)),
                  std::string::npos)
            << e.what();
    }
}

TEST(CliffScan, RowsOfMapsTheSuiteCannotHaveAreNamedByTheGate)
{
    TempDir dir;
    fs::copy(repo_root() / "baselines" / "occupancy_scan", dir.path / "occupancy_scan");
    const fs::path cliffs = dir.path / "occupancy_scan" / "sm_90.cliffs.csv";
    const auto suite = suite::load_suite(repo_root() / "suites" / "occupancy_scan.yaml");
    auto file = compare::read_cliff_baseline(cliffs);
    EXPECT_EQ(compare::rows_of_unknown_maps(file, suite), 0u);
    const std::size_t rows = file.rows.size();
    // A variant, an axis and a value of the other parameters the suite does not have.
    compare::CliffRow ghost = file.rows.front();
    ghost.variant = "no_such_variant";
    file.rows.push_back(ghost);
    ghost = file.rows.front();
    ghost.axis = "N";
    file.rows.push_back(ghost);
    ghost = file.rows.front();
    ghost.others = "N=7";
    file.rows.push_back(ghost);
    write_file(cliffs, compare::cliff_baseline_text(file));
    EXPECT_EQ(compare::rows_of_unknown_maps(compare::read_cliff_baseline(cliffs), suite), 3u);
    ASSERT_GT(rows, 0u);

    const fs::path out = dir.path / "out";
    const auto o = run_tool_captured({"run", "--static", "--no-ci", "--no-cache", "--arch", "sm_90", "--baseline-dir",
                                      dir.path.string(), "--out", out.string(),
                                      (repo_root() / "suites" / "occupancy_scan.yaml").string()});
    EXPECT_EQ(o.code, 0) << o.out << o.err;
    const auto report = read_results_json(out / "occupancy_scan" / "results.json");
    const auto note =
        std::find_if(report.comparison_notes.begin(), report.comparison_notes.end(),
                     [](const std::string& n) { return n.find("rows of cliff maps") != std::string::npos; });
    ASSERT_NE(note, report.comparison_notes.end()) << o.out;
    EXPECT_NE(note->find("sm_90.cliffs.csv holds 3 rows of cliff maps the suite cannot have"), std::string::npos)
        << *note;
}

TEST(CliffScan, BaselineUpdateRecordsCliffsBesideTheFiguresOnce)
{
    TempDir dir;
    const auto s = suite::load_suite(repo_root() / "suites" / "occupancy_scan.yaml");
    run::RunSettings options;
    options.static_only = true;
    options.archs = {"sm_90"};
    RunReport rep = pipeline::run_suite_static(s, run::resolve_settings(options, s), nullptr);
    const auto first = compare::update_baselines(s, rep, dir.path);
    // The figures and the cliffs, and the SASS lines and normalised SASS where nvdisasm read them
    // (docs/sass.md).
    const std::size_t files = compile::find_nvdisasm().program.empty() ? 2u : 4u;
    EXPECT_EQ(first.written.size(), files);
    const fs::path cliffs = dir.path / "occupancy_scan" / "sm_90.cliffs.csv";
    ASSERT_TRUE(fs::exists(cliffs));
    const auto file = compare::read_cliff_baseline(cliffs);
    EXPECT_EQ(file.meta("suite"), "occupancy_scan");
    EXPECT_EQ(file.meta("key"), "sm_90");
    ASSERT_EQ(file.rows.size(), 6u); // the flat map's row and the staircase's five cliffs
    EXPECT_FALSE(file.rows[0].is_cliff());
    EXPECT_EQ(file.rows[0].variant, "registers");
    EXPECT_EQ(*file.rows[1].x_before, 27);
    // The same run again changes nothing.
    const auto again = compare::update_baselines(s, rep, dir.path);
    EXPECT_TRUE(again.written.empty());
    EXPECT_EQ(again.unchanged.size(), files);

    // The committed baselines gate the same run: every cliff passes as known.
    compare::CompareOptions gate;
    gate.baseline_dir = dir.path;
    gate.ci = true;
    compare::compare_run(rep, s, gate);
    const auto t = totals(rep);
    EXPECT_EQ(t.regressed, 0u);
    EXPECT_EQ(t.not_gated, 0u);
    EXPECT_EQ(t.passed, 64u * 2);
    ASSERT_EQ(rep.cliff_maps.size(), 2u);
    EXPECT_EQ(rep.cliff_maps[1].verdicts.size(), 5u + 2); // five known cliffs, two expectations

    // A map with a point missing is not recorded: its cliffs would span the gap.
    RunReport partial = rep;
    partial.cliff_maps[1].x.pop_back();
    partial.cliff_maps[1].values.pop_back();
    partial.cliff_maps[1].cliffs.clear();
    const auto left_out = compare::update_baselines(s, partial, dir.path);
    EXPECT_TRUE(left_out.written.empty());
    ASSERT_FALSE(left_out.notes.empty());
    EXPECT_NE(left_out.notes.back().find("has 63 of the scan's 64 points"), std::string::npos);

    // A map of a variant the suite lacks is refused before anything is written.
    RunReport foreign = rep;
    foreign.cliff_maps[0].variant = "gone";
    EXPECT_THROW(compare::update_baselines(s, foreign, dir.path), Error);
}

TEST(CliffScan, UnchangedCliffsPass)
{
    const CliffMap m = map_with({cliff_at(27, 1.0, 0.875), cliff_at(31, 0.875, 0.75)});
    const auto v = judged(m, m);
    ASSERT_EQ(v.size(), 2u);
    for (const auto& x : v) {
        EXPECT_EQ(x.judgement.verdict, Verdict::passed) << x.judgement.message;
        EXPECT_EQ(x.judgement.metric, "cliff@SLOTS_KIB");
    }
    EXPECT_EQ(v[0].carrier, "N=1048576 SLOTS_KIB=28");
    EXPECT_NE(v[0].judgement.message.find("cliff at SLOTS_KIB=27..28 as in the baseline"), std::string::npos);
    // A flat map against a flat baseline: one passing verdict, so that the map counts as gated.
    const auto flat = judged(map_with({}), map_with({}));
    ASSERT_EQ(flat.size(), 1u);
    EXPECT_EQ(flat[0].judgement.verdict, Verdict::passed);
}

TEST(CliffScan, NewCliffFailsNamingPlaceAndCause)
{
    const auto v = judged(map_with({cliff_at(23, 1.0, 0.875)}), map_with({}));
    ASSERT_EQ(v.size(), 1u);
    EXPECT_EQ(v[0].judgement.verdict, Verdict::regressed);
    EXPECT_EQ(v[0].x_before, 23);
    EXPECT_EQ(v[0].carrier, "N=1048576 SLOTS_KIB=24");
    EXPECT_EQ(v[0].judgement.message,
              "new cliff at SLOTS_KIB=23..24: theoretical_occupancy 100 % -> 87.5 % (-12.5 %), at least the suite's "
              "min_depth 5 %; caused by occupancy: resident blocks 8 -> 7 per SM (limiter: shared memory)");
    // A cliff one point off is new too: exact positions do not wander.
    const auto moved = judged(map_with({cliff_at(28, 1.0, 0.875)}), map_with({cliff_at(27, 1.0, 0.875)}));
    ASSERT_EQ(moved.size(), 2u);
    EXPECT_EQ(moved[0].judgement.verdict, Verdict::improved); // 27..28 gone
    EXPECT_EQ(moved[1].judgement.verdict, Verdict::regressed);
}

TEST(CliffScan, DeepenedCliffFailsShallowerAndVanishedImprove)
{
    const CliffMap base = map_with({cliff_at(27, 1.0, 0.875), cliff_at(31, 0.875, 0.75)});
    const auto deeper = judged(map_with({cliff_at(27, 1.0, 0.75), cliff_at(31, 0.875, 0.75)}), base);
    ASSERT_EQ(deeper.size(), 2u);
    EXPECT_EQ(deeper[0].judgement.verdict, Verdict::regressed);
    EXPECT_NE(deeper[0].judgement.message.find("cliff at SLOTS_KIB=27..28 deepened: -12.5 % -> -25 %"),
              std::string::npos)
        << deeper[0].judgement.message;
    EXPECT_EQ(*deeper[0].judgement.baseline, -0.125);
    EXPECT_EQ(*deeper[0].judgement.value, -0.25);
    EXPECT_EQ(deeper[1].judgement.verdict, Verdict::passed);

    const auto shallower = judged(map_with({cliff_at(27, 1.0, 0.9), cliff_at(31, 0.875, 0.75)}), base);
    EXPECT_EQ(shallower[0].judgement.verdict, Verdict::improved);

    const auto vanished = judged(map_with({cliff_at(31, 0.875, 0.75)}), base);
    ASSERT_EQ(vanished.size(), 2u);
    EXPECT_EQ(vanished[0].judgement.verdict, Verdict::improved);
    EXPECT_EQ(vanished[0].carrier, "N=1048576 SLOTS_KIB=28");
    EXPECT_NE(vanished[0].judgement.message.find("the cliff at SLOTS_KIB=27..28 of the baseline is gone"),
              std::string::npos);
    EXPECT_EQ(vanished[1].judgement.verdict, Verdict::passed);
}

TEST(CliffScan, NoisyCliffsMatchWithinAPointAndDeepenBeyondTheirNoise)
{
    CliffMap base = map_with({cliff_at(27, 1.0, 0.8)});
    CliffMap run = map_with({cliff_at(28, 1.0, 0.79)});
    base.noise.assign(base.x.size(), 0.01);
    run.noise.assign(run.x.size(), 0.01);
    const auto same = judged(run, base);
    ASSERT_EQ(same.size(), 1u);
    EXPECT_EQ(same[0].judgement.verdict, Verdict::passed) << same[0].judgement.message;
    CliffMap deep = map_with({cliff_at(28, 1.0, 0.6)});
    deep.noise = run.noise;
    const auto deeper = judged(deep, base);
    ASSERT_EQ(deeper.size(), 1u);
    EXPECT_EQ(deeper[0].judgement.verdict, Verdict::regressed) << deeper[0].judgement.message;
    EXPECT_NE(deeper[0].judgement.message.find("(the baseline's at SLOTS_KIB=27..28)"), std::string::npos);
}

TEST(CliffScan, AMeasuredDepthThatMovesLessThanTheToleranceIsTheSameCliff)
{
    // Depth -20 % in the baseline, -21 % now, with a noise far below a point of depth: a clean
    // rescan moves a cliff's depth by that much between processes, and more where the step finder
    // places the edge of a wide rise a point further.
    CliffMap base = map_with({cliff_at(27, 1.0, 0.8)});
    CliffMap run = map_with({cliff_at(27, 1.0, 0.79)});
    base.noise.assign(base.x.size(), 1e-5);
    run.noise.assign(run.x.size(), 1e-5);
    const auto within = judged(run, base);
    ASSERT_EQ(within.size(), 1u);
    EXPECT_EQ(within[0].judgement.verdict, Verdict::passed) << within[0].judgement.message;
    const auto strict = judged(run, base, 0.0);
    ASSERT_EQ(strict.size(), 1u);
    EXPECT_EQ(strict[0].judgement.verdict, Verdict::regressed) << strict[0].judgement.message;
    // Beyond a quarter of its depth it deepened, whatever the noise.
    CliffMap deeper = map_with({cliff_at(27, 1.0, 0.7)});
    deeper.noise = run.noise;
    EXPECT_EQ(judged(deeper, base)[0].judgement.verdict, Verdict::regressed);
}

TEST(CliffScan, MapWithoutBaselineIsOneVerdict)
{
    auto s = scan_suite();
    s.variants.front().expect.clear();
    const CliffMap m = map_with({cliff_at(27, 1.0, 0.875)});
    const auto v = compare::judge_cliff_map(m, s, nullptr);
    ASSERT_EQ(v.size(), 1u);
    EXPECT_EQ(v[0].judgement.verdict, Verdict::no_baseline);
    EXPECT_EQ(v[0].carrier, "N=1048576 SLOTS_KIB=20");
    EXPECT_EQ(compare::judge_cliff_map(m, s, nullptr, true)[0].judgement.verdict, Verdict::not_gated);
}

TEST(CliffScan, ExpectRulesHoldWithOrWithoutBaseline)
{
    const auto s = scan_suite(); // staged: expect cliff_depth <= 0.5
    const auto fine = compare::judge_cliff_map(map_with({cliff_at(27, 1.0, 0.875)}), s, nullptr);
    ASSERT_EQ(fine.size(), 2u);
    EXPECT_EQ(fine[1].judgement.verdict, Verdict::passed);
    EXPECT_EQ(fine[1].judgement.rule, "expect cliff_depth <= 0.5");

    const auto deep = compare::judge_cliff_map(map_with({cliff_at(31, 0.8, 0.2)}), s, nullptr);
    ASSERT_EQ(deep.size(), 2u);
    const auto& e = deep[1].judgement;
    EXPECT_EQ(e.verdict, Verdict::expect_failed);
    EXPECT_EQ(deep[1].carrier, "N=1048576 SLOTS_KIB=32");
    EXPECT_EQ(e.message, "the deepest cliff along SLOTS_KIB, at SLOTS_KIB=31..32, is 75 % deep (theoretical_occupancy "
                         "80 % -> 20 % (-75 %); caused by occupancy: resident blocks 8 -> 7 per SM (limiter: shared "
                         "memory)), expected cliff_depth <= 50 % (suite line 19)");

    const std::string text = edited(valid, "{cliff_depth: \"<= 0.5\"}", "{cliff_count: \"== 0\"}");
    const auto counted = compare::judge_cliff_map(map_with({cliff_at(27, 1.0, 0.875)}), scan_suite(text), nullptr);
    ASSERT_EQ(counted.size(), 2u);
    EXPECT_EQ(counted[1].judgement.verdict, Verdict::expect_failed);
    EXPECT_NE(counted[1].judgement.message.find("1 cliffs along SLOTS_KIB (at SLOTS_KIB=27..28), expected "
                                                "cliff_count == 0"),
              std::string::npos)
        << counted[1].judgement.message;
}

TEST(CliffScan, ExpectRulesScopedToMeasuredOrExactMaps)
{
    const std::string scoped = "{cliff_count: {measured: \">= 2\", exact: \"== 1\"}}";
    const auto s = scan_suite(edited(valid, "{cliff_depth: \"<= 0.5\"}", scoped));
    const auto& expect = s.variants.front().expect;
    ASSERT_EQ(expect.size(), 2u);
    EXPECT_EQ(expect[0].maps, suite::CliffMaps::measured);
    EXPECT_EQ(expect[0].rule.text, ">= 2");
    EXPECT_EQ(expect[0].where.line, 19);
    EXPECT_EQ(expect[1].maps, suite::CliffMaps::exact);
    EXPECT_EQ(expect[1].rule.text, "== 1");
    EXPECT_TRUE(expect[0].judges_map(false));
    EXPECT_FALSE(expect[0].judges_map(true));
    EXPECT_TRUE(expect[1].judges_map(true));
    EXPECT_FALSE(expect[1].judges_map(false));
    EXPECT_EQ(scan_suite().variants.front().expect.front().maps, suite::CliffMaps::all);

    // The static tier's exact map: only the exact rule judges it.
    const CliffMap exact = map_with({cliff_at(27, 1.0, 0.875)});
    const auto on_exact = compare::judge_cliff_map(exact, s, nullptr);
    ASSERT_EQ(on_exact.size(), 2u);
    EXPECT_EQ(on_exact[1].judgement.rule, "expect cliff_count == 1 on exact maps");
    EXPECT_EQ(on_exact[1].judgement.verdict, Verdict::passed);

    // A GPU's measured map (noisy): only the measured rule, which one cliff breaks.
    CliffMap measured = exact;
    measured.figure = "time";
    measured.unit = "us";
    measured.noise.assign(measured.x.size(), 0.01);
    const auto on_measured = compare::judge_cliff_map(measured, s, nullptr);
    ASSERT_EQ(on_measured.size(), 2u);
    EXPECT_EQ(on_measured[1].judgement.rule, "expect cliff_count >= 2 on measured maps");
    EXPECT_EQ(on_measured[1].judgement.verdict, Verdict::expect_failed);
    EXPECT_NE(on_measured[1].judgement.message.find(
                  "1 cliffs along SLOTS_KIB (at SLOTS_KIB=27..28), expected cliff_count >= 2 on measured maps "
                  "(suite line 19)"),
              std::string::npos)
        << on_measured[1].judgement.message;
    measured.cliffs.push_back(cliff_at(31, 0.875, 0.75));
    EXPECT_EQ(compare::judge_cliff_map(measured, s, nullptr)[1].judgement.verdict, Verdict::passed);

    // cliff_depth takes a scope too.
    const auto depth = scan_suite(edited(valid, "{cliff_depth: \"<= 0.5\"}", "{cliff_depth: {exact: \"<= 0.1\"}}"));
    const auto deep = compare::judge_cliff_map(map_with({cliff_at(31, 0.8, 0.2)}), depth, nullptr);
    ASSERT_EQ(deep.size(), 2u);
    EXPECT_EQ(deep[1].judgement.verdict, Verdict::expect_failed);
    EXPECT_NE(deep[1].judgement.message.find("expected cliff_depth <= 10 % on exact maps (suite line 19)"),
              std::string::npos)
        << deep[1].judgement.message;
    measured.cliffs = {cliff_at(31, 0.8, 0.2)};
    EXPECT_EQ(compare::judge_cliff_map(measured, depth, nullptr).size(), 1u) << "no rule for measured maps";
}

TEST(CliffScan, ScopedRulesOfTheSuiteAndTheVariant)
{
    // The suite's rules on both kinds of map hold for every variant that names no cliff_count...
    std::string text = edited(valid, "    expect: {cliff_depth: \"<= 0.5\"}\n", "");
    text = edited(text, "cliffs: {min_depth: 0.05}",
                  "cliffs: {min_depth: 0.05}\nexpect: {cliff_count: {measured: \">= 4\", exact: \"== 0\"}}");
    const auto s = scan_suite(text);
    const auto rules = s.expectations_for(s.variants.front());
    ASSERT_EQ(rules.size(), 2u);
    EXPECT_EQ(rules[0].maps, suite::CliffMaps::measured);
    EXPECT_EQ(rules[1].maps, suite::CliffMaps::exact);
    // ...and a variant's cliff_count, scoped or not, replaces both.
    const auto replaced = scan_suite(edited(text, "grid: [\"ceil_div(N, 256)\"]",
                                            "grid: [\"ceil_div(N, 256)\"]\n    expect: {cliff_count: \"<= 9\"}"));
    const auto own = replaced.expectations_for(replaced.variants.front());
    ASSERT_EQ(own.size(), 1u);
    EXPECT_EQ(own[0].maps, suite::CliffMaps::all);
    EXPECT_EQ(own[0].rule.text, "<= 9");
}

TEST(CliffScan, BadScopedRulesNameFileLineColumnAndField)
{
    const std::string file = suite_path.string();
    const std::string rule = "{cliff_depth: \"<= 0.5\"}";
    EXPECT_EQ(error_after(rule, "{cliff_depth: {gpu: \"<= 0.5\"}}"),
              file + ":19:28: variants.staged.expect.cliff_depth.gpu: unknown key; allowed: measured, exact");
    EXPECT_EQ(error_after(rule, "{cliff_depth: {}}"),
              file + ":19:27: variants.staged.expect.cliff_depth: expected a condition for the measured maps, the "
                     "exact maps or both");
    EXPECT_EQ(error_after(rule, "{cliff_depth: {measured: \"about 3\"}}"),
              file + ":19:38: variants.staged.expect.cliff_depth.measured: 'about 3': an expectation is an operator "
                     "(==, !=, <, <=, >, >=) and a number, e.g. '<= 64'");
    EXPECT_EQ(error_after(rule, "{cliff_depth: {measured: [1, 2]}}"),
              file + ":19:38: variants.staged.expect.cliff_depth.measured: expected a single value");
    EXPECT_EQ(error_after(rule, "{registers: {measured: \"<= 64\"}}"),
              file + ":19:25: variants.staged.expect.registers: expected a condition, e.g. '<= 64'; only cliff_count "
                     "and cliff_depth take a condition per kind of map ({measured: ..., exact: ...})");
}

TEST(CliffScan, VerdictsReachTheCarrierCaseTotalsAndWaivers)
{
    TempDir dir;
    const auto s = scan_suite();
    RunReport rep;
    rep.suite = s.name;
    rep.mode = RunMode::static_tier;
    for (int x = 20; x <= 40; ++x) {
        CaseResult r;
        r.suite = s.name;
        r.variant = "staged";
        r.arch = "sm_90";
        r.params = {{"N", 1048576}, {"SLOTS_KIB", x}};
        r.params_text = "N=1048576 SLOTS_KIB=" + std::to_string(x);
        r.status = CaseStatus::passed;
        rep.results.push_back(r);
    }
    rep.cliff_maps.push_back(map_with({cliff_at(23, 1.0, 0.875)}));
    compare::CliffBaselineFile recorded;
    recorded.set_meta("schema_version", "1");
    recorded.set_meta("suite", s.name);
    recorded.set_meta("key", "sm_90");
    recorded.rows = compare::cliff_rows(map_with({}));
    write_file(dir.path / s.name / "sm_90.cliffs.csv", compare::cliff_baseline_text(recorded));

    compare::CompareOptions gate;
    gate.baseline_dir = dir.path;
    gate.today = "2026-01-01";
    compare::compare_run(rep, s, gate);
    // The new cliff's verdict, and the expectation's on its deepest cliff, go to the case after the step.
    const CaseResult& carrier = rep.results[24 - 20];
    ASSERT_EQ(carrier.verdicts.size(), 2u);
    EXPECT_EQ(carrier.verdicts[0].metric, "cliff@SLOTS_KIB");
    EXPECT_EQ(carrier.verdicts[0].verdict, Verdict::regressed);
    EXPECT_EQ(carrier.verdicts[1].rule, "expect cliff_depth <= 0.5");
    EXPECT_EQ(totals(rep).regressed, 1u);
    ASSERT_EQ(rep.cliff_maps[0].verdicts.size(), 2u);
    EXPECT_EQ(rep.cliff_maps[0].verdicts[0].carrier, carrier.params_text);
    EXPECT_NE(std::find(rep.baseline_files.begin(), rep.baseline_files.end(),
                        (dir.path / s.name / "sm_90.cliffs.csv").string()),
              rep.baseline_files.end());

    write_file(dir.path / "waivers.yaml", R"(waivers:
  - suite: scan
    metric: cliff@SLOTS_KIB
    reason: the staging buffer grew on purpose
    expires: 2026-12-31
)");
    compare::compare_run(rep, s, gate);
    EXPECT_EQ(rep.results[4].verdicts[0].verdict, Verdict::waived);
    EXPECT_NE(rep.results[4].verdicts[0].message.find("[waived until 2026-12-31"), std::string::npos);
    EXPECT_EQ(rep.cliff_maps[0].verdicts[0].judgement.verdict, Verdict::waived);
    EXPECT_EQ(totals(rep).regressed, 0u);
    EXPECT_EQ(totals(rep).waived, 1u);
}

TEST(CliffScan, PlantedMovedStepFailsTheRunNamingPlaceAndCause)
{
    TempDir dir;
    const auto out =
        run_tool_captured({"run", "--static", (repo_root() / "tests/suites/shared_step_moved.yaml").string(),
                           "--baseline-dir", (repo_root() / "tests/baselines").string(), "--out", dir.path.string()});
    EXPECT_EQ(out.code, 1) << out.out << out.err;
    const std::string all = out.out + out.err;
    EXPECT_NE(all.find("cliff@SLOTS_KIB: new cliff at SLOTS_KIB=23..24: theoretical_occupancy 100 % -> 87.5 % "
                       "(-12.5 %)"),
              std::string::npos)
        << all;
    EXPECT_NE(all.find("resident blocks 8 -> 7 per SM (limiter: shared memory)"), std::string::npos);
    EXPECT_NE(all.find("cliff at SLOTS_KIB=27..28 deepened: -12.5 % -> -14.3 %"), std::string::npos);
    EXPECT_NE(all.find("the cliff at SLOTS_KIB=31..32 of the baseline is gone"), std::string::npos);
    const RunReport rep = read_results_json(dir.path / "shared_step_moved" / "results.json");
    ASSERT_EQ(rep.cliff_maps.size(), 1u);
    EXPECT_EQ(rep.cliff_maps[0].verdicts.size(), 5u);
}

} // namespace cliff_scan_test
