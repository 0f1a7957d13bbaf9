#include "harness/compile/nvrtc_compiler.hxx"

#include "harness/compile/include_policy.hxx"
#include "harness/compile/include_scan.hxx"
#include "harness/compile/module_file.hxx"

#include <algorithm>
#include <cstdlib>
#include <dlfcn.h>
#include <fmt/format.h>
#include <fstream>
#include <nvrtc.h>
#include <sstream>
#include <xxhash.h>

namespace harness::compile {

namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(ErrorKind::bad_input, "cannot read " + path.string());
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

void check_nvrtc(nvrtcResult result, const char* call, const fs::path& source)
{
    if (result != NVRTC_SUCCESS)
        throw CompileError(fmt::format("{}: {} failed: {}", source.string(), call, nvrtcGetErrorString(result)), "",
                           result, ErrorKind::internal);
}

/// Owns an nvrtcProgram so every exit path destroys it.
class Program {
public:
    Program(const std::string& text, const fs::path& source)
    {
        check_nvrtc(nvrtcCreateProgram(&program_, text.c_str(), source.filename().c_str(), 0, nullptr, nullptr),
                    "nvrtcCreateProgram", source);
    }
    ~Program() { nvrtcDestroyProgram(&program_); }
    Program(const Program&) = delete;
    Program& operator=(const Program&) = delete;
    nvrtcProgram get() const { return program_; }

private:
    nvrtcProgram program_ = nullptr;
};

} // namespace

std::vector<std::string> nvrtc_options(const CompileRequest& request)
{
    std::vector<std::string> options = {"--gpu-architecture=" + request.arch, "-lineinfo", "-std=c++17", "-Xptxas=-v"};
    // Each folder once, where it is first searched: the source's folder is often the suite's include
    // folder and the project's kernels/ as well, and a failure's option list would name it thrice.
    std::vector<std::string> searched;
    const auto include = [&](const fs::path& dir) {
        fs::path normal = dir.lexically_normal();
        if (!normal.has_filename() && normal.has_parent_path()) normal = normal.parent_path(); // "kernels/"
        const std::string folder = normal.string();
        if (std::find(searched.begin(), searched.end(), folder) != searched.end()) return;
        searched.push_back(folder);
        options.push_back("--include-path=" + dir.string());
    };
    include(request.source.parent_path());
    for (const auto& dir : request.include_dirs) include(dir);
    // The toolkit's headers come after the suite's folders, so a project's own header of the same name wins.
    for (const auto& dir : toolkit_include_dirs()) include(dir);
    for (const auto& [name, value] : request.defines)
        options.push_back(value.empty() ? "-D" + name : "-D" + name + "=" + value);
    options.insert(options.end(), request.options.begin(), request.options.end());
    return options;
}

std::vector<fs::path> toolkit_include_dirs()
{
    static const std::vector<fs::path> dirs = [] {
        std::vector<fs::path> candidates;
        for (const char* variable : {"CUDA_PATH", "CUDA_HOME"})
            if (const char* value = std::getenv(variable); value && *value)
                candidates.push_back(fs::path(value) / "include");
#ifdef HARNESS_CUDA_INCLUDE_DIR
        candidates.emplace_back(HARNESS_CUDA_INCLUDE_DIR);
#endif
        candidates.emplace_back("/usr/local/cuda/include");
        for (const auto& dir : candidates) {
            std::error_code ec;
            if (!fs::is_regular_file(dir / "cuda_fp16.h", ec)) continue;
            std::vector<fs::path> found = {dir};
            if (fs::is_directory(dir / "cccl", ec)) found.push_back(dir / "cccl");
            return found;
        }
        return std::vector<fs::path>{};
    }();
    return dirs;
}

