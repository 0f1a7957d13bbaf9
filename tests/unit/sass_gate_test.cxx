// The SASS tier on the CPU: nvdisasm's output read into instructions per kernel and line, classes
// counted, a disassembly that runs too long, prints too much, holds too many instructions or fails
// being bad input bounded in time and memory, a cut or scrambled cubin refused naming it, and planted
// regressions in the project's kernels (a float4 load split into scalars, a WMMA kernel falling
// back to FFMA, local memory appearing) failing with kernel, line and both forms while their benign
// twins (renamed locals, moved lines, a bounds check) pass. The kernels are compiled with NVRTC;
// without nvdisasm those tests skip, saying so.
#include "harness/compare/sass_baseline.hxx"
#include "harness/compare/sass_gate.hxx"
#include "harness/compile/nvrtc_compiler.hxx"
#include "harness/compile/sass_classes.hxx"
#include "harness/compile/sass_disassembly.hxx"
#include "harness/compile/sass_figures.hxx"
#include "harness/core/error.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace sass_gate_test {

using namespace harness;
namespace fs = std::filesystem;

namespace {

const char* sample = R"(	.target	sm_80

//--------------------- .text.copy4            --------------------------
	.section	.text.copy4,"ax",@progbits
	.sectioninfo	@"SHI_REGISTERS=8"
        .global         copy4
copy4:
.text.copy4:
	//## File "/tmp/harness-compile-ab12/copy.cu", line 4
        /*0000*/                   MOV R1, c[0x0][0x28] ;
	//## File "/tmp/harness-compile-ab12/copy.cu", line 6
        /*0010*/                   LDG.E.128.CONSTANT R4, [R2.64] ;
        /*0020*/               @P0 STG.E.128 [R6.64], R4 ;
        /*0030*/              @!P1 BRA `(.L_x_0) ;
.L_x_0:
        /*0040*/                   EXIT ;
        /*0050*/                   NOP ;
)";

std::string read(const fs::path& path)
{
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

void write(const fs::path& path, const std::string& text)
{
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
}

/// `text` with `from` replaced by `to`; fails the test when `from` is not there.
std::string planted(std::string text, const std::string& from, const std::string& to)
{
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << "the kernel no longer holds: " << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    return text;
}

/// A fake nvdisasm: a shell script.
fs::path script(const fs::path& dir, const std::string& body)
{
    const fs::path path = dir / "nvdisasm";
    write(path, "#!/bin/sh\n" + body + "\n");
    ::chmod(path.c_str(), 0755);
    return path;
}

/// A kernel file compiled for `arch` in a project folder of its own, and its SASS lines as the
/// static tier records them.
struct CompiledKernel {
    std::vector<SassLine> lines;
    double metric(const std::string& name) const { return figures.metric(name).value_or(-1); }
    CaseResult figures;
};

CompiledKernel sass_of(const fs::path& project, const std::string& relative, const std::string& text,
                       const std::string& entry, const std::string& arch, const std::vector<fs::path>& include = {})
{
    const fs::path source = project / relative;
    write(source, text);
    compile::CompileRequest request;
    request.source = source;
    request.arch = arch;
    request.entries = {entry};
    request.include_dirs = include;
    const compile::CompiledModule module = compile::compile(request);
    const compile::ModuleSass sass = compile::module_sass(module, source.string(), nullptr);
    EXPECT_TRUE(sass.error.empty()) << sass.error;
    suite::Suite suite;
    suite.project_root = project;
    suite::VariantSpec variant;
    variant.source = source;
    CompiledKernel out;
    compile::add_sass_figures(out.figures, suite, variant, sass, {module.lowered_names.at(entry)});
    out.lines = out.figures.sass_lines;
    return out;
}

#define REQUIRE_NVDISASM()                                                                                             \
    if (compile::find_nvdisasm().program.empty()) GTEST_SKIP() << compile::find_nvdisasm().not_found_reason

std::string messages(const std::vector<compare::SassFinding>& findings)
{
    std::string out;
    for (const auto& f : findings) out += f.metric + " " + f.kernel + ": " + f.message + "\n";
    return out;
}

} // namespace

TEST(SassDisassembly, ReadsInstructionsWithTheirLinesPerFunction)
{
    const auto functions = compile::parse_disassembly(sample, "copy.cubin");
    ASSERT_EQ(functions.size(), 1u);
    EXPECT_EQ(functions[0].name, "copy4");
    ASSERT_EQ(functions[0].instructions.size(), 6u);
    const auto& store = functions[0].instructions[2];
    EXPECT_EQ(store.offset, 0x20u);
    EXPECT_EQ(store.predicate, "@P0");
    EXPECT_EQ(store.opcode, "STG.E.128");
    EXPECT_EQ(store.operands, "[R6.64], R4");
    EXPECT_EQ(store.file, "/tmp/harness-compile-ab12/copy.cu");
    EXPECT_EQ(store.line, 6);
    EXPECT_EQ(functions[0].instructions[0].line, 4);

    const auto counts = compile::count_classes(functions);
    ASSERT_EQ(counts.size(), 1u);
    EXPECT_EQ(counts[0].counts.total, 5); // the NOP is padding, not code
    EXPECT_EQ(counts[0].counts[compile::SassClass::global_ld_128], 1);
    EXPECT_EQ(counts[0].counts[compile::SassClass::global_st_128], 1);
    EXPECT_EQ(counts[0].counts[compile::SassClass::branch], 1);
    ASSERT_EQ(counts[0].lines.size(), 2u);
    EXPECT_EQ(counts[0].lines[1].line, 6);
    EXPECT_EQ(counts[0].lines[1].counts[compile::SassClass::global_ld_128], 1);
}

TEST(SassDisassembly, MalformedOutputIsBadInputNamingTheCubinAndLine)
{
    for (const std::string& text : {std::string("        /*0000*/  MOV R1, R2 ;\n"),           // no section
                                    std::string(sample) + "\t//## File \"x.cu\", line many\n", // bad line
                                    std::string(sample) + "        /*0060*/   MOV R1, R2\n",   // no ';'
                                    std::string(sample) + "garbage that nvdisasm never prints\n"}) {
        try {
            compile::parse_disassembly(text, "kernels/k.cubin");
            ADD_FAILURE() << "accepted: " << text;
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::bad_input);
            EXPECT_NE(std::string(e.what()).find("kernels/k.cubin: disassembly line "), std::string::npos) << e.what();
        }
    }
}

TEST(SassDisassembly, ClassesByOpcode)
{
    using enum compile::SassClass;
    const std::pair<const char*, compile::SassClass> cases[] = {
        {"LDG.E", global_ld_32},
        {"LDG.E.U8.CONSTANT", global_ld_32},
        {"LDG.E.64", global_ld_64},
        {"LDG.E.128.CONSTANT", global_ld_128},
        {"STG.E.128", global_st_128},
        {"LDS.U.128", shared_ld_128},
        {"STS.64", shared_st_64},
        {"LDSM.16.M88.4", ldsm},
        {"LDL.LU", local_ld},
        {"STL.128", local_st},
        {"LDGSTS.E.BYPASS.128", async_copy},
        {"UTMALDG.2D", tma},
        {"HMMA.16816.F32.BF16", tensor},
        {"HGMMA.64x128x16.F32", tensor},
        {"FFMA.FTZ", fp32},
        {"DFMA", fp64},
        {"MUFU.RCP", mufu},
        {"I2FP.F32.S32", conversion},
        {"BRA.DIV", branch},
        {"BAR.SYNC.DEFER_BLOCKING", barrier},
    };
    for (const auto& [opcode, expected] : cases) {
        const auto c = compile::classify_instruction(opcode);
        ASSERT_TRUE(c) << opcode;
        EXPECT_EQ(compile::sass_class_info(*c).metric, compile::sass_class_info(expected).metric) << opcode;
    }
    EXPECT_FALSE(compile::classify_instruction("IMAD.WIDE"));
    EXPECT_FALSE(compile::classify_instruction("LDC.64")); // constant bank, not global memory
}

TEST(SassDisassembly, ARunawayOrFailingDisassemblyIsBadInputNamingTheFile)
{
    const TempDir dir{"harness-sass"};
    compile::DisassemblyLimits limits;
    limits.timeout_s = 1;
    limits.max_output_bytes = 1 << 20;
    const struct {
        const char* body;
        const char* says;
    } cases[] = {
        {"exec yes 'LDG.E R0, [R2.64] ;'", "ran past the limits"}, // huge
        {"exec sleep 30", "ran past the limits"},                  // hangs
        {"echo 'nvdisasm fatal   : Invalid elf' >&2; exit 1", "Invalid elf"},
        {"kill -SEGV $$", "killed by signal"},
    };
    for (const auto& c : cases) {
        const fs::path program = script(dir.path, c.body);
        try {
            compile::disassemble_cubin(program,
                                       "\x7f"
                                       "ELF",
                                       "kernels/bad.cubin", limits);
            ADD_FAILURE() << "accepted: " << c.body;
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::bad_input) << e.what();
            EXPECT_NE(std::string(e.what()).find("kernels/bad.cubin"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << e.what();
        }
    }
}

namespace {

/// What a forked child that disassembled and read one cubin came back with: the error (empty when
/// it read it), its wall time and its peak resident memory.
struct BoundedRead {
    std::string error;
    double seconds = 0;
    long peak_rss_mib = 0;
};

/// Disassembles `cubin` with `program` and reads the output, at `limits`, in a child process, so
/// that its memory is its own to measure.
BoundedRead read_in_child(const fs::path& program, const std::string& cubin, const compile::DisassemblyLimits& limits)
{
    int answer[2];
    EXPECT_EQ(::pipe(answer), 0);
    const auto start = std::chrono::steady_clock::now();
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(answer[0]);
        std::string error;
        try {
            const auto functions =
                compile::parse_disassembly(compile::disassemble_cubin(program, cubin, "kernels/hostile.cubin", limits),
                                           "kernels/hostile.cubin", limits.max_instructions);
            std::size_t n = 0;
            for (const auto& f : functions) n += f.instructions.size();
            error = n == 0 ? "read no instruction" : "";
        } catch (const Error& e) {
            error = std::string(e.kind() == ErrorKind::bad_input ? "bad input: " : "other: ") + e.what();
        }
        (void)!::write(answer[1], error.data(), error.size());
        ::_exit(0);
    }
    ::close(answer[1]);
    BoundedRead out;
    std::array<char, 4096> buffer{};
    for (ssize_t n; (n = ::read(answer[0], buffer.data(), buffer.size())) > 0;) out.error.append(buffer.data(), n);
    ::close(answer[0]);
    int status = 0;
    rusage usage{};
    ::wait4(pid, &status, 0, &usage);
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    out.peak_rss_mib = usage.ru_maxrss / 1024;
    return out;
}

} // namespace

TEST(SassDisassembly, AHugeDisassemblyIsBadInputBoundedInTimeAndMemory)
{
    const TempDir dir{"harness-sass-huge"};
    const compile::DisassemblyLimits limits; // the defaults every run uses
    const std::string instruction = "        /*0000*/                   LDG.E R0, desc[UR4][R2.64] ;";
    // A code section and a source line, as nvdisasm -g prints them: each instruction takes its file.
    const std::string section = "printf '\\t.section\\t.text.k,\"ax\",@progbits\\n\\t//## File "
                                "\"/tmp/harness-compile-0123456789/kernels/planted/hostile_kernel.cu\", line 12\\n'; ";
    const struct {
        std::string body;
        std::string says;
    } cases[] = {
        // Instructions without end: stopped at the output limit, never read.
        {section + "exec yes '" + instruction + "'", "ran past the limits"},
        // Instructions within the output limit, more than a cubin may hold: read up to the bound.
        {section + "yes '" + instruction + "' | head -n 3000000",
         fmt::format("more instructions than the {} one cubin may hold", limits.max_instructions)},
        // A million lines that are no output of nvdisasm's: the first one is bad input.
        {section + "yes 'garbage' | head -n 1000000", "not a line of nvdisasm's output"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.body);
        const BoundedRead read = read_in_child(script(dir.path, c.body),
                                               "\x7f"
                                               "ELF",
                                               limits);
        EXPECT_EQ(read.error.find("bad input: kernels/hostile.cubin"), 0u) << read.error;
        EXPECT_NE(read.error.find(c.says), std::string::npos) << read.error;
        // Well inside the time limit, and within the output limit and the instructions' bound in memory.
        EXPECT_LT(read.seconds, 20.0);
        EXPECT_LT(read.peak_rss_mib, 768) << "peak resident memory of the read, MiB";
        std::printf("%s: %.2f s, %ld MiB\n", c.says.c_str(), read.seconds, read.peak_rss_mib);
    }
}

TEST(SassDisassembly, AMalformedCubinIsBadInputNamingIt)
{
    REQUIRE_NVDISASM();
    const TempDir project{"harness-sass-malformed"};
    const fs::path source = project.path / "kernels/copy.cu";
    write(source, "extern \"C\" __global__ void copy(const float4* in, float4* out) { out[threadIdx.x] = "
                  "in[threadIdx.x]; }\n");
    compile::CompileRequest request;
    request.source = source;
    request.arch = "sm_90";
    request.entries = {"copy"};
    const compile::CompiledModule module = compile::compile(request);
    ASSERT_TRUE(compile::module_sass(module, "kernels/copy.cubin", nullptr).error.empty());
    // Cut short, and its code overwritten with bytes that are no instructions.
    compile::CompiledModule cut = module;
    cut.cubin.resize(cut.cubin.size() / 3);
    compile::CompiledModule scrambled = module;
    for (std::size_t i = scrambled.cubin.size() / 4; i < scrambled.cubin.size(); i += 7) scrambled.cubin[i] ^= 0x5a;
    for (const auto* hostile : {&cut, &scrambled}) {
        const auto start = std::chrono::steady_clock::now();
        const compile::ModuleSass sass = compile::module_sass(*hostile, "kernels/hostile.cubin", nullptr);
        EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 60.0);
        // Refused naming the cubin, or read as what nvdisasm makes of it: never a crash or a hang.
        if (!sass.error.empty()) {
            EXPECT_EQ(sass.error.find("kernels/hostile.cubin: "), 0u) << sass.error;
        } else {
            EXPECT_EQ(hostile, &scrambled) << "a cubin cut to a third was read";
        }
    }
}

TEST(SassBaseline, LinesReadBackAsWritten)
{
    compare::SassBaseline file;
    file.set_identity("gemm", "sm_90.sass");
    file.cases[{"vectorized", "N=256"}] = {
        {"gemm_vectorized<128, 128, 8, 8, 8>", "kernels/gemm/gemm_vectorized.cu", 10, {{"sass_global_ld_128", 6}}},
        {"gemm_vectorized<128, 128, 8, 8, 8>",
         "kernels/gemm/gemm_vectorized.cu",
         12,
         {{"sass_global_ld_32", 12}, {"sass_shared_st_32", 2}}}};
    const std::string text = compare::sass_baseline_text(file);
    EXPECT_NE(text.find("\"10\",\"global_ld_128=6\""), std::string::npos) << text;
    const auto back = compare::parse_sass_baseline(text, "sm_90.sass.csv");
    EXPECT_EQ(back.cases, file.cases);
    try {
        compare::parse_sass_baseline(text + "\"v\",\"N=1\",\"k\",\"f.cu\",\"3\",\"fp32=4\"\n", "sm_90.sass.csv");
        ADD_FAILURE() << "an ungated class was accepted";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("sm_90.sass.csv:"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("counts"), std::string::npos) << e.what();
    }
}

TEST(SassGate, Float4SplitIntoScalarsFailsAtItsLineAndBenignTwinsPass)
{
    REQUIRE_NVDISASM();
    const TempDir project{"harness-sass"};
    const std::string original = read(repo_root() / "kernels" / "gemm" / "gemm_vectorized.cu");
    const std::string entry = "gemm_vectorized<128, 128, 8, 8, 8>";
    const std::string file = "kernels/gemm/gemm_vectorized.cu";
    const std::string vector_load = "        return *reinterpret_cast<const float4*>(matrix + row * cols + col);";
    for (const std::string arch : {"sm_80", "sm_90"}) {
        const auto baseline = sass_of(project.path, file, original, entry, arch);
        ASSERT_GT(baseline.metric("sass_global_ld_128"), 0) << arch;

        const auto split = sass_of(project.path, file,
                                   planted(original, vector_load,
                                           "        return make_float4(matrix[row * cols + col], matrix[row * cols + "
                                           "col + 1], matrix[row * cols + col + 2], matrix[row * cols + col + 3]);"),
                                   entry, arch);
        const auto findings = compare::sass_findings(baseline.lines, split.lines);
        ASSERT_FALSE(findings.empty()) << arch;
        EXPECT_EQ(findings[0].metric, "sass_global_ld_128") << messages(findings);
        EXPECT_EQ(findings[0].kernel, entry);
        EXPECT_EQ(findings[0].location, file + ":10") << messages(findings);
        EXPECT_NE(findings[0].message.find(file + ":10: global loads 128-bit -> 32-bit ("), std::string::npos)
            << messages(findings);

        // Benign twins: a local renamed, every line moved down by three, a bounds check added.
        const std::string renamed = planted(
            planted(planted(planted(planted(planted(original, "float4 q;", "float4 quad;"), "q.x =", "quad.x ="),
                                    "q.y =", "quad.y ="),
                            "q.z =", "quad.z ="),
                    "q.w =", "quad.w ="),
            "return q;", "return quad;");
        const std::string moved = "// a comment\n// that moves\n// every line\n" + original;
        const std::string bounds_checked =
            planted(original, "    constexpr int kThreads = (BM / TM) * (BN / TN);",
                    "    if (m <= 0 || n <= 0) return;\n    constexpr int kThreads = (BM / TM) * (BN / TN);");
        for (const auto& [what, text] : {std::pair{"renamed locals", renamed}, std::pair{"moved lines", moved},
                                         std::pair{"a bounds check", bounds_checked}}) {
            const auto twin = sass_of(project.path, file, text, entry, arch);
            EXPECT_EQ(messages(compare::sass_findings(baseline.lines, twin.lines)), "") << what << " on " << arch;
        }
    }
}

TEST(SassGate, WmmaKernelFallingBackToFfmaFailsAndMovedLinesPass)
{
    REQUIRE_NVDISASM();
    const TempDir project{"harness-sass"};
    const std::string original = read(repo_root() / "examples" / "tensor-kernels" / "kernels" / "wmma_gemm_bf16.cu");
    const std::string entry = "wmma_gemm_bf16<32>";
    const std::string file = "kernels/wmma_gemm_bf16.cu";
    const auto baseline = sass_of(project.path, file, original, entry, "sm_80");
    ASSERT_GT(baseline.metric("sass_tensor"), 0);

    const auto fallback = sass_of(project.path, file,
                                  planted(original, "wmma::mma_sync(acc, a, b, acc);",
                                          "for (int t = 0; t < acc.num_elements; ++t) acc.x[t] += "
                                          "__bfloat162float(a.x[t % a.num_elements]) * "
                                          "__bfloat162float(b.x[t % b.num_elements]);"),
                                  entry, "sm_80");
    EXPECT_EQ(fallback.metric("sass_tensor"), 0);
    const auto findings = compare::sass_findings(baseline.lines, fallback.lines);
    const auto tensor = std::find_if(findings.begin(), findings.end(),
                                     [](const compare::SassFinding& f) { return f.metric == "sass_tensor"; });
    ASSERT_NE(tensor, findings.end()) << messages(findings);
    EXPECT_EQ(tensor->kernel, entry);
    EXPECT_TRUE(tensor->location.starts_with(file + ":")) << tensor->location;
    EXPECT_NE(tensor->message.find(fmt::format("tensor-core instructions {} -> none", baseline.metric("sass_tensor"))),
              std::string::npos)
        << tensor->message;
    EXPECT_NE(tensor->message.find("FP32 instructions at this line"), std::string::npos) << tensor->message;

    const auto moved = sass_of(project.path, file, "\n\n\n\n" + original, entry, "sm_80");
    EXPECT_EQ(messages(compare::sass_findings(baseline.lines, moved.lines)), "");
}

TEST(SassGate, LocalMemoryAppearingFailsAtItsLine)
{
    REQUIRE_NVDISASM();
    const TempDir project{"harness-sass"};
    const fs::path kernels = project.path / "kernels";
    write(kernels / "occupancy" / "chase.cuh", read(repo_root() / "kernels" / "occupancy" / "chase.cuh"));
    const std::string original = read(repo_root() / "kernels" / "occupancy" / "occupancy_local_array.cu");
    const std::string file = "kernels/occupancy/occupancy_local_array.cu";
    const std::string runtime_index = "partial[s % partials] += v;";
    // The baseline keeps one running sum at a fixed index: registers hold it.
    const std::string one_sum =
        planted(planted(planted(original, runtime_index, "partial[0] += v;"),
                        "for (int j = 0; j < partials; ++j) partial[j] = 0.0f;", "partial[0] = 0.0f;"),
                "for (int j = 0; j < partials; ++j) total += partial[j];", "total += partial[0];");
    const auto in_registers = sass_of(project.path, file, one_sum, "occupancy_local_array", "sm_80", {kernels});
    ASSERT_EQ(in_registers.metric("sass_local_ld") + in_registers.metric("sass_local_st"), 0);
    const auto in_local = sass_of(project.path, file, original, "occupancy_local_array", "sm_80", {kernels});
    ASSERT_GT(in_local.metric("sass_local_ld") + in_local.metric("sass_local_st"), 0);

    const auto findings = compare::sass_findings(in_registers.lines, in_local.lines);
    const auto local = std::find_if(findings.begin(), findings.end(),
                                    [](const compare::SassFinding& f) { return f.metric.starts_with("sass_local"); });
    ASSERT_NE(local, findings.end()) << messages(findings);
    EXPECT_EQ(local->kernel, "occupancy_local_array");
    EXPECT_TRUE(local->location.starts_with(file + ":")) << local->location;
    EXPECT_NE(local->message.find("local loads and stores none -> "), std::string::npos) << local->message;
    // At the line indexed at run time, which holds most of them, not at the zero fill before it.
    const auto index_line = std::count(original.begin(), original.begin() + original.find(runtime_index), '\n') + 1;
    EXPECT_EQ(local->location, fmt::format("{}:{}", file, index_line)) << local->message;
    // Gone again: an improvement, no finding.
    EXPECT_EQ(messages(compare::sass_findings(in_local.lines, in_registers.lines)).find("sass_local"),
              std::string::npos);
}

} // namespace sass_gate_test
