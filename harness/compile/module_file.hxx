#pragma once
// Kernels built by the project's own compiler: a cubin, fatbin or PTX file named by a suite's
// `module:` key, turned into the cubin for one architecture with its entry points found by name,
// so that such a variant runs, is profiled and is read by the static tier like an NVRTC one.

#include "harness/compile/kernel_cache.hxx"

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace harness::compile {

enum class ModuleKind { cubin, fatbin, ptx };

/// The kind of a module file's content: an ELF cubin, a fatbin container (magic 0xBA55ED50) or PTX
/// text; throws Error (bad_input) naming `file` for anything else.
ModuleKind module_kind(std::string_view bytes, const std::filesystem::path& file);

/// What a module holds: "sm_80", "sm_90" for machine code, "compute_90" for PTX.
std::vector<std::string> module_archs(std::string_view bytes, const std::filesystem::path& file);

/// The cubin for `arch` ("sm_90"): a cubin of that architecture as it is, the fatbin's code for it,
/// or PTX (a PTX file, or a fatbin's PTX for that architecture or an older one) compiled for it with
/// line information. Compressed fatbin entries (nvcc compresses PTX by default) are decompressed.
/// Throws Error (bad_input) when the module holds nothing `arch` can run. `log`, when given,
/// receives ptxas' report of a PTX compilation (empty for machine code, which comes without one).
std::string cubin_for_arch(std::string_view bytes, const std::filesystem::path& file, const std::string& arch,
                           std::string* log = nullptr);

/// Loads the library that decompresses zstd entries of fatbins (libzstd.so.1), when it is there:
/// called before compiler processes are forked, which must not call the dynamic loader.
void load_module_decompressor();

/// The PTX a module carries for `arch`: a PTX file's text, a fatbin's PTX for that architecture or
/// the newest older one (decompressed), or "" for a cubin or a fatbin of machine code only. The
/// static tier predicts the module's accesses from it (docs/static-analysis.md).
std::string module_ptx(std::string_view bytes, const std::filesystem::path& file, const std::string& arch);

/// The symbol of each entry ("stencil_1d<256>", an extern "C" name, or a mangled name) among the
/// kernels of `cubin`: demangled names are compared without their return type, parameter list and
/// whitespace. Throws Error (bad_input) listing the kernels the module holds for an unknown entry.
std::map<std::string, std::string> find_entries(std::string_view cubin, const std::vector<std::string>& entries,
                                                const std::filesystem::path& file);

/// Reads `file` (a missing or unreadable one is an error naming it) and returns its cubin for `arch`
/// with its entries. Unless `allow_stale`, a module older than a source it was built from is an
/// error: the files of `built_from` and those its line table names that exist; the files a
/// `<module>.sources.sha256` manifest lists are compared by content instead of time. With
/// `project_roots`, a file the manifest or the line table names outside them (the path rule,
/// core/readable_path.hxx) is refused (manifest) or left alone (line table), unread and unstat'ed.
CompiledModule load_module_file(const std::filesystem::path& file, const std::string& arch,
                                const std::vector<std::string>& entries,
                                const std::vector<std::filesystem::path>& built_from, bool allow_stale = false,
                                const std::vector<std::filesystem::path>& project_roots = {});

} // namespace harness::compile