namespace {

/// A hint for a compilation that failed on a header NVRTC cannot take, or "".
std::string header_hint(const std::string& log)
{
    if (log.find("could not open source file \"cuda") != std::string::npos ||
        log.find("could not open source file \"cub/") != std::string::npos ||
        log.find("could not open source file \"mma.h") != std::string::npos ||
        log.find("could not open source file \"cooperative_groups") != std::string::npos)
        return toolkit_include_dirs().empty()
                   ? "\n  note: the CUDA toolkit's include folder was not found (looked in $CUDA_PATH, $CUDA_HOME, "
                     "the toolkit the harness was built with and /usr/local/cuda); set CUDA_PATH"
                   : "";
    if (log.find("not allowed in JIT mode") != std::string::npos || log.find("/thrust/") != std::string::npos ||
        log.find("cub/device/") != std::string::npos)
        return "\n  note: this header holds host code, which NVRTC cannot compile (device-wide CUB algorithms, "
               "<cub/cub.cuh>, Thrust). Include the block, warp and thread primitives you use (e.g. "
               "<cub/block/block_reduce.cuh>), or build the kernel with nvcc and name the module in the suite "
               "(docs/suite-format.md, \"CUDA headers\")";
    return "";
}

} // namespace

void load_nvrtc_builtins()
{
    int major = 0, minor = 0;
    nvrtcVersion(&major, &minor);
    const std::string name = fmt::format("libnvrtc-builtins.so.{}.{}", major, minor);
    if (::dlopen(name.c_str(), RTLD_NOW | RTLD_GLOBAL)) return;
    // Beside NVRTC itself, where the loader's search may not look.
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(&nvrtcVersion), &info) && info.dli_fname)
        ::dlopen((fs::path(info.dli_fname).parent_path() / name).c_str(), RTLD_NOW | RTLD_GLOBAL);
}

std::string nvrtc_version()
{
    int major = 0, minor = 0;
    nvrtcVersion(&major, &minor);
    return fmt::format("{}.{}", major, minor);
}

std::vector<fs::path> readable_folders(const CompileRequest& request)
{
    std::vector<fs::path> folders = request.readable_roots;
    if (!request.source.empty()) folders.push_back(fs::absolute(request.source).parent_path());
    folders.insert(folders.end(), request.include_dirs.begin(), request.include_dirs.end());
    if (!request.module_file.empty()) folders.push_back(fs::absolute(request.module_file).parent_path());
    for (const auto& file : request.built_from) folders.push_back(fs::absolute(file).parent_path());
    for (const auto& dir : toolkit_include_dirs()) folders.push_back(dir);
    return folders;
}

std::vector<fs::path> source_closure(const CompileRequest& request)
{
    IncludeSearch search;
    search.source = request.source;
    search.include_dirs.push_back(fs::absolute(request.source).parent_path());
    search.include_dirs.insert(search.include_dirs.end(), request.include_dirs.begin(), request.include_dirs.end());
    search.toolkit_dirs = toolkit_include_dirs();
    search.project_roots = request.readable_roots;
    search.project_roots.push_back(fs::absolute(request.source).parent_path());
    search.project_roots.insert(search.project_roots.end(), request.include_dirs.begin(), request.include_dirs.end());
    search.language = source_language(nvrtc_options(request));
    // The source itself, before the scan reads it; the scan checks every file it follows.
    std::vector<fs::path> project_roots, toolkit_roots;
    std::error_code ec;
    for (const auto& root : search.project_roots) project_roots.push_back(fs::weakly_canonical(root, ec));
    for (const auto& root : search.toolkit_dirs) toolkit_roots.push_back(fs::weakly_canonical(root, ec));
    check_project_file(fs::weakly_canonical(request.source, ec), project_roots, toolkit_roots, request.source.string());
    return scan_includes(search);
}

std::vector<SourceFile> compile_inputs(const CompileRequest& request)
{
    std::vector<SourceFile> inputs;
    for (const auto& file : source_closure(request)) inputs.push_back({file, {}});
    // The toolkit's headers are many and change only with the toolkit, whose version these name.
    const auto toolkit = toolkit_include_dirs();
    if (!toolkit.empty())
        for (const fs::path& stamp : {toolkit.front() / "cuda.h", toolkit.front() / "cccl/cuda/std/__cccl/version.h"})
            if (std::error_code ec; fs::is_regular_file(stamp, ec)) inputs.push_back({stamp, {}});
    return hashed_now(std::move(inputs));
}

std::string cache_key(const CompileRequest& request)
{
    return cache_key(request, compile_inputs(request));
}

