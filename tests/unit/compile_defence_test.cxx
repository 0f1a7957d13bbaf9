// What stands between a kernel and the files of the job that compiles it, besides the include scan:
// a compiler process has no environment and works in an empty folder of its own, a cache entry
// holds the files its module was compiled from and is used only while they read the same, a
// kernel may not read the project's .git folder or a hard link, and CI mode compiles no kernel
// with project includes where Landlock cannot confine the compiler, unless the user allows it.

#include "harness/cli/commands.hxx"
#include "harness/compile/confinement.hxx"
#include "harness/compile/include_policy.hxx"
#include "harness/compile/include_scan.hxx"
#include "harness/compile/kernel_cache.hxx"
#include "harness/compile/nvrtc_compiler.hxx"
#include "test_files.hxx"
#include "tool_output.hxx"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <gtest/gtest.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <nlohmann/json.hpp>
#include <nvrtc.h>
#include <string>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace compile_defence_test {

using namespace harness;
namespace fs = std::filesystem;

namespace {

const char* vector_add = R"(extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {}
)";

/// A project in a scratch folder: kernels/, suites/, and a file outside it.
struct Project {
    TempDir dir{"harness-defence"};
    fs::path root = dir.path / "project";
    fs::path outside = dir.path / "outside.txt";
    Project()
    {
        fs::create_directories(root / "kernels");
        fs::create_directories(root / "suites");
        fs::create_directories(root / "baselines");
    }
    /// Writes kernels/<name>.cu and suites/<name>.yaml; returns the suite.
    fs::path add(const std::string& name, const std::string& kernel_text) const
    {
        write_file(root / "kernels" / (name + ".cu"), kernel_text);
        const fs::path suite = root / "suites" / (name + ".yaml");
        write_file(suite, "suite: " + name +
                              "\narchs: [sm_80]\nparams: {N: [1024]}\nreference: v\n"
                              "buffers:\n  a: {type: f32, count: N, role: in}\n  b: {type: f32, count: N, role: in}\n"
                              "  c: {type: f32, count: N, role: out}\nvariants:\n  v:\n    source: ../kernels/" +
                              name +
                              ".cu\n    entry: vector_add\n    block: [256]\n    grid: [\"ceil_div(N, 256)\"]\n"
                              "    args: [a, b, c, {i32: N}]\n");
        return suite;
    }
};

/// Moves this process to `folder` for one scope.
class WorkingFolder {
public:
    explicit WorkingFolder(const fs::path& folder) : old_(fs::current_path()) { fs::current_path(folder); }
    ~WorkingFolder() { fs::current_path(old_); }
    WorkingFolder(const WorkingFolder&) = delete;
    WorkingFolder& operator=(const WorkingFolder&) = delete;

private:
    fs::path old_;
};

std::string read_proc_file(const char* path)
{
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return {};
    std::string text;
    char chunk[4096];
    for (ssize_t n; (n = ::read(fd, chunk, sizeof chunk)) > 0;) text.append(chunk, static_cast<std::size_t>(n));
    ::close(fd);
    return text;
}

/// NVRTC's log for `source`, compiled in this process without the include scan.
std::string nvrtc_log(const std::string& source, const std::vector<std::string>& options)
{
    nvrtcProgram program = nullptr;
    nvrtcCreateProgram(&program, source.c_str(), "direct.cu", 0, nullptr, nullptr);
    std::vector<const char*> argv;
    for (const auto& option : options) argv.push_back(option.c_str());
    nvrtcCompileProgram(program, static_cast<int>(argv.size()), argv.data());
    std::size_t size = 0;
    nvrtcGetProgramLogSize(program, &size);
    std::string log(size, '\0');
    nvrtcGetProgramLog(program, log.data());
    nvrtcDestroyProgram(&program);
    return log;
}

/// The message of the CompileError that source_closure() throws for `source`, or a failure.
std::string refusal(const fs::path& source, const std::vector<fs::path>& project_roots)
{
    compile::CompileRequest request;
    request.source = source;
    request.readable_roots = project_roots;
    try {
        compile::source_closure(request);
    } catch (const compile::CompileError& e) {
        return e.what();
    }
    ADD_FAILURE() << source << " was not refused";
    return {};
}

/// How a command run in a forked child ended, and what it printed (stdout and stderr together).
struct ChildRun {
    int code = -1;
    std::string output;
};

