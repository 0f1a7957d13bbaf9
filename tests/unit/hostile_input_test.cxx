// Bad and hostile input: every reproducer of a defect found by fuzzing and by hand is refused
// with exit 2 and the file, line and field, and nothing is written outside where it belongs.

#include "harness/cli/commands.hxx"
#include "harness/compare/baseline_file.hxx"
#include "harness/compare/baseline_update.hxx"
#include "harness/compare/cliff_baseline.hxx"
#include "harness/compare/waivers.hxx"
#include "harness/core/error.hxx"
#include "harness/core/file_transaction.hxx"
#include "harness/core/input_files.hxx"
#include "harness/core/rule_syntax.hxx"
#include "harness/core/text.hxx"
#include "harness/report/reporters.hxx"
#include "harness/suite/expression.hxx"
#include "harness/suite/suite.hxx"
#include "suite_edits.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"

#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <sstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace hostile_input_test {

using namespace harness;
namespace fs = std::filesystem;

namespace {

// A suite parsed as if it lived in the repository's suites/ folder.
const fs::path suite_path = repo_root() / "suites" / "hostile.yaml";

const std::string valid = R"(suite: hostile
params:
  N: [256, 1024]
reference: a
buffers:
  x: {type: f32, count: N, init: uniform, seed: 1}
  y: {type: f32, count: N, role: out}
variants:
  a:
    source: ../kernels/memory/vector_add.cu
    entry: vector_add
    block: [256]
    grid: [ceil_div(N, 256)]
    args: [x, x, y, {i32: N}]
)";

/// The load error after replacing `from` with `to` in the valid suite.
std::string error_after(const std::string& from, const std::string& to)
{
    return load_error_after_edit(valid, suite_path, from, to);
}

} // namespace

TEST(HostileSuite, TheValidSuiteLoads)
{
    EXPECT_NO_THROW(suite::parse_suite(valid, suite_path));
}

TEST(HostileSuite, NamesThatWouldLeaveTheirFolderAreRefused)
{
    EXPECT_NE(
        error_after("suite: hostile", "suite: \"..\"").find("hostile.yaml:1:8: suite: the suite name starts with"),
        std::string::npos);
    EXPECT_NE(error_after("suite: hostile", "suite: .").find("suite: the suite name"), std::string::npos);
    EXPECT_NE(error_after("suite: hostile", "suite: a/b").find("suite: the suite name uses a character"),
              std::string::npos);
    EXPECT_NE(error_after("suite: hostile", "suite: " + std::string(300, 'a')).find("300 characters long"),
              std::string::npos);
    EXPECT_NE(error_after("  a:\n    source", "  ..:\n    source").find("variants..."), std::string::npos);
}

TEST(HostileSuite, SourcesAndIncludesStayInsideTheProject)
{
    const std::string passwd = error_after("../kernels/memory/vector_add.cu", "/etc/passwd");
    EXPECT_NE(passwd.find("variants.a.source: /etc/passwd lies outside the project"), std::string::npos) << passwd;
    EXPECT_NE(passwd.find("--sources-anywhere"), std::string::npos);
    EXPECT_EQ(passwd.find("root:"), std::string::npos) << "the file's content must not be echoed";
    EXPECT_NE(error_after("../kernels/memory/vector_add.cu", "/proc/self/environ").find("lies outside the project"),
              std::string::npos);
    EXPECT_NE(error_after("params:", "include: [/usr/include]\nparams:").find("include: /usr/include lies outside"),
              std::string::npos);

    // With the switch, a kernel outside the project loads.
    TempDir dir{"harness-hostile-test"};
    write_file(dir.path / "k.cu", "extern \"C\" __global__ void k(float* y) {}\n");
    std::string text = valid;
    text.replace(text.find("../kernels/memory/vector_add.cu"), 31, (dir.path / "k.cu").string());
    EXPECT_THROW(suite::parse_suite(text, suite_path), InputError);
    const auto s = suite::parse_suite(text, suite_path, {.sources_anywhere = true, .working_folder = {}});
    EXPECT_EQ(s.variants[0].source, dir.path / "k.cu");
    EXPECT_EQ(s.project_root, fs::canonical(repo_root()));
}

TEST(HostileSuite, OptionsThatWriteFilesOrWidenIncludesAreRefused)
{
    for (const char* option :
         {"--time=/tmp/x", "--fdevice-time-trace=/tmp/y", "-I/etc", "--include-path=/etc", "--pre-include=/etc/passwd",
          "-include", "/etc", "-Xptxas=-o,/tmp/x", "--gpu-architecture=sm_50"}) {
        const std::string e = error_after("    entry: vector_add",
                                          "    options: [\"" + std::string(option) + "\"]\n    entry: vector_add");
        EXPECT_NE(e.find("variants.a.options[0]"), std::string::npos) << option << ": " << e;
    }
    for (const char* option : {"-maxrregcount=64", "-Xptxas=-v,-O3", "--use_fast_math", "-DTILE=32", "-lineinfo"})
        EXPECT_EQ(suite::nvrtc_option_problem(option), "") << option;
    EXPECT_NE(error_after("    entry: vector_add", "    defines: {\"A B\": 1}\n    entry: vector_add")
                  .find("a macro name must be an identifier"),
              std::string::npos);
}

TEST(HostileSuite, EntryIsACppNameAndNothingElse)
{
    EXPECT_NE(error_after("entry: vector_add", "entry: \"vector_add\\n#include \\\"/etc/passwd\\\"\"")
                  .find("variants.a.entry"),
              std::string::npos);
    EXPECT_NE(error_after("entry: vector_add", "entry: \"a; b\"").find("not a kernel name"), std::string::npos);
    EXPECT_NE(error_after("entry: vector_add", "entry: \"t<1>>\"").find("brackets do not match"), std::string::npos);
    EXPECT_NE(error_after("entry: vector_add", "entry: vector_\x80").find("not UTF-8"), std::string::npos);
    EXPECT_NE(error_after("suite: hostile", "suite: hostile\x80").find("hostile.yaml:1:15: the file is not UTF-8"),
              std::string::npos);
}

