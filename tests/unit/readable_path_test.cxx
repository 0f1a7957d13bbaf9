// The path rule (core/readable_path.hxx) and every reader that goes through it: the include scan,
// the folders a confined compiler is granted, a suite's include folders, a hotspot's quoted lines,
// a module's source manifest and a Triton manifest's files. The same hostile paths (a file in .git,
// a hard link, a link out of the project, a ".." climb, a link at the project's top) are given to
// each, and each refuses every one of them and reads the project's own file.

#include "harness/compile/confinement.hxx"
#include "harness/compile/include_policy.hxx"
#include "harness/compile/module_file.hxx"
#include "harness/compile/nvrtc_compiler.hxx"
#include "harness/core/error.hxx"
#include "harness/core/readable_path.hxx"
#include "harness/core/sha256.hxx"
#include "harness/profile/case_profiler.hxx"
#include "harness/run/case_runner.hxx"
#include "harness/suite/suite.hxx"
#include "harness/suite/triton_manifest.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"

#include <algorithm>
#include <cstdlib>
#include <fcntl.h>
#include <functional>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

namespace readable_path_test {

namespace fs = std::filesystem;
using namespace harness;

namespace {

constexpr const char* kernel_source = "extern \"C\" __global__ void plain_copy(const float* in, float* out, int n)\n"
                                      "{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                      "    if (i < n) out[i] = in[i];\n}\n";

/// A checkout (`project`) beside a folder of secrets (`outside`), with one hostile path of each
/// kind inside the checkout and one file of its own.
struct HostileCheckout {
    TempDir dir{"harness-path-rule"};
    fs::path project = dir.path / "checkout";
    fs::path outside = dir.path / "secrets";
    std::map<std::string, fs::path> hostile; ///< by kind
    fs::path own;                            ///< the project's own header
    bool hard_links = true;

    HostileCheckout()
    {
        write_file(outside / "token", "url = https://ci-token:SECRET@example.com\n");
        write_file(project / ".git" / "config", "[remote \"origin\"]\n\turl = https://ci-token:SECRET@x\n");
        write_file(project / "kernels" / "own.cuh", "// the project's own header\n");
        write_file(project / "kernels" / "k.cu", kernel_source);
        own = project / "kernels" / "own.cuh";
        std::error_code ec;
        fs::create_hard_link(outside / "token", project / "kernels" / "hard.cuh", ec);
        hard_links = !ec;
        fs::create_symlink(outside / "token", project / "kernels" / "link.cuh");
        fs::create_directory_symlink(outside, project / "rootlink");
        hostile["in .git"] = project / ".git" / "config";
        if (hard_links) hostile["hard link"] = project / "kernels" / "hard.cuh";
        hostile["link out"] = project / "kernels" / "link.cuh";
        hostile["'..' climb"] = project / "kernels" / ".." / ".." / "secrets" / "token";
        hostile["top-level link"] = project / "rootlink" / "token";
    }