/// Installs a seccomp filter under which the Landlock system calls fail with ENOSYS, as in a
/// container whose profile blocks them; false where this architecture is not known here.
bool block_landlock()
{
#if defined(__x86_64__)
    constexpr __u32 arch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
    constexpr __u32 arch = AUDIT_ARCH_AARCH64;
#else
    return false;
#endif
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_landlock_create_ruleset, 3, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_landlock_add_rule, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_landlock_restrict_self, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
    };
    struct sock_fprog program = {static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
    return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
           ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) == 0;
}

/// `harness ARGS...` in a forked child where Landlock is blocked; code 77 when it cannot be blocked.
ChildRun run_without_landlock(const std::vector<std::string>& args, const fs::path& output_file)
{
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int out = ::open(output_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        ::dup2(out, STDOUT_FILENO);
        ::dup2(out, STDERR_FILENO);
        if (!block_landlock()) ::_exit(77);
        const int code = cli::run_tool(args);
        std::fflush(nullptr);
        ::_exit(code);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_file(output_file)};
}

} // namespace

// A compiler process keeps nothing of the job's environment, not even in /proc/self/environ
// (which shows the strings the process started with, whatever clearenv() did), and finds nothing
// in its working folder: NVRTC, reading either with the include scan out of the way, gets nothing.
TEST(CompilerProcess, HasNoEnvironmentAndAnEmptyWorkingFolder)
{
    const std::string initial = read_proc_file("/proc/self/environ");
    if (initial.find('=') == std::string::npos) GTEST_SKIP() << "this process started with no environment";
    const TempDir scratch{"harness-defence"};
    write_file(scratch.path / "found_here.h", "#define FOUND 1\n");
    const compile::EmptyFolder folder;
    ASSERT_TRUE(fs::is_empty(folder.path()));
    const WorkingFolder here(scratch.path);
    compile::load_nvrtc_builtins();
    const fs::path result = scratch.path / "result.txt";
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        std::string failures;
        try {
            compile::isolate_compiler_process(folder.path());
        } catch (const std::exception& e) {
            failures += std::string("isolate: ") + e.what() + "\n";
        }
        if (environ && *environ) failures += std::string("a variable is left: ") + *environ + "\n";
        if (read_proc_file("/proc/self/environ").find_first_not_of('\0') != std::string::npos)
            failures += "/proc/self/environ still shows text\n";
        if (fs::current_path() != folder.path()) failures += "working folder: " + fs::current_path().string() + "\n";
        const std::string leak = nvrtc_log(R"(#define S(...) #__VA_ARGS__
static_assert(sizeof(S(
#include "/proc/self/environ"
)) == 1, S(
#include "/proc/self/environ"
));
)" + std::string(vector_add),
                                           {"--gpu-architecture=sm_80"});
        for (std::size_t start = 0, end; start < initial.size(); start = end + 1) {
            end = std::min(initial.find('\0', start), initial.size());
            const std::string variable = initial.substr(start, end - start);
            if (variable.size() > 4 && leak.find(variable) != std::string::npos)
                failures += "NVRTC read the variable " + variable + "\n";
        }
        const std::string found =
            nvrtc_log("#include \"found_here.h\"\n" + std::string(vector_add), {"--gpu-architecture=sm_80"});
        if (found.find("cannot open source file \"found_here.h\"") == std::string::npos)
            failures += "a header of the former working folder was found: " + found + "\n";
        std::FILE* out = std::fopen(result.c_str(), "w");
        if (out) {
            std::fputs(failures.c_str(), out);
            std::fclose(out);
        }
        ::_exit(out ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EXPECT_EQ(read_file(result), "");
    EXPECT_EQ(read_proc_file("/proc/self/environ"), initial) << "the parent's environment changed";
}

// The folder goes with its command; one that a killed command left goes with a later command,
// once it is a day old (a younger one may be a running command's).
TEST(CompilerProcess, TheEmptyFolderIsReadOnlyAndRemoved)
{
    const TempDir scratch{"harness-defence"};
    const char* old_temp = std::getenv("TMPDIR");
    const std::string saved = old_temp ? old_temp : "";
    ::setenv("TMPDIR", scratch.path.c_str(), 1);
    const fs::path abandoned = scratch.path / "harness-compile-abandoned";
    const fs::path recent = scratch.path / "harness-compile-recent";
    const fs::path kept = scratch.path / "harness-compile-not-empty";
    for (const auto& folder : {abandoned, recent, kept}) fs::create_directories(folder);
    write_file(kept / "file", "");
    for (const auto& folder : {abandoned, kept})
        fs::last_write_time(folder, fs::file_time_type::clock::now() - std::chrono::hours(48));
    fs::path path;
    {
        const compile::EmptyFolder folder;
        path = folder.path();
        EXPECT_EQ(path.parent_path(), scratch.path);
        EXPECT_TRUE(fs::is_directory(path));
        EXPECT_TRUE(fs::is_empty(path));
        EXPECT_EQ(fs::status(path).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_exec);
    }
    if (old_temp)
        ::setenv("TMPDIR", saved.c_str(), 1);
    else
        ::unsetenv("TMPDIR");
    EXPECT_FALSE(fs::exists(path));
    EXPECT_FALSE(fs::exists(abandoned));
    EXPECT_TRUE(fs::exists(recent));
    EXPECT_TRUE(fs::exists(kept / "file"));
}