TEST(HostileSuite, DuplicateKeysAreErrors)
{
    EXPECT_NE(error_after("reference: a", "reference: a\nsuite: other").find("hostile.yaml:5:1: suite: given twice"),
              std::string::npos);
    EXPECT_NE(error_after("  N: [256, 1024]", "  N: [256, 1024]\n  N: [1]").find("params.N: given twice"),
              std::string::npos);
    EXPECT_NE(error_after("    entry: vector_add", "    entry: vector_add\n    entry: other").find("given twice"),
              std::string::npos);
    EXPECT_NE(
        error_after("    block: [256]", "    block: [256]\n    block: [128]").find("variants.a.block: given twice"),
        std::string::npos);
    EXPECT_NE(error_after("variants:", "variants:\n  a: {source: x}\n").find("variants.a: given twice"),
              std::string::npos);
}

TEST(HostileSuite, NumbersMustBeFiniteAndInRange)
{
    EXPECT_NE(
        error_after("reference: a", "reference: a\ntolerance: {rel: nan}").find("tolerance.rel: expected a finite"),
        std::string::npos);
    EXPECT_NE(
        error_after("reference: a", "reference: a\ntolerance: {abs: inf}").find("tolerance.abs: expected a finite"),
        std::string::npos);
    EXPECT_NE(error_after("reference: a", "reference: a\ntiming: {timeout_s: nan}").find("timing.timeout_s"),
              std::string::npos);
    EXPECT_NE(error_after("reference: a", "reference: a\ntiming: {min_samples: 4294967297}")
                  .find("timing.min_samples: 4294967297 is outside 1..100000"),
              std::string::npos);
    EXPECT_NE(error_after("seed: 1", "seed: -1").find("buffers.x.seed"), std::string::npos);
}

TEST(HostileSuite, SweepsAreCountedBeforeTheyAreBuilt)
{
    EXPECT_NE(
        error_after("[256, 1024]", "{from: 1, to: 100000000000}").find("100000000000 values, more than the 10000"),
        std::string::npos);
    // Near INT64_MAX the range neither overflows nor grows: 8 values.
    EXPECT_NE(error_after("[256, 1024]", "{from: 9223372036854775800, to: 9223372036854775807}")
                  .find("9223372036854775800 elements at N=9223372036854775800"),
              std::string::npos);
    std::string two_params = valid;
    two_params.replace(two_params.find("  N: [256, 1024]"), 16, "  N: {from: 1, to: 1000}\n  M: {from: 1, to: 1000}");
    try {
        suite::parse_suite(two_params, suite_path);
        ADD_FAILURE() << "a sweep of a million points loaded";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("params: the sweep has more than 10000 points"), std::string::npos)
            << e.what();
    }
}

TEST(HostileSuite, ScansAreCountedBeforeTheyAreBuiltAndOneAxisAtMost)
{
    EXPECT_NE(error_after("[256, 1024]", "{scan: [-9223372036854775807, 9223372036854775807]}")
                  .find("params.N.scan: the scan has 18446744073709551615 values, more than the 10000"),
              std::string::npos);
    EXPECT_NE(error_after("[256, 1024]", "{scan: [1, 2], mul: 2}").find("params.N.mul: unknown key"),
              std::string::npos);
    EXPECT_NE(error_after("[256, 1024]", "{scan: {from: 1, to: 2}}").find("params.N.scan: expected [first, last]"),
              std::string::npos);
    EXPECT_NE(error_after("[256, 1024]", "{scan: [1, 2], step: 9223372036854775808}").find("params.N.step"),
              std::string::npos);
}

TEST(HostileFiles, CliffBaselinesRefuseAnotherSuitesIdentityAndTraversingKeys)
{
    const std::string head = "# harness cliff baseline\n# schema_version: 1\n# suite: other\n# key: sm_90\n"
                             "variant,axis,others,figure,x_before,x_after,level_before,level_after,depth,cause\n";
    const auto file = compare::parse_cliff_baseline(head + "a,N,,t,1,2,1,0.5,-0.5,tiles\n", "c.csv");
    EXPECT_THROW(compare::check_baseline_identity(file, "c.csv", "gemm", "sm_90"), InputError);
    EXPECT_THROW(compare::parse_cliff_baseline(head + "a,N,,t,1,2,1,0.5,-0.5,tiles\n\xff\n", "c.csv"), InputError);
    EXPECT_THROW(compare::parse_cliff_baseline("# harness baseline\n# schema_version: 1\n", "c.csv"), InputError);
    EXPECT_THROW(compare::cliff_baseline_path("baselines", "gemm", "../reduce/sm_90"), Error);
    EXPECT_EQ(compare::cliff_baseline_path("baselines", "gemm", "sm_90"), fs::path("baselines/gemm/sm_90.cliffs.csv"));
}

TEST(HostileSuite, ExpressionsAreBoundedInLengthAndDepth)
{
    EXPECT_THROW(suite::Expression::parse(std::string(20000, '(') + "1" + std::string(20000, ')')),
                 suite::ExpressionError);
    std::string terms = "N";
    for (int i = 0; i < 100000; ++i) terms += "+N";
    EXPECT_THROW(suite::Expression::parse(terms), suite::ExpressionError);
    std::string chain = "1";
    for (int i = 0; i < 1000; ++i) chain += "+1"; // under the length limit, over the depth limit
    EXPECT_THROW(suite::Expression::parse(chain), suite::ExpressionError);
    EXPECT_THROW(suite::Expression::parse(std::string(150, '-') + "1"), suite::ExpressionError);
    // What suites write stays well inside.
    EXPECT_EQ(suite::Expression::parse(std::string(50, '(') + "2*3" + std::string(50, ')')).evaluate({}), 6);
    std::string sum = "1";
    for (int i = 0; i < 100; ++i) sum += "+1";
    EXPECT_EQ(suite::Expression::parse(sum).evaluate({}), 101);
}

