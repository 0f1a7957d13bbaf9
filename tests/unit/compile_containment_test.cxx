// A kernel's compilation reads only its project, the folders its suite declares and the CUDA
// toolkit: every way an #include can name another file is refused before the compiler runs, the
// compiler process itself is confined where the kernel allows, nothing of an outside file reaches
// a report, and a compilation that takes too long or too much memory fails its own case.

#include "harness/cli/commands.hxx"
#include "harness/compile/compile_suite.hxx"
#include "harness/compile/confinement.hxx"
#include "harness/compile/include_scan.hxx"
#include "harness/compile/nvrtc_compiler.hxx"
#include "harness/suite/suite.hxx"
#include "test_files.hxx"
#include "tool_output.hxx"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <gtest/gtest.h>
#include <nvrtc.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace compile_containment_test {

using namespace harness;
namespace fs = std::filesystem;

namespace {

// The value that must appear in no output: it lives in this process's environment and in a file
// outside the project.
const std::string marker = "MARKER_8c1f2e_never_published";

const char* vector_add = R"(extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {}
)";

std::string suite_text(const std::string& name, const std::string& source, const std::string& extra = "")
{
    return "suite: " + name + "\nparams: {N: [1024]}\nreference: v\n" + extra +
           "buffers:\n  a: {type: f32, count: N, role: in}\n  b: {type: f32, count: N, role: in}\n"
           "  c: {type: f32, count: N, role: out}\nvariants:\n  v:\n    source: ../kernels/" +
           source +
           "\n    entry: vector_add\n    block: [256]\n    grid: [\"ceil_div(N, 256)\"]\n"
           "    args: [a, b, c, {i32: N}]\n";
}

/// A project in `root/project`, and a secret file beside it, outside the project.
struct LeakProject {
    TempDir dir{"harness-containment"};
    fs::path project = dir.path / "project";
    fs::path secret = dir.path / "secret.h";
    LeakProject()
    {
        fs::create_directories(project / "kernels");
        fs::create_directories(project / "suites");
        fs::create_directories(project / "baselines");
        write_file(secret, "int leaked = " + marker + ";\n");
        ::setenv("HARNESS_TEST_SECRET", marker.c_str(), 1);
    }
    fs::path add(const std::string& name, const std::string& kernel_text)
    {
        write_file(project / "kernels" / (name + ".cu"), kernel_text);
        const fs::path suite = project / "suites" / (name + ".yaml");
        write_file(suite, suite_text(name, name + ".cu"));
        return suite;
    }
};

ToolOutput tool(const std::vector<std::string>& args)
{
    return run_tool_captured(args);
}

/// Every file under `dir` whose content holds `text`.
std::vector<std::string> files_holding(const fs::path& dir, const std::string& text)
{
    std::vector<std::string> found;
    for (const auto& [name, content] : snapshot(dir))
        if (content.find(text) != std::string::npos) found.push_back(name);
    return found;
}

} // namespace

TEST(IncludeDirectives, FoundAsThePreprocessorSeesThem)
{
    const auto d = compile::include_directives("#include \"a.h\"\n"
                                               "// #include \"commented.h\"\n"
                                               "/* #include \"in_comment.h\" */\n"
                                               "  #/**/include <b.h>\n"
                                               "#inc\\\nlude \"c.h\"\n"
                                               "%:include \"d.h\"\n"
                                               "const char* s = \"#include \\\"in_string.h\\\"\";\n"
                                               "const char* r = R\"x( \" /* )x\";\n"
                                               "#include \"e.h\"\n"
                                               "/* spanning\n */ #include \"f.h\"\n"
                                               "#define NAME \"g.h\"\n"
                                               "#include NAME\n"
                                               "#include_next \"h.h\"\n");
    ASSERT_EQ(d.size(), 8u);
    EXPECT_EQ(d[0].name, "a.h");
    EXPECT_EQ(d[0].line, 1);
    EXPECT_EQ(d[1].name, "b.h");
    EXPECT_TRUE(d[1].angled);
    EXPECT_EQ(d[1].line, 4);
    EXPECT_EQ(d[2].name, "c.h"); // a line splice inside the keyword
    EXPECT_EQ(d[2].line, 5);
    EXPECT_EQ(d[3].name, "d.h"); // the digraph %: is #
    EXPECT_EQ(d[3].line, 7);
    EXPECT_EQ(d[4].name, "e.h"); // a "/*" inside a raw string opens no comment
    EXPECT_EQ(d[4].line, 10);
    EXPECT_EQ(d[5].name, "f.h"); // after a comment that began its line
    EXPECT_EQ(d[5].line, 11);
    EXPECT_EQ(d[6].name, ""); // computed
    EXPECT_EQ(d[6].line, 14);
    EXPECT_EQ(d[7].keyword, "include_next");
}