    ReadableFolders folders() const { return {{project}, compile::toolkit_include_dirs()}; }
};

std::string error_of(const std::function<void()>& f)
{
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

/// The include scan's verdict on a kernel that includes `path` by its absolute name, or by the
/// name relative to the kernel's folder when it lies inside (a "../.git/config" as written).
bool scan_refuses(const HostileCheckout& c, const fs::path& path)
{
    const fs::path kernel = c.project / "kernels" / "probe.cu";
    const fs::path relative = path.lexically_relative(kernel.parent_path());
    write_file(kernel, "#include \"" + relative.string() + "\"\n" + kernel_source);
    compile::CompileRequest request;
    request.source = kernel;
    request.include_dirs = {c.project / "kernels"};
    request.readable_roots = {c.project};
    return !error_of([&] { compile::source_closure(request); }).empty();
}

bool quote_refused(const HostileCheckout& c, const fs::path& path)
{
    suite::Suite s;
    s.project_root = c.project;
    s.include_dirs = {c.project / "kernels"};
    suite::VariantSpec v;
    v.source = c.project / "kernels" / "k.cu";
    return !run::may_quote_source(s, v, path);
}

/// A module's source manifest that lists `path`: refused before it is read.
bool manifest_refuses(const HostileCheckout& c, const fs::path& path)
{
    const fs::path module = c.project / "build" / "m.cubin";
    if (!fs::exists(module)) {
        fs::create_directories(module.parent_path());
        const std::string nvcc = std::string(HARNESS_CUDA_BIN_DIR) + "/nvcc";
        if (std::system(
                (nvcc + " --cubin -arch=sm_90 -o " + module.string() + " " + (c.project / "kernels" / "k.cu").string())
                    .c_str()) != 0)
            return false;
    }
    // The digest is the file's own where it can be read, so that only the rule can refuse it.
    std::error_code ec;
    const std::string content = fs::is_regular_file(path, ec) ? read_file(path) : "";
    write_file(module.string() + ".sources.sha256", sha256_hex(content) + "  " + path.string() + "\n");
    return !error_of([&] {
                compile::load_module_file(module, "sm_90", {"plain_copy"}, {}, false, {c.project});
            }).empty();
}

/// A Triton export's manifest whose `source` names `path` (relative to the manifest's folder).
bool triton_manifest_refuses(const HostileCheckout& c, const fs::path& path)
{
    const fs::path exported = c.project / "kernels" / "triton" / "exported";
    const fs::path shipped = repo_root() / "kernels" / "triton" / "exported";
    fs::create_directories(exported);
    fs::copy_file(shipped / "softmax_rows_b1024.cubin", exported / "softmax_rows_b1024.cubin",
                  fs::copy_options::overwrite_existing);
    auto manifest = nlohmann::json::parse(read_file(shipped / "softmax_rows_b1024.json"));
    manifest["source"] = path.lexically_relative(exported).string();
    write_file(exported / "softmax_rows_b1024.json", manifest.dump());
    return !error_of([&] { suite::read_triton_manifest(exported / "softmax_rows_b1024.json", c.project); }).empty();
}

} // namespace

TEST(PathRule, EveryReaderRefusesTheSameHostilePaths)
{
    HostileCheckout c;
    ASSERT_GE(c.hostile.size(), 4u);
    for (const auto& [kind, path] : c.hostile) {
        SCOPED_TRACE(kind + ": " + path.string());
        EXPECT_NE(check_readable_file(path, c.folders()).verdict, PathVerdict::readable);
        EXPECT_TRUE(scan_refuses(c, path));
        EXPECT_TRUE(quote_refused(c, path));
        EXPECT_TRUE(manifest_refuses(c, path));
        EXPECT_TRUE(triton_manifest_refuses(c, path));
    }
    // The project's own file passes every reader.
    EXPECT_EQ(check_readable_file(c.own, c.folders()).verdict, PathVerdict::readable);
    EXPECT_FALSE(scan_refuses(c, c.own));
    EXPECT_FALSE(quote_refused(c, c.own));
    EXPECT_FALSE(manifest_refuses(c, c.own));
    EXPECT_FALSE(triton_manifest_refuses(c, c.own));
}

TEST(PathRule, AFileOutsideIsJudgedAlikeWhetherOrNotItExists)
{
    HostileCheckout c;
    const auto exists = check_readable_file(c.outside / "token", c.folders());
    const auto missing = check_readable_file(c.outside / "no-such-file", c.folders());
    EXPECT_EQ(exists.verdict, PathVerdict::outside);
    EXPECT_EQ(missing.verdict, PathVerdict::outside);
    EXPECT_TRUE(manifest_refuses(c, c.outside / "token"));
    EXPECT_TRUE(manifest_refuses(c, c.outside / "no-such-file"));
    // Inside the project, a missing file is only missing.
    EXPECT_EQ(check_readable_file(c.project / "kernels" / "absent.cuh", c.folders()).verdict, PathVerdict::missing);
}

TEST(PathRule, FoldersGrantedWholeAreTheProjectsOwn)
{
    HostileCheckout c;
    // A confined compiler: the checkout entry by entry, without .git and without the top-level link.
    const auto granted = compile::confined_readable_folders({c.project}, {c.project});
    const auto has = [&](const fs::path& p) { return std::find(granted.begin(), granted.end(), p) != granted.end(); };
    EXPECT_TRUE(has(c.project / "kernels"));
    EXPECT_FALSE(has(c.project / ".git"));
    EXPECT_FALSE(has(c.project / "rootlink"));
    EXPECT_FALSE(has(c.outside));
    EXPECT_FALSE(has(c.project));
    // A folder inside .git is never granted, even named on its own.
    EXPECT_TRUE(compile::confined_readable_folders({c.project / ".git"}, {c.project}).empty());
    // Under Landlock with those rules, the link at the top reads nothing.
    if (const auto support = compile::confinement_support(); support.available) {
        std::fflush(nullptr);
        const pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            int failures = 0;
            try {
                compile::confine_to(granted, {});
            } catch (...) {
                ::_exit(90);
            }
            if (::open((c.project / "rootlink" / "token").c_str(), O_RDONLY) >= 0) failures |= 1;
            if (::open((c.project / ".git" / "config").c_str(), O_RDONLY) >= 0) failures |= 2;
            if (::open(c.own.c_str(), O_RDONLY) < 0) failures |= 4;
            ::_exit(failures);
        }
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFEXITED(status));
        EXPECT_EQ(WEXITSTATUS(status), 0) << "failure bits: 1 the link's target read, 2 .git/config read, 4 the "
                                             "project's file refused, 90 confinement refused";
    }
    // A suite's include folders: the project's kernels are fine, .git and a link out are refused.
    const auto load_error = [&](const std::string& include) {
        write_file(c.project / "suites" / "s.yaml",
                   "suite: s\narchs: [sm_90]\ninclude: [" + include +
                       "]\nparams: {N: [64]}\nreference: a\nbuffers:\n"
                       "  x: {type: f32, count: N, init: zeros, role: out}\nvariants:\n"
                       "  a: {source: ../kernels/k.cu, entry: plain_copy, block: [64], grid: [1], args: [x, x, "
                       "{i32: N}]}\n");
        return error_of([&] { suite::load_suite(c.project / "suites" / "s.yaml"); });
    };
    EXPECT_EQ(load_error("../kernels"), "");
    const std::string git = load_error("../.git");
    EXPECT_NE(git.find(".git folder"), std::string::npos) << git;
    EXPECT_NE(git.find("include"), std::string::npos) << git;
    const std::string below_git = load_error("../kernels, ../.git");
    EXPECT_NE(below_git.find(".git folder"), std::string::npos) << below_git;
    const std::string link = load_error("../rootlink");
    EXPECT_NE(link.find("outside the project"), std::string::npos) << link;
}