// A header that NVRTC would find only through the working folder of the command (here a path
// from the project's top, run from there) is not found, cached or not: the kernel fails to compile,
// naming it, as it does from any other folder.
TEST(CompileDefence, AHeaderInTheWorkingFolderIsNotFound)
{
    const Project p;
    write_file(p.root / "kernels" / "cwd" / "dep.h", "#define WORK(x, y) ((x) + (y))\n");
    const fs::path suite = p.add("cwdinc", "#include \"kernels/cwd/dep.h\"\n" + std::string(vector_add));
    const fs::path cache = p.dir.path / "cache";
    for (const fs::path& folder : {p.root, p.root / "kernels", p.dir.path})
        for (const bool cached : {true, true, false}) {
            const WorkingFolder here(folder);
            std::vector<std::string> args = {"check", suite.string()};
            if (cached)
                args.insert(args.end(), {"--cache-dir", cache.string()});
            else
                args.push_back("--no-cache");
            const ToolOutput o = run_tool_captured(args);
            EXPECT_EQ(o.code, 1) << folder << "\n" << o.out << o.err;
            EXPECT_NE(o.out.find("cannot open source file \"kernels/cwd/dep.h\""), std::string::npos) << o.out;
        }
}

// A cache entry records what its module was compiled from; one of those files changed or gone
// since makes the entry a miss, and a module without that record is never stored.
TEST(CompileDefence, ACacheEntryIsUsedOnlyWhileItsSourcesReadTheSame)
{
    const Project p;
    const fs::path header = p.root / "kernels" / "scale.cuh";
    write_file(header, "#define SCALE 2.0f\n");
    write_file(p.root / "kernels" / "k.cu",
               "#include \"scale.cuh\"\nextern \"C\" __global__ void k(float* x) { x[0] *= SCALE; }\n");
    compile::CompileRequest request;
    request.source = p.root / "kernels" / "k.cu";
    request.entries = {"k"};
    const compile::CompileCache cache(p.dir.path / "cache");
    const auto module = compile::compile(request, &cache);
    ASSERT_FALSE(module.from_cache);

    const auto entry = nlohmann::json::parse(read_file(p.dir.path / "cache" / (module.cache_key + ".json")));
    std::vector<std::string> recorded;
    for (const auto& file : entry.at("sources")) recorded.push_back(file.at("path"));
    ASSERT_GE(recorded.size(), 3u);
    EXPECT_EQ(fs::path(recorded[0]).filename(), "k.cu");
    EXPECT_EQ(fs::path(recorded[1]), fs::canonical(header));
    if (!compile::toolkit_include_dirs().empty()) {
        EXPECT_EQ(fs::path(recorded[2]).filename(), "cuda.h") << "the toolkit's version stands for its headers";
    }
    ASSERT_TRUE(cache.load(module.cache_key).has_value());

    write_file(header, "#error \"changed\"\n");
    EXPECT_FALSE(cache.load(module.cache_key).has_value());
    write_file(header, "#define SCALE 2.0f\n");
    EXPECT_TRUE(cache.load(module.cache_key).has_value());
    fs::remove(header);
    EXPECT_FALSE(cache.load(module.cache_key).has_value());

    compile::CompiledModule unknown = module;
    unknown.cache_key += "-unknown";
    unknown.sources.clear();
    cache.store(unknown);
    EXPECT_FALSE(fs::exists(p.dir.path / "cache" / (unknown.cache_key + ".json")));
}

// As a user meets it, in a run: with the cache, a header changed to #error fails the next run as it
// would without the cache.
TEST(CompileDefence, ACachedCompileIsRedoneAfterAHeaderChanges)
{
    const Project p;
    const fs::path header = p.root / "kernels" / "dep.h";
    write_file(header, "#define WORK 1\n");
    const fs::path suite = p.add("dep", "#include \"dep.h\"\n" + std::string(vector_add));
    const std::vector<std::string> args = {"check", "--cache-dir", (p.dir.path / "cache").string(), suite.string()};
    ToolOutput o = run_tool_captured(args);
    ASSERT_EQ(o.code, 0) << o.out << o.err;
    EXPECT_TRUE(run_tool_captured(args).out.find("(cached)") != std::string::npos);
    write_file(header, "#error \"the header changed\"\n");
    o = run_tool_captured(args);
    EXPECT_EQ(o.code, 1) << o.out;
    EXPECT_NE(o.out.find("the header changed"), std::string::npos) << o.out;
}