TEST(HostileSuite, LaunchGeometryIsCheckedAtLoad)
{
    EXPECT_NE(
        error_after("block: [256]", "block: [0]").find("hostile.yaml:12:12: variants.a.block: block.x is 0 at N=256"),
        std::string::npos);
    EXPECT_NE(error_after("block: [256]", "block: [2048]").find("block.x is 2048"), std::string::npos);
    EXPECT_NE(error_after("block: [256]", "block: [64, 64]").find("4096 threads per block"), std::string::npos);
    EXPECT_NE(error_after("block: [256]", "block: [256]\n    shared_bytes: -1")
                  .find("variants.a.shared_bytes: -1 bytes of dynamic shared memory"),
              std::string::npos);
    EXPECT_NE(error_after("block: [256]", "block: [256]\n    shared_bytes: 200000")
                  .find("it must be 0 to 166912 (sm_80 per block)"),
              std::string::npos);
    EXPECT_NE(error_after("grid: [ceil_div(N, 256)]", "grid: [N / (N - 256)]").find("division by zero"),
              std::string::npos);
    EXPECT_NE(error_after("{i32: N}", "{i32: N * 4194304}").find("does not fit i32"), std::string::npos);
    EXPECT_NE(error_after("count: N, role", "count: -N, role").find("buffers.y.count: -256 elements"),
              std::string::npos);
    EXPECT_NE(error_after("params:", "archs: [sm_10]\nparams:").find("archs: unknown architecture 'sm_10'"),
              std::string::npos);
}

TEST(HostileFiles, ResultsFilesThatAreNotResultsAreBadInput)
{
    TempDir dir{"harness-hostile-test"};
    const auto expect_bad_input = [&](const std::string& text, const std::string& message) {
        write_file(dir.path / "results.json", text);
        try {
            harness::read_results_json(dir.path / "results.json");
            ADD_FAILURE() << "accepted: " << text;
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::bad_input) << e.what();
            EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
        }
    };
    expect_bad_input(R"({"schema": 5})", "not a harness results file");
    expect_bad_input(R"({"schema": "harness-results", "schema_version": "1"})", "results schema version \"1\"");
    expect_bad_input(R"({"schema": "harness-results", "schema_version": 1, "x": 1e999})", "not valid JSON");
    expect_bad_input("\x80", "not valid JSON");
    const std::string head = R"({"schema": "harness-results", "schema_version": 1, "mode": "gpu", "suite": "gemm",)";
    expect_bad_input(head + R"("results": [{"suite": "gemm", "variant": "a", "arch": "../reduce/sm_90",
        "params": {}, "params_text": "", "status": "passed", "metrics": {}}]})",
                     "results[0].arch '../reduce/sm_90'");
    expect_bad_input(head + R"("results": [{"suite": "gemm", "variant": "a", "arch": "/tmp/x",
        "params": {}, "params_text": "", "status": "passed", "metrics": {}}]})",
                     "results[0].arch '/tmp/x'");
    expect_bad_input(head + R"("results": [{"suite": "gemm", "variant": "a", "arch": "sm_90",
        "params": {}, "params_text": "", "status": "passed", "metrics": {},
        "hotspots": [{"metric": "m", "line": 1, "snippet_first_line": 2147483647, "snippet": ["x", "y"]}]}]})",
                     "out of range");
    fs::create_directories(dir.path / "folder.json");
    EXPECT_THROW(harness::read_results_json(dir.path / "folder.json"), InputError);
}

TEST(HostileFiles, WaiverFilesRefuseDuplicatesAndNonUtf8)
{
    const std::string w = "waivers:\n  - {suite: gemm, metric: registers, reason: known, expires: 2099-01-01}\n";
    EXPECT_NO_THROW(compare::parse_waivers(w, "w.yaml"));
    EXPECT_THROW(
        compare::parse_waivers(
            "waivers:\n  - {suite: gemm, suite: x, metric: registers, reason: r, expires: 2099-01-01}\n", "w.yaml"),
        InputError);
    EXPECT_THROW(compare::parse_waivers(w + "waivers: []\n", "w.yaml"), InputError);
    try {
        compare::parse_waivers("waivers:\n  - {suite: gemm, metric: registers, reason: \x80, expires: 2099-01-01}\n",
                               "w.yaml");
        ADD_FAILURE();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("w.yaml:2:"), std::string::npos) << e.what();
    }
}