std::string cache_key(const CompileRequest& request, const std::vector<SourceFile>& inputs)
{
    XXH3_state_t* state = XXH3_createState();
    XXH3_128bits_reset(state);
    auto add = [&](const std::string& s) {
        XXH3_128bits_update(state, s.data(), s.size());
        XXH3_128bits_update(state, "\0", 1);
    };
    add(nvrtc_version());
    // Names and contents; where the files lie, the cache entry records (CompileCache::load).
    for (const auto& file : inputs) {
        add(file.path.filename().string());
        add(file.xxh3_128);
    }
    // Include directories change with the checkout's location; their contents are already hashed.
    for (const auto& option : nvrtc_options(request))
        if (!option.starts_with("--include-path=")) add(option);
    for (const auto& entry : request.entries) add(entry);
    const XXH128_hash_t hash = XXH3_128bits_digest(state);
    XXH3_freeState(state);
    return fmt::format("{}-{:016x}{:016x}", request.arch, hash.high64, hash.low64);
}

CompiledModule compile(const CompileRequest& request, const CompileCache* cache)
{
    if (!request.module_file.empty())
        return load_module_file(request.module_file, request.arch, request.entries, request.built_from,
                                request.allow_stale_module, request.readable_roots);
    CompiledModule module;
    const std::vector<SourceFile> inputs = compile_inputs(request);
    module.cache_key = cache_key(request, inputs);
    // The key holds the sources' names and contents, so the same kernel in another checkout finds
    // it; a hit is used only where its files are these ones, whose paths its PTX and line table name.
    if (cache)
        if (auto hit = cache->load(module.cache_key); hit && hit->sources == inputs) return *hit;

    Program program(read_file(request.source), request.source);
    for (const auto& entry : request.entries)
        check_nvrtc(nvrtcAddNameExpression(program.get(), entry.c_str()), "nvrtcAddNameExpression", request.source);

    const auto options = nvrtc_options(request);
    std::vector<const char*> argv;
    for (const auto& o : options) argv.push_back(o.c_str());
    const nvrtcResult result = nvrtcCompileProgram(program.get(), static_cast<int>(argv.size()), argv.data());

    std::size_t log_size = 0;
    nvrtcGetProgramLogSize(program.get(), &log_size);
    module.log.resize(log_size);
    if (log_size > 0) nvrtcGetProgramLog(program.get(), module.log.data());
    while (!module.log.empty() && (module.log.back() == '\0' || module.log.back() == '\n')) module.log.pop_back();
    // The include scan and the confinement keep other files unread; this keeps any that were
    // (a toolkit without a folder of its own) out of every report.
    module.log = withhold_outside_diagnostics(module.log, readable_folders(request));

    if (result != NVRTC_SUCCESS) {
        std::string joined;
        for (const auto& o : options) joined += " " + o;
        throw CompileError(fmt::format("{}: compilation for {} failed ({}):\n{}{}\n  options:{}",
                                       request.source.string(), request.arch, nvrtcGetErrorString(result), module.log,
                                       header_hint(module.log), joined),
                           module.log, result);
    }

    std::size_t cubin_size = 0;
    check_nvrtc(nvrtcGetCUBINSize(program.get(), &cubin_size), "nvrtcGetCUBINSize", request.source);
    module.cubin.resize(cubin_size);
    check_nvrtc(nvrtcGetCUBIN(program.get(), module.cubin.data()), "nvrtcGetCUBIN", request.source);
    std::size_t ptx_size = 0;
    check_nvrtc(nvrtcGetPTXSize(program.get(), &ptx_size), "nvrtcGetPTXSize", request.source);
    module.ptx.resize(ptx_size);
    check_nvrtc(nvrtcGetPTX(program.get(), module.ptx.data()), "nvrtcGetPTX", request.source);
    while (!module.ptx.empty() && module.ptx.back() == '\0') module.ptx.pop_back();

    for (const auto& entry : request.entries) {
        const char* lowered = nullptr;
        const nvrtcResult r = nvrtcGetLoweredName(program.get(), entry.c_str(), &lowered);
        if (r != NVRTC_SUCCESS || !lowered)
            throw CompileError(fmt::format("{}: entry point '{}' not found in the compiled program ({})",
                                           request.source.string(), entry, nvrtcGetErrorString(r)),
                               module.log, r);
        module.lowered_names[entry] = lowered;
    }
    // A file that changed while NVRTC ran may have been read in either state: the cubin is then of
    // no known content, and is used this once.
    if (hashed_now(inputs) == inputs) module.sources = inputs;
    if (cache) cache->store(module);
    return module;
}

} // namespace harness::compile