// A hard link inside the project may name a file anywhere on its file system: refused, source or
// header, with the including file and line, and nothing of the file is shown.
TEST(CompileDefence, HardLinksAreRefusedWithFileAndLine)
{
    const Project p;
    write_file(p.outside, "outside_text_4411\n");
    const fs::path linked = p.root / "kernels" / "linked.h";
    std::error_code ec;
    fs::create_hard_link(p.outside, linked, ec);
    if (ec) GTEST_SKIP() << "cannot make a hard link here: " << ec.message();
    write_file(p.root / "kernels" / "k.cu", "// first\n#include \"linked.h\"\n" + std::string(vector_add));
    std::string message = refusal(p.root / "kernels" / "k.cu", {p.root});
    EXPECT_NE(message.find("k.cu:2: #include \"linked.h\""), std::string::npos) << message;
    EXPECT_NE(message.find("hard link"), std::string::npos) << message;
    EXPECT_EQ(message.find("outside_text_4411"), std::string::npos) << message;

    fs::create_hard_link(p.root / "kernels" / "k.cu", p.dir.path / "second_name.cu");
    message = refusal(p.root / "kernels" / "k.cu", {p.root});
    EXPECT_NE(message.find("k.cu is a hard link (2 names"), std::string::npos) << message;

    // In a run: the case fails, and the outside file's text is in no output and no report.
    const fs::path suite = p.add("hardlink", "#define S(...) #__VA_ARGS__\nstatic_assert(sizeof(S(\n"
                                             "#include \"linked.h\"\n)) == 1, \"\");\n" +
                                                 std::string(vector_add));
    const fs::path out = p.dir.path / "reports";
    const ToolOutput o =
        run_tool_captured({"run", "--static", "--no-ci", "--no-cache", "--out", out.string(), suite.string()});
    EXPECT_EQ(o.code, 1) << o.out << o.err;
    EXPECT_NE(o.out.find("hard link"), std::string::npos) << o.out;
    EXPECT_EQ((o.out + o.err).find("outside_text_4411"), std::string::npos);
    for (const auto& [name, content] : snapshot(out))
        EXPECT_EQ(content.find("outside_text_4411"), std::string::npos) << name;
}

// The toolkit's headers may be hard links (package managers install them so): not refused.
TEST(CompileDefence, TheToolkitsHardLinksAreNotRefused)
{
    const Project p;
    write_file(p.outside, "#define FROM_TOOLKIT 1\n");
    const fs::path toolkit = p.root / "toolkit";
    fs::create_directories(toolkit);
    std::error_code ec;
    fs::create_hard_link(p.outside, toolkit / "tool.h", ec);
    if (ec) GTEST_SKIP() << "cannot make a hard link here: " << ec.message();
    write_file(p.root / "kernels" / "k.cu", "#include <tool.h>\n");
    compile::IncludeSearch search;
    search.source = p.root / "kernels" / "k.cu";
    search.include_dirs = {search.source.parent_path()};
    search.toolkit_dirs = {toolkit};
    search.project_roots = {p.root};
    EXPECT_NO_THROW(compile::scan_includes(search));
    EXPECT_THROW(compile::check_project_file(fs::canonical(toolkit / "tool.h"), {fs::canonical(p.root)}, {}, "k.cu:1"),
                 compile::CompileError);
}

