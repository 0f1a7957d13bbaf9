// Module files built by nvcc: kinds, architectures, entry names, staleness, and module variants in
// suites and the static tier. The fixtures are built here with the toolkit's nvcc.

#include "harness/compile/cubin_info.hxx"
#include "harness/compile/module_file.hxx"
#include "harness/compile/nvrtc_compiler.hxx"
#include "harness/compile/static_tier.hxx"
#include "harness/core/child_process.hxx"
#include "harness/core/error.hxx"
#include "harness/core/metrics.hxx"
#include "harness/core/sha256.hxx"
#include "harness/run/case_runner.hxx"
#include "harness/suite/suite.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fcntl.h>
#include <fmt/format.h>
#include <functional>
#include <gtest/gtest.h>
#include <iostream>
#include <random>
#include <sys/file.h>
#include <thread>
#include <tuple>
#include <unistd.h>

namespace module_file_test {

using namespace harness;
namespace fs = std::filesystem;

namespace {

const char* kernel_source = R"(template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) scale(const float* in, float* out, int n)
{
    __shared__ float tile[BLOCK];
    const int i = blockIdx.x * BLOCK + threadIdx.x;
    tile[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    if (i < n) out[i] = 2.0f * tile[threadIdx.x];
}
template __global__ void scale<128>(const float*, float*, int);
template __global__ void scale<256>(const float*, float*, int);
extern "C" __global__ void plain_copy(const float* in, float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}
template <unsigned WIDTH> __global__ void widen(float* out) { out[threadIdx.x] = WIDTH; }
template __global__ void widen<4u>(float*);
__global__ void fill(float* out) { out[threadIdx.x] = 1.0f; }
__global__ void fill(int* out) { out[threadIdx.x] = 1; }
)";

/// The nvcc command lines of the fixtures: output file, then options (the source follows them).
const std::vector<std::pair<std::string, std::string>> fixture_builds = {
    {"k.fatbin", "--fatbin -lineinfo -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90"},
    {"k.cubin", "--cubin -lineinfo -arch=sm_90"},
    {"k.ptx", "--ptx -lineinfo -arch=compute_90"},
    // nvcc 13 compresses PTX in a fatbin by default (zstd), machine code with -compress-all
    // (zstd, or LZ4 with --compress-mode=speed).
    {"k_ptx.fatbin", "--fatbin -lineinfo -gencode arch=compute_90,code=compute_90"},
    {"k_zstd.fatbin", "--fatbin -lineinfo -gencode arch=compute_90,code=sm_90 -Xfatbin -compress-all"},
    {"k_lz4.fatbin", "--fatbin -gencode arch=compute_90,code=sm_90 -Xfatbin -compress-all --compress-mode=speed"},
};

/// A project with kernels/k.cu built by nvcc into build/k.fatbin (sm_80, sm_90), k.cubin (sm_90),
/// k.ptx (compute_90) and fatbins with compressed entries: k_ptx.fatbin (compute_90 only),
/// k_zstd.fatbin and k_lz4.fatbin (sm_90, the latter without line tables), once for all tests.
/// CTest runs each test in a process of its own, so the project lies in the build folder, named by
/// the source, the command lines and the nvcc that built it: the first process builds it there under
/// a lock, the others wait for that and read what it built.
struct Fixtures {
    fs::path dir;
    bool built = false;
    Fixtures()
    {
        const std::string nvcc = std::string(HARNESS_CUDA_BIN_DIR) + "/nvcc";
        std::error_code no_nvcc;
        std::string key = std::string(kernel_source) + nvcc + " " +
                          std::to_string(fs::last_write_time(nvcc, no_nvcc).time_since_epoch().count());
        for (const auto& [output, options] : fixture_builds) key += "\n" + output + ": " + options;
        dir = fs::path(HARNESS_TEST_MODULE_DIR) / ("module-file-project-" + sha256_hex(key).substr(0, 16));
        fs::create_directories(dir.parent_path());
        const int lock = ::open((dir.string() + ".lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
        if (lock < 0 || ::flock(lock, LOCK_EX) != 0) return;
        built = fs::exists(dir / "built");
        if (!built) {
            fs::remove_all(dir);
            write_file(dir / "kernels" / "k.cu", kernel_source);
            fs::create_directories(dir / "build");
            const std::string src = (dir / "kernels" / "k.cu").string(), out = (dir / "build").string();
            built = std::all_of(fixture_builds.begin(), fixture_builds.end(), [&](const auto& build) {
                return std::system(
                           (nvcc + " " + build.second + " -o " + out + "/" + build.first + " " + src).c_str()) == 0;
            });
            if (built) write_file(dir / "built", "");
        }
        ::close(lock);
    }
    std::string bytes(const std::string& name) const { return read_file(dir / "build" / name); }
};

const Fixtures& fixtures()
{
    static const Fixtures f;
    return f;
}

#define REQUIRE_FIXTURES() ASSERT_TRUE(fixtures().built) << "nvcc could not build the module fixtures"

std::string error_of(const std::function<void()>& f)
{
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

} // namespace

TEST(ModuleFile, KindsAndArchitecturesAreReadFromTheContent)
{
    REQUIRE_FIXTURES();
    const auto& f = fixtures();
    EXPECT_EQ(compile::module_kind(f.bytes("k.fatbin"), "k.fatbin"), compile::ModuleKind::fatbin);
    EXPECT_EQ(compile::module_kind(f.bytes("k.cubin"), "k.cubin"), compile::ModuleKind::cubin);
    EXPECT_EQ(compile::module_kind(f.bytes("k.ptx"), "k.ptx"), compile::ModuleKind::ptx);
    EXPECT_EQ(compile::module_archs(f.bytes("k.fatbin"), "k.fatbin"), (std::vector<std::string>{"sm_80", "sm_90"}));
    EXPECT_EQ(compile::module_archs(f.bytes("k.cubin"), "k.cubin"), (std::vector<std::string>{"sm_90"}));
    EXPECT_EQ(compile::module_archs(f.bytes("k.ptx"), "k.ptx"), (std::vector<std::string>{"compute_90"}));
    EXPECT_NE(error_of([] { compile::module_kind("#include <x>\n", "notes.txt"); }).find("not a cubin, fatbin or PTX"),
              std::string::npos);
}

TEST(ModuleFile, EachArchitectureGetsItsOwnCodeOrAClearError)
{
    REQUIRE_FIXTURES();
    const auto& f = fixtures();
    for (const int sm : {80, 90}) {
        const auto cubin = compile::cubin_for_arch(f.bytes("k.fatbin"), "k.fatbin", "sm_" + std::to_string(sm));
        EXPECT_EQ(compile::read_cubin_info(cubin).sm_version, sm);
    }
    EXPECT_NE(error_of([&] {
                  compile::cubin_for_arch(f.bytes("k.fatbin"), "k.fatbin", "sm_86");
              }).find("holds sm_80, sm_90, nothing sm_86 can run"),
              std::string::npos);
    EXPECT_NE(error_of([&] {
                  compile::cubin_for_arch(f.bytes("k.cubin"), "k.cubin", "sm_80");
              }).find("k.cubin: holds sm_90 code; the run needs sm_80"),
              std::string::npos);
    // PTX is compiled for the architecture asked for, with its line table.
    const auto from_ptx = compile::cubin_for_arch(f.bytes("k.ptx"), "k.ptx", "sm_90");
    EXPECT_EQ(compile::read_cubin_info(from_ptx).sm_version, 90);
    EXPECT_NE(from_ptx.find(".nv_debug_line_sass"), std::string::npos);
    EXPECT_NE(f.bytes("k.cubin").find(".nv_debug_line_sass"), std::string::npos);
}

TEST(ModuleFile, CompressedFatbinEntriesAreDecompressed)
{
    REQUIRE_FIXTURES();
    const auto& f = fixtures();
    for (const char* name : {"k_zstd.fatbin", "k_lz4.fatbin"}) {
        const auto cubin = compile::cubin_for_arch(f.bytes(name), name, "sm_90");
        const auto info = compile::read_cubin_info(cubin);
        EXPECT_EQ(info.sm_version, 90) << name;
        EXPECT_EQ(info.kernels.size(), 6u) << name;
        EXPECT_EQ(compile::find_entries(cubin, {"scale<256>"}, name).at("scale<256>"), "_Z5scaleILi256EEvPKfPfi");
    }
    // The zstd-compressed machine code is the code an uncompressed fatbin holds.
    EXPECT_EQ(compile::line_table_files(compile::cubin_for_arch(f.bytes("k_zstd.fatbin"), "k_zstd.fatbin", "sm_90")),
              (std::vector<std::string>{(f.dir / "kernels" / "k.cu").string()}));
    // A fatbin with only (compressed) PTX serves its architecture and newer ones, with ptxas' report.
    EXPECT_EQ(compile::module_archs(f.bytes("k_ptx.fatbin"), "k_ptx.fatbin"), (std::vector<std::string>{"compute_90"}));
    for (const char* arch : {"sm_90", "sm_100"}) {
        std::string log;
        const auto cubin = compile::cubin_for_arch(f.bytes("k_ptx.fatbin"), "k_ptx.fatbin", arch, &log);
        EXPECT_EQ("sm_" + std::to_string(compile::read_cubin_info(cubin).sm_version), arch);
        EXPECT_EQ(compile::parse_ptxas_log(log).size(), 6u) << log;
    }
    EXPECT_NE(error_of([&] {
                  compile::cubin_for_arch(f.bytes("k_ptx.fatbin"), "k_ptx.fatbin", "sm_80");
              }).find("holds compute_90, nothing sm_80 can run"),
              std::string::npos);
    // A corrupt compressed payload is an error, not a crash.
    std::string corrupt = f.bytes("k_lz4.fatbin");
    for (std::size_t i = 0x60; i < corrupt.size(); i += 7) corrupt[i] = static_cast<char>(0xff);
    EXPECT_NE(error_of([&] { compile::cubin_for_arch(corrupt, "k_lz4.fatbin", "sm_90"); }).find("k_lz4.fatbin: "),
              std::string::npos);
}

TEST(ModuleFile, CorruptModulesAreErrorsNeverCrashes)
{
    REQUIRE_FIXTURES();
    std::mt19937 random(7);
    for (const char* name : {"k.fatbin", "k_zstd.fatbin", "k_lz4.fatbin", "k.cubin"}) {
        const std::string original = fixtures().bytes(name);
        for (int round = 0; round < 300; ++round) {
            std::string bytes = original;
            if (round % 3 == 0) bytes.resize(random() % bytes.size());
            for (int flips = 1 + static_cast<int>(random() % 4); flips > 0 && !bytes.empty(); --flips)
                bytes[random() % bytes.size()] = static_cast<char>(random());
            try {
                if (compile::module_kind(bytes, name) == compile::ModuleKind::ptx) continue;
                compile::module_archs(bytes, name);
                const auto cubin = compile::cubin_for_arch(bytes, name, "sm_90");
                compile::line_table_files(cubin);
                compile::find_entries(cubin, {"scale<256>"}, name);
            } catch (const std::exception&) {
                // refused with a message: what a corrupt module should get
            }
        }
    }
}

TEST(ModuleFile, TheLineTableNamesTheSourcesAsNvccWasGivenThem)
{
    REQUIRE_FIXTURES();
    const auto& f = fixtures();
    const std::vector<std::string> source = {(f.dir / "kernels" / "k.cu").string()};
    EXPECT_EQ(compile::line_table_files(f.bytes("k.cubin")), source);
    EXPECT_EQ(compile::line_table_files(compile::cubin_for_arch(f.bytes("k.fatbin"), "k.fatbin", "sm_80")), source);
    EXPECT_TRUE(
        compile::line_table_files(compile::cubin_for_arch(f.bytes("k_lz4.fatbin"), "k_lz4.fatbin", "sm_90")).empty())
        << "built without -lineinfo";
}

TEST(ModuleFile, AModuleOlderThanASourceItsLineTableNamesIsStale)
{
    REQUIRE_FIXTURES();
    TempDir dir{"harness-stale-line-table"};
    write_file(dir.path / "k.cu", kernel_source);
    const std::string nvcc = std::string(HARNESS_CUDA_BIN_DIR) + "/nvcc";
    ASSERT_EQ(std::system((nvcc + " --cubin -lineinfo -arch=sm_90 -o " + (dir.path / "m.cubin").string() + " " +
                           (dir.path / "k.cu").string())
                              .c_str()),
              0);
    const auto load = [&](bool allow_stale) {
        return compile::load_module_file(dir.path / "m.cubin", "sm_90", {"plain_copy"}, {}, allow_stale);
    };
    EXPECT_EQ(load(false).lowered_names.at("plain_copy"), "plain_copy");
    // The source changes after the build: the module no longer shows it.
    fs::last_write_time(dir.path / "k.cu", fs::last_write_time(dir.path / "m.cubin") + std::chrono::seconds(5));
    const std::string stale = error_of([&] { load(false); });
    EXPECT_NE(stale.find("m.cubin is older than " + (dir.path / "k.cu").string() +
                         ", which it was built from: rebuild it (or give the variant `stale: allow`)"),
              std::string::npos)
        << stale;
    EXPECT_EQ(load(true).lowered_names.at("plain_copy"), "plain_copy");
    // A source the line table names that is not there (a module built elsewhere) is no evidence.
    fs::remove(dir.path / "k.cu");
    EXPECT_EQ(load(false).lowered_names.at("plain_copy"), "plain_copy");
}

TEST(ModuleFile, ASourceManifestJudgesStalenessByContentNotTime)
{
    REQUIRE_FIXTURES();
    // A project whose build wrote build/m.cubin and, beside it, what `sha256sum` printed for its sources:
    // kernels/k.cu by a path relative to build/, a header by its absolute path.
    TempDir dir{"harness-source-manifest"};
    const fs::path built = dir.path / "built";
    const std::string header_text = "// a header the line table does not name\n";
    write_file(built / "kernels" / "k.cu", kernel_source);
    write_file(built / "kernels" / "k.cuh", header_text);
    const std::string nvcc = std::string(HARNESS_CUDA_BIN_DIR) + "/nvcc";
    fs::create_directories(built / "build");
    ASSERT_EQ(std::system((nvcc + " --cubin -lineinfo -arch=sm_90 -o " + (built / "build" / "m.cubin").string() + " " +
                           (built / "kernels" / "k.cu").string())
                              .c_str()),
              0);
    const std::string kernel_line = sha256_hex(kernel_source) + "  ../kernels/k.cu\n";
    write_file(built / "build" / "m.cubin.sources.sha256",
               kernel_line + sha256_hex(header_text) + " *" + (built / "kernels" / "k.cuh").string() + "\n");
    const auto load = [](const fs::path& module, std::vector<fs::path> built_from = {}, bool allow_stale = false) {
        return compile::load_module_file(module, "sm_90", {"plain_copy"}, built_from, allow_stale);
    };
    const fs::path module = built / "build" / "m.cubin";
    EXPECT_EQ(load(module, {built / "kernels" / "k.cuh"}).lowered_names.at("plain_copy"), "plain_copy");
    // Sources newer than the module, as after a checkout that follows the module's download: their
    // contents are those the manifest records, so the module is current.
    for (const auto& source : {built / "kernels" / "k.cu", built / "kernels" / "k.cuh"})
        fs::last_write_time(source, fs::last_write_time(module) + std::chrono::seconds(5));
    EXPECT_EQ(load(module, {built / "kernels" / "k.cuh"}).lowered_names.at("plain_copy"), "plain_copy");
    // A source the manifest does not list is still compared by time.
    write_file(built / "kernels" / "other.cuh", "// newer than the module\n");
    fs::last_write_time(built / "kernels" / "other.cuh", fs::last_write_time(module) + std::chrono::seconds(5));
    const std::string older = error_of([&] { load(module, {built / "kernels" / "other.cuh"}); });
    EXPECT_NE(older.find("m.cubin is older than " + (built / "kernels" / "other.cuh").string()), std::string::npos)
        << older;

    // The project in another folder (another job's checkout), where the line table's paths do not
    // exist: a relative path in the manifest follows the project, an absolute one does not.
    const fs::path moved = dir.path / "moved";
    fs::rename(built, moved);
    const fs::path moved_module = moved / "build" / "m.cubin";
    const fs::path manifest = moved / "build" / "m.cubin.sources.sha256";
    const std::string missing = error_of([&] { load(moved_module); });
    EXPECT_NE(
        missing.find((built / "kernels" / "k.cuh").string() + ": no such file, which " + manifest.string() + " lists"),
        std::string::npos)
        << missing;
    write_file(manifest, kernel_line);
    EXPECT_EQ(load(moved_module).lowered_names.at("plain_copy"), "plain_copy");
    write_file(moved / "kernels" / "k.cu", std::string(kernel_source) + "// changed\n");
    const std::string changed = error_of([&] { load(moved_module); });
    EXPECT_NE(changed.find(fs::weakly_canonical(moved / "kernels" / "k.cu").string() + " changed since " +
                           moved_module.string() + " was built from it (its SHA-256 is not the one " +
                           manifest.string() + " records): rebuild it (or give the variant `stale: allow`)"),
              std::string::npos)
        << changed;
    EXPECT_EQ(load(moved_module, {}, true).lowered_names.at("plain_copy"), "plain_copy");
    write_file(manifest, kernel_line + "k.cu\n");
    const std::string malformed = error_of([&] { load(moved_module); });
    EXPECT_NE(malformed.find("m.cubin.sources.sha256:2:1: not a line of `sha256sum`"), std::string::npos) << malformed;
}

TEST(ModuleFile, EntriesAreFoundByTheirCppNames)
{
    REQUIRE_FIXTURES();
    const auto cubin = compile::cubin_for_arch(fixtures().bytes("k.fatbin"), "k.fatbin", "sm_90");
    const auto lowered = compile::find_entries(cubin, {"scale<256>", "scale< 128 >", "plain_copy"}, "k.fatbin");
    EXPECT_EQ(lowered.at("scale<256>"), "_Z5scaleILi256EEvPKfPfi");
    EXPECT_EQ(lowered.at("scale< 128 >"), "_Z5scaleILi128EEvPKfPfi");
    EXPECT_EQ(lowered.at("plain_copy"), "plain_copy");
    EXPECT_EQ(compile::find_entries(cubin, {"_Z5scaleILi128EEvPKfPfi"}, "k.fatbin").begin()->second,
              "_Z5scaleILi128EEvPKfPfi");
    const std::string unknown = error_of([&] { compile::find_entries(cubin, {"scale<64>"}, "k.fatbin"); });
    EXPECT_NE(unknown.find("no kernel 'scale<64>' in the sm_90 code; it holds"), std::string::npos) << unknown;
    EXPECT_NE(unknown.find("scale<256>"), std::string::npos) << unknown;
    // The demangler writes unsigned arguments with a suffix (widen<4u>); the suite need not.
    EXPECT_EQ(compile::find_entries(cubin, {"widen<4>"}, "k.fatbin").at("widen<4>"), "_Z5widenILj4EEvPf");
    EXPECT_EQ(compile::find_entries(cubin, {"widen<4u>"}, "k.fatbin").at("widen<4u>"), "_Z5widenILj4EEvPf");
    // A template's name alone names its one instantiation; with two, it is ambiguous.
    EXPECT_EQ(compile::find_entries(cubin, {"widen"}, "k.fatbin").at("widen"), "_Z5widenILj4EEvPf");
    const std::string two = error_of([&] { compile::find_entries(cubin, {"scale"}, "k.fatbin"); });
    EXPECT_NE(two.find("entry 'scale' names 2 kernels in the sm_90 code: scale<256> (_Z5scaleILi256EEvPKfPfi), "
                       "scale<128> (_Z5scaleILi128EEvPKfPfi)"),
              std::string::npos)
        << two;
    // Overloads share a C++ name: their mangled names tell them apart.
    const std::string overloads = error_of([&] { compile::find_entries(cubin, {"fill"}, "k.fatbin"); });
    EXPECT_NE(overloads.find("names 2 kernels"), std::string::npos) << overloads;
    EXPECT_NE(overloads.find("the mangled name for an overload"), std::string::npos) << overloads;
    EXPECT_EQ(compile::find_entries(cubin, {"_Z4fillPi"}, "k.fatbin").at("_Z4fillPi"), "_Z4fillPi");
    const std::string typo = error_of([&] { compile::find_entries(cubin, {"plain_cpy"}, "k.fatbin"); });
    EXPECT_NE(typo.find("did you mean 'plain_copy'"), std::string::npos) << typo;
}

TEST(ModuleFile, AMissingOrStaleModuleIsAnErrorNamingIt)
{
    REQUIRE_FIXTURES();
    const auto& f = fixtures();
    EXPECT_NE(error_of([&] {
                  compile::load_module_file(f.dir / "build" / "absent.fatbin", "sm_90", {}, {});
              }).find("absent.fatbin: no such module file"),
              std::string::npos);
    TempDir dir{"harness-stale-module"};
    write_file(dir.path / "m.cubin", f.bytes("k.cubin"));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    write_file(dir.path / "k.cu", kernel_source); // changed after the module was built
    const std::string stale = error_of(
        [&] { compile::load_module_file(dir.path / "m.cubin", "sm_90", {"plain_copy"}, {dir.path / "k.cu"}); });
    EXPECT_NE(stale.find("m.cubin is older than"), std::string::npos) << stale;
    EXPECT_NE(stale.find("rebuild it"), std::string::npos) << stale;
    const auto fresh = compile::load_module_file(f.dir / "build" / "k.cubin", "sm_90", {"plain_copy"}, {});
    EXPECT_EQ(fresh.lowered_names.at("plain_copy"), "plain_copy");
}

namespace {

std::string suite_text(const std::string& variant_lines)
{
    return "suite: modules\narchs: [sm_80, sm_90]\nparams:\n  N: [1000]\n  BLOCK: [128, 256]\nreference: copy\n"
           "buffers:\n  in: {type: f32, count: N, init: uniform, seed: 1, role: in}\n"
           "  out: {type: f32, count: N, role: out}\nvariants:\n"
           "  copy:\n    source: ../kernels/k.cu\n    entry: plain_copy\n    block: [256]\n"
           "    grid: [\"ceil_div(N, 256)\"]\n    args: [in, out, {i32: N}]\n" +
           variant_lines;
}

const char* module_variant = "  shipped:\n    module: ${HARNESS_TEST_BUILD_DIR}/k.fatbin\n"
                             "    entry: scale<BLOCK>\n    block: [BLOCK]\n    grid: [\"ceil_div(N, BLOCK)\"]\n"
                             "    args: [in, out, {i32: N}]\n";

} // namespace

TEST(ModuleFile, ModuleVariantsLoadAndRunInTheStaticTier)
{
    REQUIRE_FIXTURES();
    const auto& f = fixtures();
    ::setenv("HARNESS_TEST_BUILD_DIR", (f.dir / "build").c_str(), 1);
    const fs::path file = f.dir / "suites" / "modules.yaml";
    const auto s = suite::parse_suite(suite_text(module_variant), file);
    ASSERT_NE(s.find_variant("shipped"), nullptr);
    EXPECT_EQ(s.find_variant("shipped")->module, fs::weakly_canonical(f.dir / "build" / "k.fatbin"));
    const auto results = compile::run_static_tier(s, {"sm_80", "sm_90"}, nullptr);
    int checked = 0;
    for (const auto& r : results) {
        if (r.variant != "shipped") continue;
        ASSERT_EQ(r.status, CaseStatus::passed) << r.message;
        EXPECT_EQ(r.metric(metric::static_shared_bytes), 4.0 * r.params.at("BLOCK")) << r.params_text;
        EXPECT_GT(r.metric(metric::registers).value_or(0), 0.0);
        EXPECT_FALSE(r.metric(metric::spill_store_bytes)) << "a module file has no ptxas report to state spills";
        ++checked;
    }
    EXPECT_EQ(checked, 4);
    // Hotspots quote the project's sources and the toolkit's headers, nothing else a line table names.
    const auto& shipped = *s.find_variant("shipped");
    EXPECT_TRUE(run::may_quote_source(s, shipped, f.dir / "kernels" / "k.cu"));
    EXPECT_FALSE(run::may_quote_source(s, shipped, "/etc/passwd"));
    EXPECT_FALSE(run::may_quote_source(s, shipped, f.dir / "kernels" / ".." / ".." / "elsewhere.cu"));
    for (const auto& dir : compile::toolkit_include_dirs())
        EXPECT_TRUE(run::may_quote_source(s, shipped, dir / "cuda_fp16.h"));
    // An architecture the module lacks fails its cases, naming what the module holds.
    for (const auto& r : compile::run_static_tier(s, {"sm_86"}, nullptr))
        if (r.variant == "shipped") {
            EXPECT_EQ(r.status, CaseStatus::compile_error);
            EXPECT_NE(r.message.find("holds sm_80, sm_90"), std::string::npos) << r.message;
        }
}

TEST(ModuleFile, TheLoaderRefusesWhatAModuleVariantCannotMean)
{
    REQUIRE_FIXTURES();
    const fs::path file = fixtures().dir / "suites" / "modules.yaml";
    const auto error = [&](const std::string& lines) {
        try {
            suite::parse_suite(suite_text(lines), file);
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    ::unsetenv("HARNESS_TEST_UNSET_DIR");
    std::string e = error("  shipped:\n    module: ${HARNESS_TEST_UNSET_DIR}/k.fatbin\n    entry: plain_copy\n"
                          "    block: [256]\n    grid: [4]\n    args: [in, out, {i32: N}]\n");
    EXPECT_NE(e.find("variants.shipped.module: the environment variable HARNESS_TEST_UNSET_DIR is not set"),
              std::string::npos)
        << e;
    e = error("  shipped:\n    module: ../build/k.fatbin\n    source: ../kernels/k.cu\n    entry: plain_copy\n"
              "    block: [256]\n    grid: [4]\n    args: [in, out, {i32: N}]\n");
    EXPECT_NE(e.find("variants.shipped.source: a 'module' variant is built already"), std::string::npos) << e;
    e = error("  shipped:\n    module: ../build/k.fatbin\n    defines: {X: 1}\n    entry: plain_copy\n"
              "    block: [256]\n    grid: [4]\n    args: [in, out, {i32: N}]\n");
    EXPECT_NE(e.find("variants.shipped.defines: a 'module' variant is built already"), std::string::npos) << e;
    e = error("  shipped:\n    module: /etc/k.fatbin\n    entry: plain_copy\n"
              "    block: [256]\n    grid: [4]\n    args: [in, out, {i32: N}]\n");
    EXPECT_NE(e.find("lies outside the project"), std::string::npos) << e;
    e = error("  shipped:\n    module: ../build/k.fatbin\n    stale: sometimes\n    entry: plain_copy\n"
              "    block: [256]\n    grid: [4]\n    args: [in, out, {i32: N}]\n");
    EXPECT_NE(e.find("variants.shipped.stale: 'sometimes': write 'error'"), std::string::npos) << e;
    e = error("  shipped:\n    source: ../kernels/k.cu\n    stale: allow\n    entry: plain_copy\n"
              "    block: [256]\n    grid: [4]\n    args: [in, out, {i32: N}]\n");
    EXPECT_NE(e.find("variants.shipped.stale: 'stale' applies to a 'module' variant only"), std::string::npos) << e;
    const auto s = suite::parse_suite(suite_text("  shipped:\n    module: ../build/k.fatbin\n    stale: allow\n"
                                                 "    entry: plain_copy\n    block: [256]\n    grid: [4]\n"
                                                 "    args: [in, out, {i32: N}]\n"),
                                      file);
    EXPECT_TRUE(s.find_variant("shipped")->allow_stale);
    EXPECT_FALSE(s.find_variant("copy")->allow_stale);
}

TEST(ModuleFile, TheNvccModulesSuiteRunsInTheStaticTier)
{
    // tests/suites/nvcc_modules.yaml over the modules CMake built from tests/kernels/module_kernels.cu.
    ::setenv("HARNESS_TEST_MODULE_DIR", HARNESS_TEST_MODULE_DIR, 0); // a copied build may point elsewhere
    const auto s = suite::load_suite(repo_root() / "tests" / "suites" / "nvcc_modules.yaml");
    std::map<std::string, int> passed;
    for (const auto& r : compile::run_static_tier(s, {"sm_90"}, nullptr)) {
        ASSERT_EQ(r.status, CaseStatus::passed) << r.variant << " " << r.params_text << ": " << r.message;
        ++passed[r.variant];
        if (r.variant == "cubin" || r.variant == "scattered") continue; // no shared memory
        EXPECT_EQ(r.metric(metric::static_shared_bytes), 4.0 * r.params.at("BLOCK")) << r.variant;
    }
    EXPECT_EQ(passed, (std::map<std::string, int>{
                          {"nvrtc", 4}, {"fatbin", 4}, {"fatbin_ptx", 4}, {"cubin", 4}, {"ptx", 4}, {"scattered", 4}}));
    // sm_80: the fatbin has its code; the sm_90 cubin, the compute_90 and sm_90 fatbin and the
    // compute_90 PTX cannot serve it.
    for (const auto& r : compile::run_static_tier(s, {"sm_80"}, nullptr)) {
        if (r.variant == "nvrtc" || r.variant == "fatbin" || r.variant == "scattered") {
            EXPECT_EQ(r.status, CaseStatus::passed) << r.variant << ": " << r.message;
        } else {
            EXPECT_EQ(r.status, CaseStatus::compile_error) << r.variant;
            EXPECT_NE(r.message.find(r.variant == "cubin"        ? "holds sm_90 code; the run needs sm_80"
                                     : r.variant == "fatbin_ptx" ? "holds compute_90, sm_90, nothing sm_80 can run"
                                                                 : "its PTX does not compile for sm_80"),
                      std::string::npos)
                << r.message;
        }
    }
}

// A module that carries PTX (a PTX file, a fatbin with PTX beside its code) has its accesses
// predicted from that PTX, as NVRTC's build of the same source has; one of machine code only (a
// cubin, a fatbin without PTX) from the PTX text its cubin keeps, without source lines.
TEST(ModuleFile, ModulesWithPtxHaveTheirAccessesPredicted)
{
    ::setenv("HARNESS_TEST_MODULE_DIR", HARNESS_TEST_MODULE_DIR, 0); // a copied build may point elsewhere
    const auto s = suite::load_suite(repo_root() / "tests" / "suites" / "nvcc_modules.yaml");
    const auto results = compile::run_static_tier(s, {"sm_90"}, nullptr);
    const auto find = [&](const std::string& variant, const std::string& params) -> const CaseResult& {
        for (const auto& r : results)
            if (r.variant == variant && r.params_text == params) return r;
        throw std::runtime_error("no case " + variant + " " + params);
    };
    const std::vector<const char*> figures = {
        metric::predicted_global_ld_requests,      metric::predicted_global_ld_sectors,
        metric::predicted_global_st_requests,      metric::predicted_global_st_sectors,
        metric::predicted_excess_global_sectors,   metric::predicted_shared_wavefronts,
        metric::predicted_excess_shared_wavefronts};
    int compared = 0;
    for (const auto& nvrtc : results) {
        if (nvrtc.variant != "nvrtc") continue;
        ASSERT_TRUE(nvrtc.not_predicted.empty()) << nvrtc.not_predicted.front();
        for (const std::string variant : {"ptx", "fatbin_ptx"}) {
            const CaseResult& r = find(variant, nvrtc.params_text);
            ASSERT_TRUE(r.not_predicted.empty()) << variant << ": " << r.not_predicted.front();
            for (const char* figure : figures) {
                ASSERT_TRUE(r.metric(figure)) << variant << " " << r.params_text << " " << figure;
                EXPECT_EQ(r.metric(figure), nvrtc.metric(figure)) << variant << " " << r.params_text << " " << figure;
            }
            // The same accesses, at the same lines of the same source.
            ASSERT_EQ(r.predicted_accesses.size(), nvrtc.predicted_accesses.size()) << variant;
            for (std::size_t i = 0; i < r.predicted_accesses.size(); ++i) {
                const PredictedAccess& a = r.predicted_accesses[i];
                const PredictedAccess& b = nvrtc.predicted_accesses[i];
                EXPECT_EQ(std::tie(a.file, a.line, a.access, a.buffer), std::tie(b.file, b.line, b.access, b.buffer))
                    << variant << " " << a.text() << " against " << b.text();
            }
            ++compared;
        }
    }
    EXPECT_EQ(compared, 8);
    // 256 threads staging 256 floats: a load of in[], a store and a load of tile[], a store to out[].
    const CaseResult& ptx = find("ptx", "N=65536 BLOCK=256");
    EXPECT_EQ(ptx.metric(metric::predicted_global_ld_requests), 65536.0 / 32);
    EXPECT_EQ(ptx.metric(metric::predicted_global_ld_sectors), 65536.0 * 4 / 32);
    EXPECT_EQ(ptx.metric(metric::predicted_excess_shared_wavefronts), 0.0);
    // Machine code alone: predicted from the PTX text nvcc keeps in the cubin (.nv_debug_ptx_txt), the same
    // figures as from the module's PTX, but without source lines (that text has no .loc lines).
    int without_ptx = 0;
    for (const std::string variant : {"fatbin", "cubin", "scattered"})
        for (const auto& r : results) {
            if (r.variant != variant) continue;
            ++without_ptx;
            ASSERT_TRUE(r.not_predicted.empty()) << variant << ": " << r.not_predicted.front();
            EXPECT_TRUE(r.metric(metric::predicted_excess_global_sectors)) << variant;
            for (const auto& a : r.predicted_accesses) EXPECT_EQ(a.file, "") << variant << " " << a.text();
            if (variant != "fatbin") continue; // the cubin runs copy_c, and scattered its own kernel
            const CaseResult& with_ptx = find("ptx", r.params_text);
            for (const char* figure : figures)
                EXPECT_EQ(r.metric(figure), with_ptx.metric(figure))
                    << variant << " " << r.params_text << " " << figure;
        }
    EXPECT_GT(without_ptx, 0);
}

TEST(ModuleFile, AVariableThatStartsThePathWithARelativeFolderMeansTheWorkingFolder)
{
    REQUIRE_FIXTURES();
    ::setenv("HARNESS_TEST_RELATIVE_BUILD_DIR", "some/build", 1);
    const auto s = suite::parse_suite(suite_text("  shipped:\n    module: ${HARNESS_TEST_RELATIVE_BUILD_DIR}/k.fatbin\n"
                                                 "    entry: plain_copy\n    block: [256]\n    grid: [4]\n"
                                                 "    args: [in, out, {i32: N}]\n"),
                                      fixtures().dir / "suites" / "modules.yaml");
    EXPECT_EQ(s.find_variant("shipped")->module, fs::weakly_canonical(fs::current_path() / "some/build/k.fatbin"));
}

TEST(ModuleSourcePath, ASourceRecordedByABuildElsewhereIsFoundInTheProject)
{
    TempDir dir("harness-module-source");
    write_file(dir.path / "kernels" / "stencil.cu", "// kernel\n");
    write_file(dir.path / "suites" / "s.yaml", "");
    suite::Suite s;
    s.file = dir.path / "suites" / "s.yaml";
    s.project_root = dir.path;
    suite::VariantSpec v;
    v.kind = suite::VariantKind::module;
    v.module = dir.path / "build" / "modules" / "stencil.fatbin";
    // Built on another machine, in another folder: the end of the path names the project's file.
    EXPECT_EQ(run::module_source_path(s, v, "/ci/runner/work/project/kernels/stencil.cu"),
              dir.path / "kernels" / "stencil.cu");
    // Relative to the project, as a build from its root records it.
    EXPECT_EQ(run::module_source_path(s, v, "kernels/stencil.cu"), dir.path / "kernels" / "stencil.cu");
    // Nowhere in the project: said as recorded, not placed beside the suite.
    EXPECT_EQ(run::module_source_path(s, v, "/elsewhere/other.cu"), std::filesystem::path("/elsewhere/other.cu"));
    EXPECT_EQ(run::module_source_path(s, v, "other.cu"), std::filesystem::path("other.cu"));
    // A name that climbs out of the project's folders is never looked for there: said as recorded.
    const std::string climbing = "../../../../../../../../../../etc/passwd";
    EXPECT_EQ(run::module_source_path(s, v, climbing), std::filesystem::path(climbing));
    const std::string tail_climbing = "/ci/work/kernels/../../../../../../../../etc/passwd";
    EXPECT_EQ(run::module_source_path(s, v, tail_climbing), std::filesystem::path(tail_climbing));
}

namespace {

/// A cubin's first 100 bytes as nvcc wrote them: a header that promises section headers the file
/// does not hold.
std::string cut_short_cubin()
{
    return fixtures().bytes("k.cubin").substr(0, 100);
}

} // namespace

TEST(ModuleFile, ACorruptCubinIsBadInputNamingItsFile)
{
    REQUIRE_FIXTURES();
    const std::string cut = cut_short_cubin();
    for (const auto& read :
         std::vector<std::function<void()>>{[&] { compile::module_archs(cut, "build/cut.cubin"); },
                                            [&] { compile::cubin_for_arch(cut, "build/cut.cubin", "sm_90"); },
                                            [&] { compile::find_entries(cut, {"plain_copy"}, "build/cut.cubin"); }}) {
        try {
            read();
            ADD_FAILURE() << "a cubin cut short must be refused";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::bad_input) << e.what();
            EXPECT_TRUE(std::string(e.what()).starts_with("build/cut.cubin: cubin: truncated or corrupt")) << e.what();
        }
    }
    // As a suite's module the same bytes fail their variant as a compile error, naming the file.
    const auto& f = fixtures();
    write_file(f.dir / "build" / "cut.cubin", cut);
    ::setenv("HARNESS_TEST_BUILD_DIR", (f.dir / "build").c_str(), 1);
    const auto s = suite::parse_suite(suite_text("  shipped:\n    module: ${HARNESS_TEST_BUILD_DIR}/cut.cubin\n"
                                                 "    stale: allow\n    entry: plain_copy\n    block: [256]\n"
                                                 "    grid: [4]\n    args: [in, out, {i32: N}]\n"),
                                      f.dir / "suites" / "modules.yaml");
    int failed = 0;
    for (const auto& r : compile::run_static_tier(s, {"sm_90"}, nullptr)) {
        if (r.variant != "shipped") continue;
        EXPECT_EQ(r.status, CaseStatus::compile_error);
        EXPECT_NE(r.message.find("cut.cubin: cubin: truncated or corrupt"), std::string::npos) << r.message;
        ++failed;
    }
    EXPECT_EQ(failed, 2);
}

// PTX as a tool may write it, without indentation, cut after its last '}' (as a fatbin's entry
// cut short is): two entry functions, the first with a body.
constexpr const char* unindented_ptx = R"(.version 9.0
.target sm_80
.address_size 64
.visible .entry staged(
.param .u64 staged_param_0,
.param .u32 staged_param_1
)
{
.reg .pred %p<2>;
.reg .f32 %f<3>;
.reg .b32 %r<12>;
.reg .b64 %rd<5>;
.shared .align 4 .b8 staged_tile[256];
ld.param.u64 %rd2, [staged_param_0];
ld.param.u32 %r2, [staged_param_1];
cvta.to.global.u64 %rd3, %rd2;
add.s64 %rd1, %rd3, %rd4;
ld.global.f32 %f1, [%rd1];
shl.b32 %r3, %r1, 2;
and.b32 %r4, %r3, 252;
mov.u32 %r5, staged_tile;
add.s32 %r6, %r5, %r4;
st.shared.f32 [%r6], %f1;
bar.sync 0;
setp.ge.u32 %p1, %r1, %r2;
@%p1 bra $L__BB0_2;
add.s32 %r8, %r3, 4;
and.b32 %r9, %r8, 252;
ld.shared.f32 %f2, [%r11];
st.global.f32 [%rd1], %f2;
$L__BB0_2:
ret;
}
.visible .entry empty(
.param .u64 empty_param_0,
.param .u64 empty_param_1,
.param .u32 empty_param_2
)
{
.reg .pred %p<2>;
.reg .f32 %f<3>;
.reg .b32 %r<6>;
.reg .b64 %rd<8>;
ret;
})";

// nvJitLink writes past the end of its copy of PTX whose last line has no line break, where the
// text's length falls on some of the 8 byte offsets. glibc's malloc check (libc_malloc_debug) turns
// that into an abort, so the test runs itself again under it, and compiles the PTX there at each
// of 8 lengths.
TEST(ModuleFile, PtxWithoutAFinalLineBreakCompilesAndLeavesTheHeapIntact)
{
    if (std::getenv("HARNESS_TEST_PTX_UNDER_MALLOC_CHECK")) {
        for (int padding = 0; padding < 8; ++padding) {
            std::string ptx = unindented_ptx;
            ptx.insert(ptx.find(".address_size 64") + 16, static_cast<std::size_t>(padding), ' ');
            const std::string cubin = compile::cubin_for_arch(ptx, "cut.ptx", "sm_90");
            std::cout << "kernels: " << compile::read_cubin_info(cubin).kernels.size() << std::endl;
        }
        return;
    }
    fs::path malloc_check;
    for (const char* dir : {"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"})
        if (fs::exists(fs::path(dir) / "libc_malloc_debug.so.0"))
            malloc_check = fs::path(dir) / "libc_malloc_debug.so.0";
    if (malloc_check.empty()) GTEST_SKIP() << "glibc's libc_malloc_debug.so.0 is not installed";
    const auto* test = testing::UnitTest::GetInstance()->current_test_info();
    const auto o = run_program({"env", "LD_PRELOAD=" + malloc_check.string(), "GLIBC_TUNABLES=glibc.malloc.check=3",
                                "HARNESS_TEST_PTX_UNDER_MALLOC_CHECK=1", fs::read_symlink("/proc/self/exe").string(),
                                fmt::format("--gtest_filter={}.{}", test->test_suite_name(), test->name())});
    EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
    std::size_t compiled = 0;
    for (std::size_t at = 0; (at = o.out.find("kernels: 2\n", at)) != std::string::npos; ++at) ++compiled;
    EXPECT_EQ(compiled, 8u) << o.out << o.err;
}

} // namespace module_file_test
