#pragma once
// Run-time compilation of kernel sources with NVRTC; compiled modules are kept in a CompileCache.

#include "harness/compile/compile_error.hxx"
#include "harness/compile/kernel_cache.hxx"
#include "harness/core/error.hxx"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace harness::compile {

/// What to compile: one source file for one architecture, with the entry points to look up.
struct CompileRequest {
    std::filesystem::path source;
    std::vector<std::filesystem::path> include_dirs;
    std::map<std::string, std::string> defines;
    std::vector<std::string> options; ///< extra NVRTC options from the suite
    std::string arch = "sm_90";
    std::vector<std::string> entries; ///< name expressions, e.g. "gemm_smem_tiled<32>"
    /// A cubin, fatbin or PTX file built by the project's compiler, instead of `source`
    /// (compile/module_file.hxx), and sources it is built from besides those its line table names.
    std::filesystem::path module_file;
    std::vector<std::filesystem::path> built_from;
    bool allow_stale_module = false; ///< the suite's `stale: allow`: no check that the module is newer
    /// Folders the compilation may read besides the toolkit's headers: the project, the suite's
    /// include folders, the source's folder. Empty: the source's folder and include folders only.
    std::vector<std::filesystem::path> readable_roots;
};

/// The CUDA toolkit's header folders every kernel may include from (cuda_fp16.h, mma.h,
/// cooperative_groups.h, and CCCL: cub/, cuda/std/, cuda/barrier): the `include` folder of
/// $CUDA_PATH, else of $CUDA_HOME, else of the toolkit the harness was built with, else of
/// /usr/local/cuda, whichever first holds cuda_fp16.h, plus its `cccl` folder. Empty when none does.
std::vector<std::filesystem::path> toolkit_include_dirs();

/// The full NVRTC option list for a request (also part of the cache key).
std::vector<std::string> nvrtc_options(const CompileRequest& request);

/// Loads the library of NVRTC's built-in headers, which NVRTC otherwise opens on its first
/// compilation, so that a process confined afterwards (confinement.hxx) need not find it.
void load_nvrtc_builtins();

/// NVRTC's version as "13.0".
std::string nvrtc_version();

/// Every folder `request` may read: its readable roots, include folders, the source's folder, the
/// module's folder and the toolkit's headers.
std::vector<std::filesystem::path> readable_folders(const CompileRequest& request);

/// The source file and every project file it includes, for hashing. Throws CompileError when an
/// include reaches outside the readable folders (include_scan.hxx), or the source or a file it
/// includes may not be read (include_policy.hxx).
std::vector<std::filesystem::path> source_closure(const CompileRequest& request);

/// What compiling `request` reads, each file with the hash of its content now: the source and its
/// project includes (NVRTC reports no dependencies, so these are the scan's), then the toolkit's
/// version headers (cuda.h, CCCL's version.h) standing for its other headers.
std::vector<SourceFile> compile_inputs(const CompileRequest& request);

/// A hash of the inputs' names and contents, options, architecture, entries and the NVRTC version.
std::string cache_key(const CompileRequest& request);
/// Same, from inputs already hashed.
std::string cache_key(const CompileRequest& request, const std::vector<SourceFile>& inputs);

/// Compiles (or fetches from `cache` when given); throws CompileError with NVRTC's log. NVRTC runs
/// in this process, with its environment and working folder: compile_suite() runs it in a
/// process of its own that has neither.
CompiledModule compile(const CompileRequest& request, const CompileCache* cache = nullptr);

} // namespace harness::compile