TEST(HostileFiles, BaselinesRefuseRepeatedRowsAndAnotherSuitesIdentity)
{
    const std::string head = "# harness baseline\n# schema_version: 1\n# suite: other\n# key: sm_90\n"
                             "variant,params,metric,value,samples,source\n";
    const auto file = compare::parse_baseline(head + "a,N=1,registers,10,,static\n", "b.csv");
    EXPECT_THROW(compare::check_baseline_identity(file, "b.csv", "gemm", "sm_90"), InputError);
    EXPECT_NO_THROW(compare::check_baseline_identity(file, "b.csv", "other", "sm_90"));
    EXPECT_THROW(compare::check_baseline_identity(file, "b.csv", "other", "sm_80"), InputError);
    try {
        compare::parse_baseline(head + "a,N=1,registers,10,,static\na,N=1,registers,12,,static\n", "b.csv");
        ADD_FAILURE();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("b.csv:7:1: a second row for a N=1 registers (the first is on line 6)"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_THROW(compare::baseline_path("baselines", "..", "sm_90"), Error);
    EXPECT_THROW(compare::baseline_path("baselines", "gemm", "../reduce/sm_90"), Error);
    EXPECT_THROW(compare::baseline_path("baselines", "gemm", "/tmp/x"), Error);
}

namespace {

/// A scratch project: the suite above with its kernel, and an empty baselines folder.
struct Project {
    TempDir dir{"harness-hostile-test"};
    fs::path suite = dir.path / "suites" / "hostile.yaml";
    fs::path baselines = dir.path / "baselines";
    Project()
    {
        write_file(suite, valid);
        fs::create_directories(dir.path / "kernels" / "memory");
        fs::copy_file(repo_root() / "kernels" / "memory" / "vector_add.cu",
                      dir.path / "kernels" / "memory" / "vector_add.cu");
        fs::create_directories(baselines);
    }
};

CaseResult passed_case(const std::string& variant, const std::string& params, const std::string& arch, double regs)
{
    CaseResult r;
    r.suite = "hostile";
    r.variant = variant;
    r.params_text = params;
    r.arch = arch;
    r.status = CaseStatus::passed;
    r.set_metric("registers", regs);
    return r;
}

harness::RunReport static_run(std::vector<CaseResult> results)
{
    harness::RunReport rep;
    rep.suite = "hostile";
    rep.mode = RunMode::static_tier;
    rep.results = std::move(results);
    return rep;
}

} // namespace

TEST(BaselineUpdate, ADotDotSuiteOrATraversingArchWritesNothingAndExitsTwo)
{
    Project p;
    write_file(p.baselines / "reduce" / "sm_90.csv", "precious\n");
    const auto before = snapshot(p.dir.path);

    std::string dotdot = valid;
    dotdot.replace(0, 14, "suite: \"..\"");
    ASSERT_THROW(suite::parse_suite(dotdot, suite_path), InputError);
    write_file(p.dir.path / "suites" / "dotdot.yaml", dotdot);
    EXPECT_EQ(cli::run_tool({"baseline", "update", "--static", "--no-ci", "--no-cache",
                             (p.dir.path / "suites" / "dotdot.yaml").string(), "--baseline-dir", p.baselines.string()}),
              2);
    EXPECT_EQ(cli::run_tool({"run", "--static", "--no-cache", (p.dir.path / "suites" / "dotdot.yaml").string(),
                             "--baseline-dir", p.baselines.string(), "--out", (p.dir.path / "out" / "o").string()}),
              2);

    const std::string results = R"({"schema": "harness-results", "schema_version": 1, "mode": "static",
        "suite": "hostile", "results": [{"suite": "hostile", "variant": "a", "arch": "../reduce/sm_90",
        "params": {"N": 256}, "params_text": "N=256", "status": "passed", "metrics": {"registers": 8}}]})";
    write_file(p.dir.path / "results.json", results);
    fs::remove(p.dir.path / "suites" / "dotdot.yaml");
    auto with_inputs = snapshot(p.dir.path);
    EXPECT_EQ(cli::run_tool({"baseline", "update", "--no-ci", "--from", (p.dir.path / "results.json").string(),
                             p.suite.string(), "--baseline-dir", p.baselines.string()}),
              2);
    EXPECT_EQ(snapshot(p.dir.path), with_inputs);
    EXPECT_EQ(read_file(p.baselines / "reduce" / "sm_90.csv"), "precious\n");
    with_inputs.erase("results.json");
    EXPECT_EQ(with_inputs, before);
}

TEST(BaselineUpdate, AnUpdateThatFailsHalfwayLeavesEveryFileByteIdentical)
{
    Project p;
    const auto s = suite::load_suite(p.suite);
    // A first update records both architectures.
    compare::update_baselines(
        s, static_run({passed_case("a", "N=256", "sm_80", 10), passed_case("a", "N=256", "sm_90", 12)}), p.baselines);
    const auto recorded = snapshot(p.baselines);
    ASSERT_EQ(recorded.size(), 2u);

    // A case the suite does not have: refused before anything is written.
    EXPECT_THROW(compare::update_baselines(
                     s, static_run({passed_case("a", "N=256", "sm_80", 20), passed_case("nope", "N=256", "sm_90", 20)}),
                     p.baselines),
                 Error);
    EXPECT_EQ(snapshot(p.baselines), recorded);

    // The same case twice: refused.
    EXPECT_THROW(compare::update_baselines(
                     s, static_run({passed_case("a", "N=256", "sm_80", 20), passed_case("a", "N=256", "sm_80", 21)}),
                     p.baselines),
                 Error);
    EXPECT_EQ(snapshot(p.baselines), recorded);

    // A malformed sm_90.csv: sm_80.csv (read and merged first) is not rewritten either.
    const fs::path sm90 = p.baselines / "hostile" / "sm_90.csv";
    write_file(sm90, read_file(sm90) + "broken,row\n");
    const auto damaged = snapshot(p.baselines);
    EXPECT_THROW(compare::update_baselines(
                     s, static_run({passed_case("a", "N=256", "sm_80", 20), passed_case("a", "N=256", "sm_90", 20)}),
                     p.baselines),
                 InputError);
    EXPECT_EQ(snapshot(p.baselines), damaged);

    // A file that cannot be replaced (here a folder where sm_90.csv goes): the rename of sm_80.csv
    // that came first is undone.
    fs::remove(sm90);
    fs::create_directories(sm90);
    write_file(sm90 / "inside", "x");
    const auto blocked = snapshot(p.baselines);
    EXPECT_THROW(compare::update_baselines(
                     s, static_run({passed_case("a", "N=256", "sm_80", 30), passed_case("a", "N=256", "sm_90", 30)}),
                     p.baselines),
                 Error);
    EXPECT_EQ(snapshot(p.baselines), blocked);
    for (const auto& e : fs::directory_iterator(p.baselines / "hostile")) {
        const std::string name = e.path().filename().string();
        EXPECT_TRUE(name == "sm_80.csv" || name == "sm_90.csv") << "left behind: " << e.path();
    }
}

TEST(BaselineUpdate, ConcurrentUpdatesOfOneFileBothLand)
{
    Project p;
    const auto s = suite::load_suite(p.suite);
    for (int round = 0; round < 20; ++round) {
        fs::remove_all(p.baselines / "hostile");
        std::thread first([&] {
            compare::update_baselines(s, static_run({passed_case("a", "N=256", "sm_90", 10 + round)}), p.baselines);
        });
        std::thread second([&] {
            compare::update_baselines(s, static_run({passed_case("a", "N=1024", "sm_90", 20 + round)}), p.baselines);
        });
        first.join();
        second.join();
        const auto file = compare::read_baseline(p.baselines / "hostile" / "sm_90.csv");
        ASSERT_NE(file.find("a", "N=256", "registers"), nullptr) << "round " << round;
        ASSERT_NE(file.find("a", "N=1024", "registers"), nullptr) << "round " << round;
        EXPECT_EQ(file.find("a", "N=256", "registers")->value, 10 + round);
    }
}