TEST(IncludeScan, ProjectIncludesAreFollowedAndOutsideOnesRefusedWithFileAndLine)
{
    LeakProject p;
    write_file(p.project / "kernels" / "common" / "tile.cuh", "#include \"../more.cuh\"\n");
    write_file(p.project / "kernels" / "more.cuh", "#include <cuda_fp16.h>\n");
    write_file(p.project / "kernels" / "ok.cu", std::string("#include \"common/tile.cuh\"\n") + vector_add);
    compile::IncludeSearch search;
    search.source = p.project / "kernels" / "ok.cu";
    search.include_dirs = {search.source.parent_path()};
    search.toolkit_dirs = compile::toolkit_include_dirs();
    search.project_roots = {p.project};
    const auto files = compile::scan_includes(search);
    ASSERT_EQ(files.size(), 3u);
    EXPECT_EQ(files[1].filename(), "tile.cuh");
    EXPECT_EQ(files[2].filename(), "more.cuh");

    fs::create_symlink(p.secret, p.project / "kernels" / "link.cuh");
    const std::string outside = fs::relative(p.secret, p.project / "kernels").string();
    const std::vector<std::pair<std::string, std::string>> refused = {
        {"#include \"" + p.secret.string() + "\"\n", "an absolute path"},
        {"#include \"" + outside + "\"\n", "outside the project"},
        {"#include <" + p.secret.string() + ">\n", "an absolute path"},
        {"\n#include \"link.cuh\"\n", "symbolic link"},
        {"#define SECRET \"/proc/self/environ\"\n#include SECRET\n", "computed #include"},
        {"#include \"/proc/self/environ\"\n", "an absolute path"},
        {"#include \"/dev/zero\"\n", "outside the project"},
    };
    for (const auto& [text, reason] : refused) {
        write_file(p.project / "kernels" / "bad.cu", text + vector_add);
        search.source = p.project / "kernels" / "bad.cu";
        try {
            compile::scan_includes(search);
            ADD_FAILURE() << "not refused: " << text;
        } catch (const compile::CompileError& e) {
            const std::string message = e.what();
            EXPECT_NE(message.find("bad.cu:"), std::string::npos) << message;
            EXPECT_NE(message.find(reason), std::string::npos) << message;
            EXPECT_EQ(message.find(marker), std::string::npos) << message;
        }
    }
    // The line of the directive is named, not the first line.
    write_file(p.project / "kernels" / "bad.cu", "\n\n#include \"link.cuh\"\n");
    try {
        compile::scan_includes(search);
        ADD_FAILURE() << "not refused";
    } catch (const compile::CompileError& e) {
        EXPECT_NE(std::string(e.what()).find("bad.cu:3:"), std::string::npos) << e.what();
    }
}

// The reproducers: every form of an outside include, in a real run of the static tier. The run
// fails those cases (exit 1), and the secret is in no output and no report.
TEST(CompileContainment, NoOutsideFileReachesAnyOutput)
{
    LeakProject p;
    fs::create_symlink(p.secret, p.project / "kernels" / "linked.cuh");
    const std::vector<std::pair<std::string, std::string>> kernels = {
        {"leak_environ", "#include \"/proc/self/environ\"\n"},
        {"leak_absolute", "#include \"" + p.secret.string() + "\"\n"},
        {"leak_dotdot", "#include \"../../../../../../../../../.." + p.secret.string() + "\"\n"},
        {"leak_angled", "#include <" + p.secret.string() + ">\n"},
        {"leak_symlink", "#include \"linked.cuh\"\n"},
        {"leak_macro", "#define F \"/proc/self/environ\"\n#include F\n"},
    };
    for (const auto& [name, include] : kernels) {
        const fs::path suite = p.add(name, include + vector_add);
        const fs::path out = p.dir.path / ("out-" + name);
        const ToolOutput o = tool({"run", "--static", "--no-ci", "--no-cache", "--out", out.string(), suite.string()});
        EXPECT_EQ(o.code, 1) << name << "\n" << o.out << o.err;
        EXPECT_EQ(o.out.find(marker), std::string::npos) << name << ": in stdout";
        EXPECT_EQ(o.err.find(marker), std::string::npos) << name << ": in stderr";
        EXPECT_TRUE(files_holding(out, marker).empty()) << name << ": in " << files_holding(out, marker).front();
        EXPECT_TRUE(files_holding(out, "root:x:0:0").empty()) << name;
        EXPECT_NE((o.out + o.err).find(name + ".cu:"), std::string::npos) << name << ": the including file is named";
        EXPECT_NE(read_file(out / name / "junit.xml").find(name + ".cu:"), std::string::npos) << name;
    }
}

