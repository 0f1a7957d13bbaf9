// The SASS diff: instructions normalised (registers renamed in order of first use, addresses,
// branch targets, reuse flags and NOPs left out), the code file read back as written and
// compressed, hunks grouped by source line with the failing verdict's line first; then, with NVRTC
// and nvdisasm, a float4 load split into scalars showing its LDG.E.128 replaced at its line while
// lines moved by an edit show nothing, and a static run against a recorded baseline putting the
// diff under the failing verdict in report.html, summary.md, results.json and sass_diff.txt.
#include "harness/cli/commands.hxx"
#include "harness/compare/sass_baseline.hxx"
#include "harness/compare/sass_diff.hxx"
#include "harness/compile/nvrtc_compiler.hxx"
#include "harness/compile/sass_disassembly.hxx"
#include "harness/compile/sass_figures.hxx"
#include "harness/compile/sass_normalise.hxx"
#include "harness/core/error.hxx"
#include "harness/core/sass_code.hxx"
#include "harness/report/reporters.hxx"
#include "planted_sass_run.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <regex>
#include <sstream>

namespace sass_diff_test {

using namespace harness;
namespace fs = std::filesystem;

namespace {

/// One kernel as nvdisasm prints it, its registers, addresses and label numbers chosen by the caller.
std::string listing(int base, int label, const std::string& load = "LDG.E.128.CONSTANT")
{
    const auto r = [&](int n) { return fmt::format("R{}", base + n); };
    return fmt::format(R"(	.section	.text.k,"ax",@progbits
k:
	//## File "/tmp/harness-compile-1/k.cu", line 4
        /*{:04x}*/                   S2R {}, SR_TID.X ;
        /*{:04x}*/                   IMAD.WIDE {}, {}.reuse, 0x10, {} ;
	//## File "/tmp/harness-compile-1/k.cu", line 6
        /*{:04x}*/                   {} {}, desc[UR4][{}.64] ;
        /*{:04x}*/               @P0 BRA `(.L_x_{}) ;
        /*{:04x}*/                   NOP ;
.L_x_{}:
	//## File "/tmp/harness-compile-1/k.cu", line 7
        /*{:04x}*/                   STG.E.128 desc[UR4][{}.64], {} ;
        /*{:04x}*/                   EXIT ;
)",
                       base * 16, r(0), base * 16 + 0x10, r(2), r(0), r(4), base * 16 + 0x20, load, r(8), r(2),
                       base * 16 + 0x30, label, base * 16 + 0x40, label, base * 16 + 0x50, r(2), r(8),
                       base * 16 + 0x60);
}

SassKernelCode code_of(const std::string& text)
{
    const auto functions = compile::parse_disassembly(text, "k.cubin");
    EXPECT_EQ(functions.size(), 1u);
    return compile::normalise_sass(functions.at(0));
}

std::string read(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

void write(const fs::path& path, const std::string& text)
{
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
}

#define REQUIRE_NVDISASM()                                                                                             \
    if (compile::find_nvdisasm().program.empty()) GTEST_SKIP() << compile::find_nvdisasm().not_found_reason

} // namespace

TEST(SassNormalise, RegistersAddressesLabelsReuseAndNopsDoNotShow)
{
    const SassKernelCode a = code_of(listing(0, 0)), b = code_of(listing(20, 7));
    ASSERT_EQ(a.instructions.size(), 6u); // the NOP is left out
    EXPECT_EQ(a.instructions[0].text, "S2R r0, SR_TID.X");
    EXPECT_EQ(a.instructions[1].text, "IMAD.WIDE r1, r0, 0x10, r2");
    EXPECT_EQ(a.instructions[2].text, "LDG.E.128.CONSTANT r3, desc[ur0][r1.64]");
    EXPECT_EQ(a.instructions[3].text, "@p0 BRA `(<target>)");
    EXPECT_EQ(a.instructions[2].line, 6);
    // Other registers, addresses and label numbers: the same code.
    EXPECT_EQ(a.instructions, b.instructions);
    EXPECT_EQ(a.id(), b.id());
    // Another opcode is another code.
    const SassKernelCode narrow = code_of(listing(0, 0, "LDG.E"));
    EXPECT_NE(a.id(), narrow.id());
    EXPECT_EQ(narrow.instructions[2].text, "LDG.E r3, desc[ur0][r1.64]");
}

TEST(SassNormalise, AControlFlowTargetIsAPlaceholderButAnImmediateIsNot)
{
    std::map<std::string, std::string> names;
    compile::SassInstruction branch{0x40, "", "BSSY", "B0, 0x1a0", "k.cu", 3};
    EXPECT_EQ(compile::normalise_instruction(branch, names), "BSSY b0, <target>");
    compile::SassInstruction add{0x50, "@!P2", "IADD3", "R5, R5, 0x1a0, RZ", "k.cu", 3};
    EXPECT_EQ(compile::normalise_instruction(add, names), "@!p0 IADD3 r0, r0, 0x1a0, RZ");
}

TEST(SassCode, TheFileReadsBackAsWrittenAndCompressed)
{
    SassCodeFile file{"gemm", "sm_90", {}, {}};
    const SassKernelCode k = code_of(listing(0, 0));
    const std::string id = file.add_kernel(k);
    file.cases[{"vectorized", "N=256"}].first = {"0123456789abcdef", {id}};
    file.cases[{"naive", "N=256"}].second = {"fedcba9876543210", {id}};
    file.kernels["00000000000000aa"] = SassKernelCode{"unused", {}};
    file.drop_unused_kernels();
    EXPECT_EQ(file.kernels.size(), 1u);
    const std::string text = sass_code_text(file);
    const SassCodeFile back = parse_sass_code(text, "sm_90.sass");
    EXPECT_EQ(sass_code_text(back), text);
    EXPECT_EQ(back.kernel(id)->instructions, k.instructions);
    EXPECT_TRUE(back.cases.at({"naive", "N=256"}).first.hash.empty());

    const std::string packed = gzip_text(text);
    EXPECT_LT(packed.size(), text.size());
    EXPECT_EQ(packed, gzip_text(text)); // no time in the header: the same bytes every time
    EXPECT_EQ(gunzip_text(packed, "x.gz"), text);
    EXPECT_THROW(gunzip_text(packed.substr(0, packed.size() / 2), "x.gz"), Error);
    EXPECT_THROW(gunzip_text(text, "x.gz"), Error);
}

TEST(SassCode, BadInputNamesTheFileLineAndField)
{
    const std::string head = "# harness sass code\n# suite: s\n# arch: sm_90\n";
    const std::pair<std::string, std::string> cases[] = {
        {"case\tv\tN=1\tnothex\t-\t-\t-\n", "sm_90.sass:4:4: hash"},
        {"case\tv\tN=1\t0123456789abcdef\t0123456789abcdef\t-\t-\n", "kernels"},
        {"kernel\t0123456789abcdef\tk\nat\tk.cu\tmany\n", "sm_90.sass:5:3: line"},
        {"\tMOV r0, r1\n", "sm_90.sass:4:1: instruction"},
        {"something else\n", "sm_90.sass:4:1: record"},
    };
    for (const auto& [body, where] : cases) {
        try {
            parse_sass_code(head + body, "sm_90.sass");
            ADD_FAILURE() << "accepted: " << body;
        } catch (const InputError& e) {
            EXPECT_NE(std::string(e.what()).find(where), std::string::npos) << e.what();
        }
    }
    EXPECT_THROW(parse_sass_code("not a code file\n", "x"), InputError);
}

TEST(SassDiff, HunksByLineWithTheVerdictsLineFirst)
{
    SassKernelCode before{"k",
                          {{"k.cu", 3, "S2R r0, SR_TID.X"},
                           {"k.cu", 6, "LDG.E.128 r1, desc[ur0][r2.64]"},
                           {"k.cu", 9, "FFMA r3, r1, r1, r3"},
                           {"k.cu", 12, "STG.E desc[ur0][r2.64], r3"}}};
    // Lines moved down by two (an edit above them), line 9's arithmetic changed, line 6's load split.
    SassKernelCode after{"k",
                         {{"k.cu", 5, "S2R r0, SR_TID.X"},
                          {"k.cu", 8, "LDG.E r1, desc[ur0][r2.64]"},
                          {"k.cu", 8, "LDG.E r4, desc[ur0][r2.64+0x4]"},
                          {"k.cu", 11, "FMUL r3, r1, r1"},
                          {"k.cu", 14, "STG.E desc[ur0][r2.64], r3"}}};
    const auto hunks = diff_sass(before, after);
    ASSERT_EQ(hunks.size(), 2u); // the moved, unchanged lines 3 and 12 show nothing
    EXPECT_EQ(hunks[0].location(), "k.cu:8");
    EXPECT_EQ(hunks[0].baseline_line, 6);
    EXPECT_EQ(hunks[0].lines,
              (std::vector<std::string>{"-LDG.E.128 r1, desc[ur0][r2.64]", "+LDG.E r1, desc[ur0][r2.64]",
                                        "+LDG.E r4, desc[ur0][r2.64+0x4]"}));
    EXPECT_EQ(hunks[1].location(), "k.cu:11");

    const std::string text = sass_diff_text({&before}, {&after}, {"k.cu:11"});
    EXPECT_EQ(text.find("@@ k k.cu:11 (baseline line 9) @@ FFMA -1, FMUL +1\n-FFMA r3, r1, r1, r3\n+FMUL r3, r1, r1\n"),
              0u)
        << text;
    EXPECT_NE(text.find("@@ k k.cu:8 (baseline line 6) @@ LDG.E +2, LDG.E.128 -1\n"), std::string::npos) << text;
    EXPECT_EQ(sass_diff_text({&before}, {&before}, {}), "");
}

TEST(SassDiff, AVerdictLineWithoutItsOwnHunkLeadsWithTheNearestOfItsFile)
{
    SassKernelCode before{"k", {{"a.cu", 10, "MOV r0, 0x1"}, {"b.cu", 40, "MOV r1, 0x2"}}};
    SassKernelCode after{"k", {{"a.cu", 10, "MOV r0, 0x3"}, {"b.cu", 40, "MOV r1, 0x4"}}};
    const std::string text = sass_diff_text({&before}, {&after}, {"b.cu:37"});
    EXPECT_EQ(text.find("@@ k b.cu:40 @@\n"), 0u) << text; // the opcodes balance: no summary
}

TEST(SassDiff, TheExcerptLeadsWithTheVerdictsHunkAndTheInstructionsThatMovedMost)
{
    // A float4 load split at line 6, with address arithmetic around it that moved too.
    SassKernelCode before{"k",
                          {{"k.cu", 6, "IMAD.WIDE r0, r1, 0x10, r2"},
                           {"k.cu", 6, "IADD3 r3, r0, 0x1, RZ"},
                           {"k.cu", 6, "IADD3 r4, r0, 0x2, RZ"},
                           {"k.cu", 6, "IADD3 r5, r0, 0x3, RZ"},
                           {"k.cu", 6, "LDG.E.128 r8, desc[ur0][r0.64]"},
                           {"k.cu", 9, "FFMA r3, r1, r1, r3"}}};
    SassKernelCode after{"k",
                         {{"k.cu", 6, "IMAD.WIDE r0, r1, 0x4, r2"},
                          {"k.cu", 6, "LDG.E r8, desc[ur0][r0.64]"},
                          {"k.cu", 6, "LDG.E r9, desc[ur0][r0.64+0x4]"},
                          {"k.cu", 6, "LDG.E r10, desc[ur0][r0.64+0x8]"},
                          {"k.cu", 6, "LDG.E r11, desc[ur0][r0.64+0xc]"},
                          {"k.cu", 9, "FMUL r3, r1, r1"}}};
    // Memory accesses rank before integer arithmetic, as the runs' diffs order them.
    const SassOpcodeRank rank = [](std::string_view opcode) { return opcode.starts_with("LDG") ? 0 : 1; };
    const std::string excerpt = sass_diff_excerpt({&before}, {&after}, {"k.cu:6"}, 5, rank);
    // One of each opcode the header names in turn, then more: in program order, gaps marked.
    EXPECT_EQ(excerpt, "@@ k k.cu:6 @@ LDG.E +4, LDG.E.128 -1, IADD3 -3\n"
                       "-IADD3 r3, r0, 0x1, RZ\n"
                       " ...\n"
                       "-LDG.E.128 r8, desc[ur0][r0.64]\n"
                       " ...\n"
                       "+LDG.E r8, desc[ur0][r0.64]\n"
                       "+LDG.E r9, desc[ur0][r0.64+0x4]\n");
    // The whole diff's header names the same moves, in the same order; the other hunk follows.
    const std::string text = sass_diff_text({&before}, {&after}, {"k.cu:6"}, rank);
    EXPECT_EQ(text.find("@@ k k.cu:6 @@ LDG.E +4, LDG.E.128 -1, IADD3 -3\n"), 0u) << text;
    EXPECT_NE(text.find("@@ k k.cu:9 @@ FFMA -1, FMUL +1\n"), std::string::npos) << text;
    EXPECT_EQ(sass_diff_excerpt({&before}, {&before}, {}, 5, rank), "");

    // The step summary shows a failing case's excerpt under its verdicts, in a diff block.
    RunReport report;
    report.suite = "k";
    report.mode = RunMode::static_tier;
    CaseResult r;
    r.variant = "split";
    r.params_text = "N=64";
    r.arch = "sm_90";
    r.status = CaseStatus::passed;
    MetricVerdict v;
    v.metric = "sass_global_ld_128";
    v.verdict = Verdict::regressed;
    v.rule = "sass";
    v.location = "k.cu:6";
    v.message = "k: k.cu:6: global loads 128-bit -> 32-bit (1 -> 4 instructions)";
    r.verdicts.push_back(v);
    r.sass_diff = text;
    r.sass_diff_excerpt = excerpt;
    report.results.push_back(r);
    const std::string summary = report::markdown_summary(report);
    const auto block = summary.find("**SASS diff** of split N=64 (sm_90) against the baseline's, the instructions "
                                    "that moved most in its first hunk (the whole diff is in sass_diff.txt):");
    ASSERT_NE(block, std::string::npos) << summary;
    EXPECT_NE(summary.find("```diff\n" + excerpt + "```\n", block), std::string::npos) << summary.substr(block);
    EXPECT_LT(summary.find("| regressed | split N=64 |"), block) << summary;
}

TEST(SassDiff, AFloat4SplitShowsAtItsLineAndMovedLinesShowNothing)
{
    REQUIRE_NVDISASM();
    const TempDir project{"harness-sass-diff"};
    const std::string original = read(repo_root() / "kernels" / "gemm" / "gemm_vectorized.cu");
    const std::string entry = "gemm_vectorized<128, 128, 8, 8, 8>";
    const auto code = [&](const std::string& text) {
        const fs::path source = project.path / "kernels/gemm/gemm_vectorized.cu";
        write(source, text);
        compile::CompileRequest request;
        request.source = source;
        request.arch = "sm_90";
        request.entries = {entry};
        const compile::CompiledModule module = compile::compile(request);
        const compile::ModuleSass sass = compile::module_sass(module, source.string(), nullptr);
        EXPECT_TRUE(sass.error.empty()) << sass.error;
        for (const auto& k : sass.code)
            if (k.kernel == module.lowered_names.at(entry)) return k;
        ADD_FAILURE() << "no code for " << entry;
        return SassKernelCode{};
    };
    const SassKernelCode before = code(original);
    const std::string vector_load = "        return *reinterpret_cast<const float4*>(matrix + row * cols + col);";
    std::string split = original;
    split.replace(split.find(vector_load), vector_load.size(),
                  "        return make_float4(matrix[row * cols + col], matrix[row * cols + col + 1], matrix[row * "
                  "cols + col + 2], matrix[row * cols + col + 3]);");
    const SassKernelCode after = code(split);
    // The verdict's line: where the kernel loads its float4 (line 10, as the SASS gate names it).
    const auto wide = std::find_if(before.instructions.begin(), before.instructions.end(),
                                   [](const SassCodeInstruction& i) { return i.text.starts_with("LDG.E.128"); });
    ASSERT_NE(wide, before.instructions.end());
    EXPECT_EQ(wide->line, 10);
    const std::string at = fmt::format("{}:{}", wide->file, wide->line);
    const std::string text = sass_diff_text({&before}, {&after}, {at});
    ASSERT_FALSE(text.empty());
    // The first hunk is the verdict's line: a 128-bit load gone, 32-bit ones in its place.
    const std::string first = text.substr(0, text.find("\n@@", 1));
    EXPECT_EQ(first.find("@@ " + before.kernel + " " + at + " @@ "), 0u) << text.substr(0, 2000);
    // Its header says what moved: 128-bit loads fewer, narrower ones more.
    const std::string header = first.substr(0, first.find('\n'));
    EXPECT_TRUE(std::regex_search(header, std::regex("LDG\\.E\\.128[.A-Z]* -[0-9]+"))) << header;
    EXPECT_TRUE(std::regex_search(header, std::regex("LDG\\.E(\\.CONSTANT)? \\+[0-9]+"))) << header;
    EXPECT_NE(first.find("\n-LDG.E.128"), std::string::npos) << first;
    EXPECT_TRUE(std::regex_search(first, std::regex("\n\\+LDG\\.E(\\.CONSTANT)? "))) << first;

    // Three lines above the kernel move every line: the code is the same, only its lines moved.
    const SassKernelCode moved = code("// a comment\n// that moves\n// every line\n" + original);
    EXPECT_NE(moved.id(), before.id());
    EXPECT_EQ(sass_diff_text({&before}, {&moved}, {}), "");
}

TEST(SassDiff, AFailingStaticRunShowsTheDiffUnderItsVerdictInEveryReport)
{
    REQUIRE_NVDISASM();
    const TempDir scratch{"harness-sass-diff-run"};
    const fs::path root = scratch.path;
    for (const char* dir : {"suites", "kernels", "baselines"})
        fs::copy(repo_root() / dir, root / dir, fs::copy_options::recursive);
    const fs::path cwd = fs::current_path();
    fs::current_path(root);
    const auto run = [](const std::vector<std::string>& args) {
        testing::internal::CaptureStdout();
        const int code = cli::run_tool(args);
        testing::internal::GetCapturedStdout();
        return code;
    };
    EXPECT_EQ(run({"baseline", "update", "--static", "--no-ci", "suites/gemm.yaml", "--arch", "sm_90"}), 0);
    const fs::path code_file = root / "baselines/gemm/sm_90.sass.gz";
    ASSERT_TRUE(fs::exists(code_file));
    const auto recorded = compare::read_sass_code(code_file, "gemm", "sm_90");
    ASSERT_TRUE(recorded);
    EXPECT_TRUE(recorded->cases.contains({"vectorized", "N=256"}));

    const fs::path kernel = root / "kernels/gemm/gemm_vectorized.cu";
    std::string text = read(kernel);
    const std::string vector_load = "        return *reinterpret_cast<const float4*>(matrix + row * cols + col);";
    text.replace(text.find(vector_load), vector_load.size(),
                 "        return make_float4(matrix[row * cols + col], matrix[row * cols + col + 1], matrix[row * "
                 "cols + col + 2], matrix[row * cols + col + 3]);");
    write(kernel, text);
    EXPECT_EQ(run({"run", "--static", "--no-ci", "suites/gemm.yaml", "--arch", "sm_90"}), 1);
    fs::current_path(cwd);

    const fs::path out = root / "reports/gemm";
    const RunReport results = read_results_json(out / "results.json");
    std::size_t with_diff = 0;
    for (const auto& r : results.results) {
        if (r.sass_diff.empty()) continue;
        ++with_diff;
        EXPECT_EQ(r.variant, "vectorized");
        EXPECT_EQ(r.sass_diff.find("@@ gemm_vectorized<128, 128, 8, 8, 8> kernels/gemm/gemm_vectorized.cu:10 @@ "), 0u)
            << r.sass_diff.substr(0, 500);
        const std::string header = r.sass_diff.substr(0, r.sass_diff.find('\n'));
        EXPECT_NE(header.find("LDG.E.128.CONSTANT -"), std::string::npos) << header;
    }
    EXPECT_GT(with_diff, 0u);
    const std::string html = read(out / "report.html");
    EXPECT_NE(html.find("<details class=\"sass-diff\""), std::string::npos);
    EXPECT_NE(html.find("SASS against the baseline's: "), std::string::npos);
    EXPECT_NE(html.find("<span class=\"del\" style=\"color: var(--bad)\">-LDG.E.128"), std::string::npos);
    const std::string summary = read(out / "summary.md");
    EXPECT_NE(summary.find("**SASS diff** of vectorized"), std::string::npos) << summary.substr(0, 3000);
    EXPECT_NE(summary.find("```diff\n@@ gemm_vectorized<128, 128, 8, 8, 8> kernels/gemm/gemm_vectorized.cu:10 @@ "),
              std::string::npos);
    const std::string whole = read(out / "sass_diff.txt");
    EXPECT_EQ(whole.find("=== vectorized "), 0u) << whole.substr(0, 200);

    // `harness sass-diff` between the baseline and the run finds the same cases changed.
    fs::current_path(root);
    testing::internal::CaptureStdout();
    const int code = cli::run_tool({"sass-diff", "baselines/gemm", "reports/gemm"});
    const std::string printed = testing::internal::GetCapturedStdout();
    fs::current_path(cwd);
    EXPECT_EQ(code, 1);
    EXPECT_NE(printed.find(fmt::format("{} of ", with_diff)), std::string::npos)
        << printed.substr(printed.size() - 200);
    const auto first_case = printed.find("=== vectorized ");
    ASSERT_NE(first_case, std::string::npos);
    EXPECT_EQ(printed.find("@@ gemm_vectorized<128, 128, 8, 8, 8> kernels/gemm/gemm_vectorized.cu:10 @@ ", first_case),
              printed.find('\n', first_case) + 1)
        << printed.substr(first_case, 400);
    EXPECT_NE(printed.find("\n-LDG.E.128.CONSTANT"), std::string::npos);
}

TEST(SassDiff, PlantedSassRegressionsFailWithKernelLineAndBothFormsAndShowTheirHunksInTheSummary)
{
    REQUIRE_NVDISASM();
    const PlantedSassRun run;
    EXPECT_EQ(run.code, 1) << run.console;
    const RunReport results = read_results_json(run.reports() / "results.json");
    const std::string summary = read(run.reports() / "summary.md");
    for (const auto& p : planted_sass_regressions()) {
        SCOPED_TRACE(p.variant);
        const auto r = std::find_if(results.results.begin(), results.results.end(),
                                    [&](const CaseResult& c) { return c.variant == p.variant; });
        ASSERT_NE(r, results.results.end());
        const auto v = std::find_if(r->verdicts.begin(), r->verdicts.end(),
                                    [&](const MetricVerdict& m) { return m.metric == p.metric && m.rule == "sass"; });
        ASSERT_NE(v, r->verdicts.end()) << run.console;
        EXPECT_EQ(v->verdict, Verdict::regressed);
        EXPECT_EQ(v->location, p.location);
        EXPECT_EQ(v->message, p.message);
        // On the console, once named: "<case> [arch] <metric>: <kernel>: <file:line>: <both forms>".
        EXPECT_NE(
            run.console.find("  " + p.variant + " N=64 [sm_90] " + p.metric + ": " + p.message + " (rule sass)\n"),
            std::string::npos)
            << run.console;
        // In summary.md, the case's diff block leads with the hunk at the verdict's line and shows
        // the instructions that changed there.
        const auto block = summary.find("**SASS diff** of " + p.variant + " N=64 (sm_90) against the baseline's");
        ASSERT_NE(block, std::string::npos) << summary;
        const auto fence = summary.find("```diff\n", block);
        ASSERT_NE(fence, std::string::npos);
        const auto end = summary.find("```\n", fence + 8);
        const std::string diff = summary.substr(fence + 8, end - fence - 8);
        EXPECT_EQ(diff.find("@@ " + p.kernel + " " + p.location + " "), 0u) << diff;
        for (const auto& line : p.hunk) EXPECT_NE(diff.find("\n" + line), std::string::npos) << line << "\n" << diff;
        EXPECT_LE(std::count(diff.begin(), diff.end(), '\n'), 16) << diff; // a few lines, not the whole diff
        // The whole diff, in sass_diff.txt and results.json, has the same hunk first.
        EXPECT_EQ(r->sass_diff.find("@@ " + p.kernel + " " + p.location + " "), 0u) << r->sass_diff.substr(0, 300);
    }
}

TEST(SassDiffCommand, ASideWithoutNormalisedSassIsBadInputNamingIt)
{
    const TempDir empty{"harness-sass-diff-empty"};
    testing::internal::CaptureStderr();
    const int code = cli::run_tool({"sass-diff", empty.path.string(), empty.path.string()});
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(code, 2);
    EXPECT_NE(err.find(empty.path.string() + ": no normalised SASS"), std::string::npos) << err;

    // A file that is not a code file: bad input naming it, its line and field.
    write(empty.path / "sm_90.sass.gz", gzip_text("not a SASS code file\n"));
    testing::internal::CaptureStderr();
    EXPECT_EQ(cli::run_tool({"sass-diff", (empty.path / "sm_90.sass.gz").string(), empty.path.string()}), 2);
    const std::string bad = testing::internal::GetCapturedStderr();
    EXPECT_NE(bad.find((empty.path / "sm_90.sass.gz").string() + ":1:1: header"), std::string::npos) << bad;
}

} // namespace sass_diff_test