TEST(BaselineUpdate, ABaselineFromAnotherSuiteIsRefused)
{
    Project p;
    write_file(p.baselines / "hostile" / "sm_90.csv",
               "# harness baseline\n# schema_version: 1\n# suite: reduce\n# key: sm_90\n"
               "variant,params,metric,value,samples,source\n");
    const auto before = snapshot(p.baselines);
    EXPECT_THROW(compare::update_baselines(suite::load_suite(p.suite),
                                           static_run({passed_case("a", "N=256", "sm_90", 10)}), p.baselines),
                 InputError);
    EXPECT_EQ(snapshot(p.baselines), before);
}

TEST(HostileCli, AMissingOrFolderWaiverFileIsBadInput)
{
    Project p;
    const auto run = [&](const std::string& waivers) {
        return cli::run_tool({"run", "--static", "--no-cache", p.suite.string(), "--baseline-dir", p.baselines.string(),
                              "--waivers", waivers, "--out", (p.dir.path / "out").string()});
    };
    EXPECT_EQ(run((p.dir.path / "missing.yaml").string()), 2);
    EXPECT_EQ(run(p.dir.path.string()), 2);
    EXPECT_FALSE(fs::exists(p.dir.path / "out"));
}

TEST(HostileCli, BadSuitesExitTwoFromEveryCommand)
{
    Project p;
    std::string bad = valid;
    bad.replace(bad.find("block: [256]"), 12, "block: [0]");
    write_file(p.suite, bad);
    for (const char* command : {"check", "list", "run"}) {
        std::vector<std::string> args = {command, p.suite.string(), "--no-cache"};
        if (std::string(command) == "run")
            args.insert(args.end(), {"--static", "--out", (p.dir.path / "out").string()});
        EXPECT_EQ(cli::run_tool(args), 2) << command;
    }
    EXPECT_FALSE(fs::exists(p.dir.path / "out"));
}

TEST(HostileCli, AMalformedCliffRulePerKindOfMapExitsTwoAndWritesNothing)
{
    // `expect: {cliff_count: {measured: ...}}`: its keys and conditions come from the file too.
    const auto run_with = [](const std::string& rule, std::string& console) {
        Project p;
        std::string suite = valid;
        suite.replace(suite.find("N: [256, 1024]"), 14, "N: {scan: [256, 1024], step: 256}");
        suite.replace(suite.find("    args: [x, x, y, {i32: N}]"), 29,
                      "    args: [x, x, y, {i32: N}]\n    expect: " + rule);
        write_file(p.suite, suite);
        const fs::path out = p.dir.path / "out";
        testing::internal::CaptureStderr();
        const int code =
            cli::run_tool({"run", p.suite.string(), "--no-cache", "--static", "--no-ci", "--out", out.string()});
        console = testing::internal::GetCapturedStderr();
        return std::pair{code, fs::exists(out)};
    };
    std::string console;
    EXPECT_EQ(run_with("{cliff_count: {measured: \"== 0\"}}", console), std::pair(0, true)) << console;
    for (const auto& [rule, field] : std::vector<std::pair<std::string, std::string>>{
             {"{cliff_count: {gpu: \"== 1\"}}", "variants.a.expect.cliff_count.gpu: unknown key"},
             {"{cliff_count: {measured: {exact: \"== 1\"}}}", "variants.a.expect.cliff_count.measured:"},
             {"{cliff_depth: {measured: \"<= 1e999\"}}", "variants.a.expect.cliff_depth.measured:"},
             {"{cliff_count: {}}", "variants.a.expect.cliff_count: expected a condition"},
             {"{registers: {measured: \"<= 64\"}}", "variants.a.expect.registers: expected a condition"}}) {
        EXPECT_EQ(run_with(rule, console), std::pair(2, false)) << rule << "\n" << console;
        EXPECT_NE(console.find("hostile.yaml:15:"), std::string::npos) << console;
        EXPECT_NE(console.find(field), std::string::npos) << console;
    }
}

TEST(FileTransaction, ReplacesEveryFileOrNone)
{
    TempDir dir{"harness-hostile-test"};
    write_file(dir.path / "a", "old a");
    write_file(dir.path / "b", "old b");
    replace_files_together({{dir.path / "a", "new a"}, {dir.path / "b", "new b"}, {dir.path / "sub" / "c", "new c"}});
    EXPECT_EQ(read_file(dir.path / "a"), "new a");
    EXPECT_EQ(read_file(dir.path / "sub" / "c"), "new c");

    fs::create_directories(dir.path / "d");
    const auto before = snapshot(dir.path);
    EXPECT_THROW(replace_files_together({{dir.path / "a", "newer a"}, {dir.path / "e", "e"}, {dir.path / "d", "d"}}),
                 Error);
    EXPECT_EQ(snapshot(dir.path), before);
    EXPECT_FALSE(fs::exists(dir.path / "e"));
}

TEST(FileTransaction, AReadOnlyFolderSaysPermissionDenied)
{
    if (geteuid() == 0) GTEST_SKIP() << "root writes into read-only folders";
    TempDir dir{"harness-hostile-test"};
    write_file(dir.path / "a", "old");
    fs::permissions(dir.path, fs::perms::owner_read | fs::perms::owner_exec);
    try {
        replace_files_together({{dir.path / "a", "new"}});
        ADD_FAILURE();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("Permission denied"), std::string::npos) << e.what();
    }
    fs::permissions(dir.path, fs::perms::owner_all);
    EXPECT_EQ(read_file(dir.path / "a"), "old");
}

TEST(InputFiles, NamesPathsAndUtf8)
{
    EXPECT_EQ(name_problem("gemm"), "");
    EXPECT_EQ(name_problem("NVIDIA-H100-80GB-HBM3"), "");
    EXPECT_NE(name_problem(".."), "");
    EXPECT_NE(name_problem(""), "");
    EXPECT_NE(name_problem("a/b"), "");
    EXPECT_NE(name_problem("-rf"), "");
    EXPECT_TRUE(is_inside(repo_root() / "kernels" / "x.cu", repo_root()));
    EXPECT_FALSE(is_inside(repo_root() / ".." / "x.cu", repo_root()));
    EXPECT_FALSE(is_inside("/etc/passwd", repo_root()));
    EXPECT_EQ(invalid_utf8_offset("plain ascii"), std::string::npos);
    EXPECT_EQ(invalid_utf8_offset("caf\xc3\xa9 \xe2\x82\xac"), std::string::npos);
    EXPECT_EQ(invalid_utf8_offset("ab\x80"), 2u);
    EXPECT_EQ(invalid_utf8_offset("\xc0\xaf"), 0u);     // an overlong '/'
    EXPECT_EQ(invalid_utf8_offset("\xed\xa0\x80"), 0u); // a surrogate
    EXPECT_EQ(invalid_utf8_offset("x\xe2\x82"), 1u);    // cut short
}