TEST(PathRule, HotspotLinesOfRefusedFilesAreNamedNeverQuoted)
{
    HostileCheckout c;
    suite::Suite s;
    s.project_root = c.project;
    s.include_dirs = {c.project / "kernels"};
    // A module's line table names whatever its builder wrote: an absolute .git/config of another
    // machine's checkout, a file outside, a hard link, the project's own file.
    suite::VariantSpec module;
    module.kind = suite::VariantKind::module;
    module.module = c.project / "build" / "m.cubin";
    const std::string cubin;
    const profile::CaseSource source = run::hotspot_source(s, module, &cubin);
    std::vector<Hotspot> hotspots;
    const auto add = [&](const std::string& file) {
        Hotspot h;
        h.file = file;
        h.line = 2;
        hotspots.push_back(h);
    };
    add("/ci/checkout/.git/config");
    add((c.outside / "token").string());
    add((c.project / "kernels" / "link.cuh").string());
    if (c.hard_links) add((c.project / "kernels" / "hard.cuh").string());
    add("/ci/checkout/kernels/k.cu");
    profile::quote_hotspot_lines(hotspots, source);
    for (std::size_t k = 0; k + 1 < hotspots.size(); ++k) {
        SCOPED_TRACE(hotspots[k].file);
        EXPECT_TRUE(hotspots[k].snippet.empty());
        EXPECT_FALSE(hotspots[k].file.empty());
    }
    EXPECT_EQ(hotspots[0].file, ".git/config"); // named, as the project's
    EXPECT_EQ(hotspots.back().file, "kernels/k.cu");
    ASSERT_FALSE(hotspots.back().snippet.empty());
    EXPECT_EQ(hotspots.back().snippet.front(), "extern \"C\" __global__ void plain_copy(const float* in, float* out, "
                                               "int n)");
    // A kernel of source whose `#line` names a file in an include folder that is .git: refused too.
    suite::VariantSpec kernel;
    kernel.source = c.project / "kernels" / "k.cu";
    s.include_dirs.push_back(c.project / ".git");
    std::vector<Hotspot> from_source(1);
    from_source[0].file = "config";
    from_source[0].line = 2;
    profile::quote_hotspot_lines(from_source, run::hotspot_source(s, kernel, &cubin));
    EXPECT_TRUE(from_source[0].snippet.empty());
    EXPECT_EQ(from_source[0].file, ".git/config");
}

TEST(PathRule, AProjectFileShadowingAToolkitHeaderIsRefused)
{
    if (compile::toolkit_include_dirs().empty()) GTEST_SKIP() << "no CUDA toolkit headers here";
    HostileCheckout c;
    compile::CompileRequest request;
    request.source = c.project / "kernels" / "uses_std.cu";
    request.include_dirs = {c.project / "kernels"};
    request.readable_roots = {c.project};
    write_file(request.source, "#include <cuda/std/cstdint>\n" + std::string(kernel_source));
    EXPECT_EQ(compile::source_closure(request).size(), 1u); // the toolkit's files are followed, not listed
    // Included by the toolkit's own header: a search of the project's folders comes first.
    write_file(c.project / "kernels" / "cuda" / "std" / "detail" / "__config", "// harmless, but not the toolkit's\n");
    std::string message = error_of([&] { compile::source_closure(request); });
    EXPECT_NE(message.find("kernels/cuda/std/detail/__config"), std::string::npos) << message;
    EXPECT_NE(message.find("shadow a toolkit header"), std::string::npos) << message;
    // What the shadow includes is scanned as any project file's includes are.
    write_file(c.project / "kernels" / "cuda" / "std" / "detail" / "__config", "#include \"/proc/self/environ\"\n");
    message = error_of([&] { compile::source_closure(request); });
    EXPECT_NE(message.find("reaches outside the project"), std::string::npos) << message;
    fs::remove_all(c.project / "kernels" / "cuda");
    // Included by the kernel itself: the project's file of a toolkit header's name is refused.
    write_file(c.project / "kernels" / "cuda_fp16.h", "\n");
    write_file(request.source, "#include <cuda_fp16.h>\n" + std::string(kernel_source));
    message = error_of([&] { compile::source_closure(request); });
    EXPECT_NE(message.find("shadow a toolkit header"), std::string::npos) << message;
}

} // namespace readable_path_test