// The project's .git folder holds a CI checkout's credentials: no kernel includes from it, by any
// path, and a confined compiler cannot open it.
TEST(CompileDefence, TheGitFolderIsOutsideWhatAKernelMayInclude)
{
    const Project p;
    write_file(p.root / ".git" / "config", "[http]\n\textraheader = AUTHORIZATION: basic token_5521\n");
    write_file(p.root / "kernels" / "k.cu", "\n\n#include \"../.git/config\"\n" + std::string(vector_add));
    std::string message = refusal(p.root / "kernels" / "k.cu", {p.root});
    EXPECT_NE(message.find("k.cu:3: #include \"../.git/config\""), std::string::npos) << message;
    EXPECT_NE(message.find(".git folder"), std::string::npos) << message;
    EXPECT_EQ(message.find("token_5521"), std::string::npos) << message;

    fs::create_symlink("../.git", p.root / "kernels" / "repository");
    write_file(p.root / "kernels" / "k.cu", "#include \"repository/config\"\n" + std::string(vector_add));
    message = refusal(p.root / "kernels" / "k.cu", {p.root});
    EXPECT_NE(message.find(".git folder"), std::string::npos) << message;

    write_file(p.root / ".git" / "hooks" / "k.cu", vector_add);
    message = refusal(p.root / ".git" / "hooks" / "k.cu", {p.root});
    EXPECT_NE(message.find(".git folder"), std::string::npos) << message;

    // A checkout inside a folder that happens to be named .git is a project like any other.
    const fs::path nested = p.dir.path / ".git" / "project";
    write_file(nested / "kernels" / "k.cu", "#include \"h.cuh\"\n" + std::string(vector_add));
    write_file(nested / "kernels" / "h.cuh", "\n");
    compile::CompileRequest request;
    request.source = nested / "kernels" / "k.cu";
    request.readable_roots = {nested};
    EXPECT_EQ(compile::source_closure(request).size(), 2u);

    const auto folders = compile::confined_readable_folders({p.root, p.root / "kernels"}, {p.root});
    EXPECT_TRUE(std::find(folders.begin(), folders.end(), p.root / "kernels") != folders.end());
    EXPECT_TRUE(std::find(folders.begin(), folders.end(), p.root / "suites") != folders.end());
    EXPECT_TRUE(std::find(folders.begin(), folders.end(), p.root) == folders.end());
    EXPECT_TRUE(std::find(folders.begin(), folders.end(), p.root / ".git") == folders.end());

    const auto support = compile::confinement_support();
    if (!support.available) GTEST_SKIP() << "compilation cannot be confined here: " << support.reason;
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        int failures = 0;
        try {
            compile::confine_to(compile::confined_readable_folders({p.root}, {p.root}), {});
        } catch (...) {
            ::_exit(90);
        }
        if (::open((p.root / ".git" / "config").c_str(), O_RDONLY) >= 0 || errno != EACCES) failures |= 1;
        if (::open((p.root / "kernels" / "k.cu").c_str(), O_RDONLY) < 0) failures |= 2;
        ::_exit(failures);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "failure bits: 1 .git/config opened, 2 a kernel refused, 90 confinement "
                                         "refused";
}

// Where Landlock is missing (here: blocked by a seccomp filter, as a container's profile may do),
// CI mode compiles no kernel that includes project files (exit 3: the environment lacks what CI
// mode needs), saying why and how to allow it; the user allows it by name. A kernel without project includes, and a run
// outside CI mode, compile.
TEST(CompileDefence, CiModeWithoutLandlockRefusesProjectIncludesUnlessAllowed)
{
    const Project p;
    write_file(p.root / "kernels" / "dep.cuh", "#define WORK 1\n");
    const fs::path with_include = p.add("with_include", "#include \"dep.cuh\"\n" + std::string(vector_add));
    const fs::path alone = p.add("alone", vector_add);
    const fs::path log = p.dir.path / "output.txt";
    const auto run = [&](const fs::path& suite, std::vector<std::string> options) {
        std::vector<std::string> args = {"run", "--static", "--no-cache", "--out", (p.dir.path / "out").string()};
        args.insert(args.end(), options.begin(), options.end());
        args.push_back(suite.string());
        return run_without_landlock(args, log);
    };

    ChildRun refused = run(with_include, {"--ci"});
    if (refused.code == 77) GTEST_SKIP() << "cannot block Landlock on this architecture";
    EXPECT_EQ(refused.code, 3) << refused.output; // the environment's
    EXPECT_NE(refused.output.find("compilation cannot be confined here"), std::string::npos) << refused.output;
    EXPECT_NE(refused.output.find("with_include.cu: not compiled: it includes"), std::string::npos) << refused.output;
    EXPECT_NE(refused.output.find("dep.cuh"), std::string::npos) << refused.output;
    EXPECT_NE(refused.output.find("--allow-unconfined-compile"), std::string::npos) << refused.output;

    for (const auto& [suite, options] : std::vector<std::pair<fs::path, std::vector<std::string>>>{
             {with_include, {"--ci", "--allow-unconfined-compile"}}, {with_include, {"--no-ci"}}, {alone, {"--ci"}}}) {
        const ChildRun allowed = run(suite, options);
        EXPECT_EQ(allowed.output.find("not compiled"), std::string::npos) << suite << "\n" << allowed.output;
        EXPECT_EQ(allowed.output.find("compile_error"), std::string::npos) << suite << "\n" << allowed.output;
        EXPECT_NE(allowed.output.find("v        N=1024  sm_80"), std::string::npos) << allowed.output;
    }
}

} // namespace compile_defence_test