TEST(HostileFiles, BaselineErrorsNameTheLineAfterAQuotedLineBreak)
{
    const std::string head = "# harness baseline\n# schema_version: 1\nvariant,params,metric,value,samples,source\n";
    try {
        // Line 4 holds a field with a line break, so the bad value is on line 6, not 5.
        compare::parse_baseline(head + "\"a\nb\",N=1,registers,10,,static\na,N=1,registers,ten,,static\n", "b.csv");
        ADD_FAILURE();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("b.csv:6:1: value"), std::string::npos) << e.what();
    }
}

TEST(FileTransaction, ALinkAtATargetIsReplacedNotWrittenThrough)
{
    TempDir dir{"harness-hostile-test"};
    write_file(dir.path / "outside", "precious");
    fs::create_directories(dir.path / "b");
    fs::create_symlink(dir.path / "outside", dir.path / "b" / "sm_90.csv");
    replace_files_together({{dir.path / "b" / "sm_90.csv", "new"}});
    EXPECT_EQ(read_file(dir.path / "outside"), "precious");
    EXPECT_FALSE(fs::is_symlink(dir.path / "b" / "sm_90.csv"));
    EXPECT_EQ(read_file(dir.path / "b" / "sm_90.csv"), "new");
    EXPECT_EQ(std::distance(fs::directory_iterator(dir.path / "b"), fs::directory_iterator{}), 1);
}

namespace {

/// The exit code of the tool and what it printed on stderr.
std::pair<int, std::string> tool_with_stderr(const std::vector<std::string>& args)
{
    testing::internal::CaptureStdout();
    testing::internal::CaptureStderr();
    const int code = cli::run_tool(args);
    testing::internal::GetCapturedStdout();
    return {code, testing::internal::GetCapturedStderr()};
}

/// A static run's results.json for the scratch project's suite, with `extra` ("\"key\": value,")
/// among its top-level fields.
std::string static_results(const std::string& extra)
{
    return R"({"schema": "harness-results", "schema_version": 2, "mode": "static", "suite": "hostile", )" + extra +
           R"( "results": [{"suite": "hostile", "variant": "a", "arch": "sm_90", "params": {"N": 256},
           "params_text": "N=256", "status": "passed", "metrics": {"registers": 8}}]})";
}

} // namespace

