#pragma once
// Kernels exported from Triton (ci/triton_export.py): a cubin and a manifest of what launching it
// takes, read with no Python at run time. Triton appends hidden pointer parameters to every kernel
// (global scratch since 3.4, profile scratch since 3.5); a launcher that leaves one out fails to
// launch or times nothing, so every hidden parameter the manifest lists is passed, and a kind this
// reader does not know is refused rather than left out.

#include "harness/suite/element_type.hxx"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace harness::suite {

/// The manifest format ci/triton_export.py writes.
inline constexpr int triton_manifest_format = 1;

/// A parameter of the kernel as the user's `@triton.jit` function declares it (constexprs are
/// compiled in and take no argument).
struct TritonParameter {
    std::string name;
    std::string type; ///< Triton's: "*fp32" (a pointer), "i32", "fp32"
    /// What the kernel was specialized on, as Triton's JIT does for arguments divisible by 16:
    /// a pointer aligned to, or an integer a multiple of, this many (1: nothing assumed).
    int divisibility = 1;
    bool is_pointer() const { return type.starts_with('*'); }
};

/// A parameter Triton adds after the user's: a pointer to `size` bytes per program (times the
/// grid and CTAs), or null when `size` is 0, as Triton's own launcher passes it.
struct TritonHiddenParameter {
    std::string name; ///< "global_scratch", "profile_scratch"
    std::int64_t size = 0;
    std::int64_t align = 1;
};

/// A manifest as read and checked (triton_export.py's docstring describes the file).
struct TritonManifest {
    std::filesystem::path file;   ///< the manifest
    std::string kernel;           ///< the export's name
    std::string function;         ///< the `@triton.jit` function
    std::filesystem::path source; ///< the .py file, absolute (relative to the manifest in the file)
    std::string source_sha256;
    std::string triton_version;
    int arch = 0; ///< 90 for sm_90
    std::vector<TritonParameter> parameters;
    std::string constexprs; ///< as JSON text, for messages and reports
    std::filesystem::path cubin;
    std::string cubin_sha256;
    // Launch facts from Triton's metadata.
    std::string entry; ///< the kernel's symbol in the cubin
    int num_warps = 0;
    int num_ctas = 1;
    std::int64_t shared_bytes = 0; ///< dynamic shared memory
    std::vector<TritonHiddenParameter> hidden;
};

/// Reads `file`, checks every field's type and range and refuses what the harness cannot launch
/// yet: clusters of more than 8 CTAs (num_ctas > 8, non-portable), tensor descriptors, cooperative or programmatic
/// dependent launches, tensor memory, hidden parameters of a kind it does not know, another
/// manifest format or backend. Paths in it (cubin, source) must stay beside or below the
/// manifest's project (`project`). Throws InputError naming the file, the line and the field.
TritonManifest read_triton_manifest(const std::filesystem::path& file, const std::filesystem::path& project);

/// The element type a Triton type names ("fp32" -> f32, "*bf16" -> bf16), or nullopt for one the
/// harness has no buffer or scalar type for ("i1", "fp8e4b15").
std::optional<ElementType> triton_element_type(std::string_view type);

/// Why `manifest`'s cubin or source no longer match it ("" when they do): the .py changed since
/// it was exported, or the cubin is not the one exported with it.
std::string triton_staleness(const TritonManifest& manifest);

} // namespace harness::suite