// The enforcement under the scan: a confined process cannot open a file outside its folders, and
// NVRTC in it reports the include as unopenable without reading it.
TEST(CompileContainment, AConfinedCompilerCannotReadOutsideItsFolders)
{
    const auto support = compile::confinement_support();
    if (!support.available) GTEST_SKIP() << "compilation cannot be confined here: " << support.reason;
    LeakProject p;
    write_file(p.project / "kernels" / "inside.cuh", "#define INSIDE 1\n");
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        int failures = 0;
        try {
            compile::load_nvrtc_builtins();
            compile::confine_to({p.project, compile::toolkit_include_dirs().front()}, {});
        } catch (...) {
            ::_exit(90);
        }
        if (::open(p.secret.c_str(), O_RDONLY) >= 0 || errno != EACCES) failures |= 1;
        if (::open("/proc/self/environ", O_RDONLY) >= 0) failures |= 2;
        if (::open((p.project / "kernels" / "inside.cuh").c_str(), O_RDONLY) < 0) failures |= 4;
        if (::open((p.project / "kernels" / "new.cu").c_str(), O_WRONLY | O_CREAT, 0600) >= 0) failures |= 8;
        // NVRTC itself, with the scan bypassed.
        const std::string source = "#include \"" + p.secret.string() + "\"\n" + vector_add;
        nvrtcProgram program = nullptr;
        nvrtcCreateProgram(&program, source.c_str(), "direct.cu", 0, nullptr, nullptr);
        const char* options[] = {"--gpu-architecture=sm_90"};
        if (nvrtcCompileProgram(program, 1, options) == NVRTC_SUCCESS) failures |= 16;
        std::size_t size = 0;
        nvrtcGetProgramLogSize(program, &size);
        std::string log(size, '\0');
        nvrtcGetProgramLog(program, log.data());
        if (log.find(marker) != std::string::npos) failures |= 32;
        if (log.find("cannot open source file") == std::string::npos) {
            std::fprintf(stderr, "NVRTC log: %s\n", log.c_str());
            failures |= 64;
        }
        ::_exit(failures);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "failure bits: 1 outside file opened, 2 /proc/self/environ opened, 4 project "
                                         "file refused, 8 file created, 16 compiled, 32 secret in the log, 64 log "
                                         "without the open failure, 90 confinement refused";
}

TEST(CompileContainment, DiagnosticsInOutsideFilesAreWithheldFromTheLog)
{
    const std::string log = "/etc/passwd(1): error: identifier \"root\" is undefined\n"
                            "  root:x:0:0:root:/root:/bin/bash\n"
                            "  ^\n"
                            "\n"
                            "/work/p/kernels/a.cu(3): error: expected a \";\"\n"
                            "    int x\n"
                            "         ^\n"
                            "2 errors detected in the compilation of \"a.cu\".\n";
    const std::string kept = compile::withhold_outside_diagnostics(log, {"/work/p"});
    EXPECT_EQ(kept.find("root"), std::string::npos) << kept;
    EXPECT_NE(kept.find("/etc/passwd(1): error: [withheld"), std::string::npos) << kept;
    EXPECT_NE(kept.find("a.cu(3): error: expected a \";\"\n    int x\n"), std::string::npos) << kept;
    EXPECT_NE(kept.find("2 errors detected"), std::string::npos) << kept;
}

// A kernel whose compilation would run for minutes and take gigabytes fails its own case at the
// suite's limits, with a message naming the limit; the other variants of the run still compile.
TEST(CompileLimits, TimeAndMemoryLimitsStopACompilationAndSaySo)
{
    LeakProject p;
    write_file(p.project / "kernels" / "big.cu",
               "__device__ char big[1 << 30] = {1};\n"
               "extern \"C\" __global__ void vector_add(const float* a, const float* b, float* c, int n) { c[0] = "
               "big[n]; }\n");
    write_file(p.project / "kernels" / "small.cu", vector_add);
    for (const auto& [limit, expected] : std::vector<std::pair<std::string, std::string>>{
             {"compile: {timeout_s: 2}\n", "longer than 2 s"}, {"compile: {memory_mib: 300}\n", "300 MiB"}}) {
        std::string text = suite_text("big", "big.cu", limit);
        text += "  w:\n    source: ../kernels/small.cu\n    entry: vector_add\n    block: [256]\n"
                "    grid: [\"ceil_div(N, 256)\"]\n    args: [a, b, c, {i32: N}]\n";
        const fs::path suite = p.project / "suites" / "big.yaml";
        write_file(suite, text);
        const auto start = std::chrono::steady_clock::now();
        const ToolOutput o = tool({"check", "--no-cache", "--arch", "sm_80", suite.string()});
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        EXPECT_EQ(o.code, 1) << o.out << o.err;
        EXPECT_NE(o.out.find(expected), std::string::npos) << o.out;
        EXPECT_NE(o.out.find("compile."), std::string::npos) << o.out;
        EXPECT_NE(o.out.find("w  "), std::string::npos) << o.out; // the other variant
        EXPECT_LT(seconds, 60.0);
    }
}

} // namespace compile_containment_test