TEST(BaselineUpdate, ALineBreakInTheResultsMetadataIsRefusedAndNothingIsWritten)
{
    Project p;
    const fs::path results = p.dir.path / "results.json";
    const auto update = [&] {
        return cli::run_tool({"baseline", "update", "--no-ci", "--no-cache", "--from", results.string(),
                              p.suite.string(), "--baseline-dir", p.baselines.string()});
    };
    // The file itself records.
    write_file(results, static_results(R"("cuda_version": "13.0", "device_name": "", "timestamp": "2026-01-01",)"));
    ASSERT_EQ(update(), 0);
    const auto recorded = snapshot(p.baselines);
    ASSERT_EQ(recorded.size(), 1u);

    for (const char* field :
         {"cuda_version", "device_name", "driver_version", "git_revision", "timestamp", "harness_version"})
        for (const char* value : {"13.0\\n# schema_version: 1", "a\\rb", "a\\u0001b", "tab\\there"}) {
            write_file(results, static_results(fmt::format("\"{}\": \"{}\",", field, value)));
            const auto [code, err] =
                tool_with_stderr({"baseline", "update", "--no-ci", "--no-cache", "--from", results.string(),
                                  p.suite.string(), "--baseline-dir", p.baselines.string()});
            EXPECT_EQ(code, 2) << field;
            EXPECT_NE(err.find(std::string(field) + ": holds a control character"), std::string::npos) << err;
            EXPECT_EQ(snapshot(p.baselines), recorded) << field;
        }
    // No header line can be broken by any caller: the writer refuses it too.
    compare::BaselineFile file;
    EXPECT_THROW(file.set_meta("gpu", "NVIDIA H100\n# schema_version: 1"), Error);
    EXPECT_THROW(file.set_meta("a: b", "c"), Error);
    EXPECT_THROW(file.set_meta("date", std::string("2026\0x", 6)), Error);
    file.set_meta("schema_version", "1");
    file.set_meta("gpu", "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(compare::parse_baseline(compare::baseline_text(file), "b.csv").meta("gpu"), "NVIDIA H100 80GB HBM3");
}

TEST(BaselineUpdate, AResultsFileOfAnUnknownModeIsRefusedAndNothingIsWritten)
{
    Project p;
    const fs::path results = p.dir.path / "results.json";
    const std::string known = "\"mode\": \"static\"";
    for (const char* mode : {"quantum", "GPU", "static\\u001b[31m", ""}) {
        std::string text = static_results("");
        text.replace(text.find(known), known.size(), fmt::format("\"mode\": \"{}\"", mode));
        write_file(results, text);
        const auto [code, err] =
            tool_with_stderr({"baseline", "update", "--no-ci", "--no-cache", "--from", results.string(),
                              p.suite.string(), "--baseline-dir", p.baselines.string()});
        EXPECT_EQ(code, 2) << mode;
        EXPECT_NE(err.find(results.string() + ": mode: '"), std::string::npos) << err;
        EXPECT_NE(err.find("' is neither 'gpu' nor 'static'"), std::string::npos) << err;
        EXPECT_EQ(err.find('\x1b'), std::string::npos) << "a terminal control reached the console: " << err;
        EXPECT_FALSE(fs::exists(p.baselines / "hostile")) << mode;
    }
}

TEST(HostileCli, TwoSuitesOfOneNameAreRefusedByEveryCommand)
{
    Project p;
    const fs::path second = p.dir.path / "suites" / "hostile_b.yaml";
    write_file(second, valid);
    const auto before = snapshot(p.dir.path);
    const std::vector<std::vector<std::string>> commands = {
        {"list"},
        {"check", "--no-cache"},
        {"run", "--static", "--no-ci", "--no-cache"},
        {"baseline", "update", "--static", "--no-ci", "--no-cache"},
    };
    for (auto args : commands) {
        args.insert(args.end(), {p.suite.string(), second.string()});
        const auto [code, err] = tool_with_stderr(args);
        EXPECT_EQ(code, 2) << args[0];
        EXPECT_NE(err.find(second.string() + ": suite: 'hostile' is also the name of " + p.suite.string()),
                  std::string::npos)
            << err;
    }
    // The same file twice is the same clash.
    EXPECT_EQ(cli::run_tool({"list", p.suite.string(), p.suite.string()}), 2);
    EXPECT_EQ(snapshot(p.dir.path), before);
    EXPECT_FALSE(fs::exists(p.dir.path / "reports"));
}

TEST(HostileCli, LinkedReportAndBaselineFoldersAreNotWrittenThrough)
{
    Project p;
    const fs::path victim = p.dir.path / "victim";
    write_file(victim / "results.json", "someone else's file\n");
    write_file(victim / "sm_90.csv", "someone else's file\n");
    const auto victim_before = snapshot(victim);
    const std::vector<std::string> run = {"run", "--static", "--no-ci", "--no-cache", p.suite.string()};
    const std::vector<std::string> update = {"baseline", "update",     "--static",
                                             "--no-ci",  "--no-cache", p.suite.string()};
    const auto expect_refused = [&](const std::vector<std::string>& args, const fs::path& link) {
        const auto [code, err] = tool_with_stderr(args);
        EXPECT_EQ(code, 3) << link;
        EXPECT_NE(err.find(link.string() + " is a symbolic link"), std::string::npos) << err;
        EXPECT_EQ(snapshot(victim), victim_before) << link;
    };

    fs::create_directories(p.dir.path / "reports");
    fs::create_directory_symlink(victim, p.dir.path / "reports" / "hostile");
    expect_refused(run, p.dir.path / "reports" / "hostile");
    fs::remove_all(p.dir.path / "reports");
    fs::create_directory_symlink(victim, p.dir.path / "reports");
    expect_refused(run, p.dir.path / "reports");
    fs::remove(p.dir.path / "reports");
    // Below a folder named with --out, too.
    fs::create_directories(p.dir.path / "out");
    fs::create_directory_symlink(victim, p.dir.path / "out" / "hostile");
    auto with_out = run;
    with_out.insert(with_out.end(), {"--out", (p.dir.path / "out").string()});
    expect_refused(with_out, p.dir.path / "out" / "hostile");

    fs::create_directory_symlink(victim, p.baselines / "hostile");
    expect_refused(update, p.baselines / "hostile");
    fs::remove(p.baselines / "hostile");
    fs::remove_all(p.baselines);
    fs::create_directory_symlink(victim, p.baselines);
    expect_refused(update, p.baselines);
    EXPECT_FALSE(fs::exists(victim / "hostile"));
}

TEST(HostileReports, CharactersXmlForbidsAndTerminalControlsNeverReachAReport)
{
    CaseResult r;
    r.suite = "hostile";
    r.variant = "a";
    r.params_text = "N=256";
    r.arch = "sm_90";
    r.status = CaseStatus::compile_error;
    // U+FFFF and U+FFFE (from a kernel's #error), a byte that is not UTF-8, C0 controls, ESC, a C1 control.
    r.message = "broken \xEF\xBF\xBF \xEF\xBF\xBE kernel \x80 \x01 \x1b[31mred\x1b[0m \xC2\x9B caf\xC3\xA9";
    harness::RunReport rep = static_run({r});
    rep.notes.push_back("note \x1b]0;title\x07");

    const std::string junit = report::junit_xml(rep);
    const std::string html = report::html_report(rep);
    for (const auto& [name, text] : {std::pair{"junit.xml", junit}, std::pair{"report.html", html}}) {
        for (const std::string raw : {"\xEF\xBF\xBF", "\xEF\xBF\xBE", "\x80 ", "\x01", "\x1b", "\x07", "\xC2\x9B"})
            EXPECT_EQ(text.find(raw), std::string::npos) << name << " holds a raw byte " << int(uint8_t(raw[0]));
        EXPECT_NE(text.find("&#xFFFD;"), std::string::npos) << name;
        EXPECT_NE(text.find("caf\xC3\xA9"), std::string::npos) << name << ": text that is fine stays as it is";
        EXPECT_EQ(invalid_utf8_offset(text), std::string::npos) << name;
    }
    // An XML parser accepts the file, where one is installed.
    if (std::system("command -v xmllint >/dev/null 2>&1") == 0) {
        TempDir dir{"harness-hostile-test"};
        write_file(dir.path / "junit.xml", junit);
        EXPECT_EQ(std::system(("xmllint --noout " + (dir.path / "junit.xml").string()).c_str()), 0);
    }

    std::ostringstream console;
    report::write_console_table(rep, console);
    const std::string summary = report::markdown_summary(rep);
    for (const auto& [name, text] : {std::pair{"console", console.str()}, std::pair{"summary.md", summary}}) {
        for (const std::string raw : {"\x1b", "\x01", "\x07", "\x80 ", "\xC2\x9B"})
            EXPECT_EQ(text.find(raw), std::string::npos) << name;
        EXPECT_NE(text.find("\\x1b[31mred"), std::string::npos) << name << ": " << text;
        EXPECT_NE(text.find("\\x01"), std::string::npos) << name;
    }
    EXPECT_NE(console.str().find("note \\x1b]0;title\\x07"), std::string::npos) << console.str();
    EXPECT_EQ(escape_control_characters(std::string("a\tb\nc\0d\x7f\xC2\x85", 10)), "a\tb\nc\\0d\\x7f\\u0085");
}

TEST(HostileCli, CrosscheckReadsOnlyRegularFilesOfBoundedSize)
{
    TempDir dir{"harness-hostile-test"};
    const fs::path results = dir.path / "results.json";
    write_file(results, static_results(""));
    const fs::path fifo = dir.path / "ncu.fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    for (const fs::path& ncu : {fs::path("/dev/zero"), fifo}) {
        const auto [code, err] = tool_with_stderr({"crosscheck", "--ncu", ncu.string(), results.string()});
        EXPECT_EQ(code, 2) << ncu;
        EXPECT_NE(err.find(ncu.string() + ": the ncu CSV file is not a regular file"), std::string::npos) << err;
    }
    EXPECT_EQ(
        cli::run_tool({"crosscheck", "--times", "--times-min-us", "nan", "--ncu", results.string(), results.string()}),
        2);
}

TEST(HostileSuite, IntegersAreDecimalNeverOctal)
{
    std::string text = valid;
    text.replace(text.find("[256, 1024]"), 11, "[010, 0256, +64]");
    text.replace(text.find("seed: 1"), 7, "seed: 010");
    text.replace(text.find("reference: a"), 12, "reference: a\ntiming: {min_samples: 010, max_samples: 020}");
    const auto s = suite::parse_suite(text, suite_path);
    EXPECT_EQ(s.params[0].values, (std::vector<std::int64_t>{10, 256, 64}));
    EXPECT_EQ(s.buffers[0].seed, 10u);
    EXPECT_EQ(s.timing.min_samples, 10);
    EXPECT_EQ(s.timing.max_samples, 20);
    EXPECT_NE(error_after("[256, 1024]", "[0x100]").find("params.N[0]: expected an integer, got '0x100'"),
              std::string::npos);
    EXPECT_NE(error_after("seed: 1", "seed: 0x10").find("buffers.x.seed: expected an integer"), std::string::npos);
    EXPECT_NE(error_after("reference: a", "reference: a\ntiming: {budget_s: 0x1p-2}").find("timing.budget_s"),
              std::string::npos);
    EXPECT_EQ(parse_decimal_integer("-010"), -10);
    EXPECT_FALSE(parse_decimal_integer("9223372036854775808").has_value());
    EXPECT_FALSE(parse_decimal_integer("1e3").has_value());
}

TEST(HostileSuite, ANulInANameIsShownNotCutShort)
{
    const std::string e = error_after("  a:\n    source", "  \"a\\0x\":\n    source");
    EXPECT_NE(e.find("variants.a\\0x"), std::string::npos) << e;
    EXPECT_NE(e.find("uses a character other than"), std::string::npos) << e;

    Project p;
    write_file(p.dir.path / "results.json",
               R"({"schema": "harness-results", "schema_version": 2, "mode": "static", "suite": "hostile",
                   "results": [{"suite": "hostile", "variant": "a\u0000x", "arch": "sm_90", "params": {},
                   "params_text": "", "status": "passed", "metrics": {}}]})");
    const auto [code, err] = tool_with_stderr(
        {"report", (p.dir.path / "results.json").string(), "-o", (p.dir.path / "report.html").string()});
    EXPECT_EQ(code, 2);
    EXPECT_NE(err.find("results[0].variant 'a\\0x' uses a character other than"), std::string::npos) << err;
    EXPECT_EQ(err.find('\0'), std::string::npos);
}

TEST(HostileCli, TimeoutAndBudgetAreFinitePositiveSeconds)
{
    Project p;
    for (const auto& [option, value] : std::vector<std::pair<std::string, std::string>>{{"--timeout", "-5"},
                                                                                        {"--timeout", "0"},
                                                                                        {"--timeout", "nan"},
                                                                                        {"--timeout", "inf"},
                                                                                        {"--timeout", "1e99"},
                                                                                        {"--budget", "-1"},
                                                                                        {"--budget", "nan"},
                                                                                        {"--budget", "0x10"}}) {
        const auto [code, err] = tool_with_stderr({"run", "--static", "--no-ci", "--no-cache", p.suite.string(), option,
                                                   value, "--out", (p.dir.path / "out").string()});
        EXPECT_EQ(code, 2) << option << " " << value;
        EXPECT_NE(err.find("expected a number of seconds above 0"), std::string::npos) << err;
    }
    EXPECT_EQ(cli::run_tool({"baseline", "update", "--no-ci", "--no-cache", p.suite.string(), "--budget", "-1"}), 2);
    EXPECT_FALSE(fs::exists(p.dir.path / "out"));
}

TEST(HostileFiles, TinyFiniteNumbersAreNumbers)
{
    // Below the smallest normal double (std::stod says ERANGE), and still finite.
    std::string text = valid;
    text.replace(text.find("reference: a"), 12, "reference: a\ntolerance: {rel: 1e-310, abs: 4.9e-324}");
    const auto s = suite::parse_suite(text, suite_path);
    EXPECT_EQ(s.tolerance.rel, 1e-310);
    EXPECT_GT(s.tolerance.abs, 0.0);
    EXPECT_NE(
        error_after("reference: a", "reference: a\ntolerance: {abs: 1e999}").find("tolerance.abs: expected a finite"),
        std::string::npos);
    EXPECT_EQ(suite::parse_rule("abs 1e-310").tolerance, 1e-310);

    const std::string head = "# harness baseline\n# schema_version: 1\nvariant,params,metric,value,samples,source\n";
    const auto file = compare::parse_baseline(head + "a,N=1,time_median,1e-310,4.9e-324 1e-310,gpu\n", "b.csv");
    ASSERT_EQ(file.rows.size(), 1u);
    EXPECT_EQ(file.rows[0].value, 1e-310);
    EXPECT_EQ(file.rows[0].samples.size(), 2u);
    EXPECT_THROW(compare::parse_baseline(head + "a,N=1,registers,1e999,,static\n", "b.csv"), InputError);
    EXPECT_EQ(parse_decimal_number("1e-400"), 0.0);
    EXPECT_EQ(parse_decimal_number("+.5"), 0.5);
    for (const char* not_a_number : {"nan", "inf", "-inf", "1e999", "0x10", "", "1e", "5 5", "--1"})
        EXPECT_FALSE(parse_decimal_number(not_a_number).has_value()) << not_a_number;
}

} // namespace hostile_input_test
