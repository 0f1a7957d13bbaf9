#pragma once
// Kernels exported from cuTile (ci/cutile_export.py): a cubin, its PTX and a manifest of what
// launching it takes, read with no Python at run time. cuTile compiles a kernel for assumptions
// about its arrays (a base address divisible by 16, a shape a multiple of 16, a constant stride of
// 1) that a launch must meet: the harness refuses a suite point whose arguments break one, before
// anything runs, since cuTile's own launcher would not check them and the kernel would compute
// garbage or fault. Arrays are passed as cuTile's calling convention says: the base pointer, then
// the shape, then the strides (in elements), each of the array's index type; constants are
// compiled in and not passed.

#include "harness/suite/element_type.hxx"

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace harness::suite {

/// The manifest format ci/cutile_export.py writes, and the calling convention it is read for.
inline constexpr int cutile_manifest_format = 1;
inline constexpr const char* cutile_calling_convention = "cutile_python_v1";

/// What the kernel was compiled to assume of an array argument (cuTile's ArrayConstraint).
struct CutileArray {
    int ndim = 0;
    ElementType index_type = ElementType::i32;                   ///< of its shape and strides: i32 or i64
    std::int64_t base_addr_divisible_by = 1;                     ///< bytes
    std::vector<std::int64_t> shape_divisible_by;                ///< per dimension, elements
    std::vector<std::int64_t> stride_divisible_by;               ///< per dimension, elements
    std::vector<std::optional<std::int64_t>> stride_constant;    ///< per dimension; nullopt: any
    std::vector<std::optional<std::int64_t>> stride_lower_bound; ///< per dimension, inclusive; nullopt: none
    std::vector<std::string> alias_groups;                       ///< empty: aliases no other parameter
    bool may_alias_internally = false;                           ///< two indices may name one element (a zero stride)
};

/// A parameter of the kernel that takes an argument (constants take none).
struct CutileParameter {
    std::string name;
    ElementType type = ElementType::f32; ///< an array's elements, or the scalar's type
    std::optional<CutileArray> array;    ///< set for an array, unset for a scalar
};

/// A manifest as read and checked (cutile_export.py's docstring describes the file).
struct CutileManifest {
    std::filesystem::path file;
    std::string kernel;           ///< the export's name
    std::string function;         ///< the @ct.kernel function
    std::filesystem::path source; ///< the .py file, absolute
    std::string source_sha256;
    std::string cutile_version;
    std::string compiler; ///< "tileiras 13.4.92"
    int arch = 0;         ///< 90 for sm_90
    std::string entry;    ///< the kernel's symbol in the cubin
    std::vector<CutileParameter> parameters;
    std::string constants; ///< as JSON text, for messages
    std::array<int, 3> block{1, 1, 1};
    std::int64_t static_shared_bytes = 0;
    std::filesystem::path cubin;
    std::string cubin_sha256;
    std::filesystem::path ptx;
    std::string ptx_sha256;
};

/// Reads `file`, checks every field's type and range and refuses what the harness cannot launch:
/// another format, DSL or calling convention, a thread block cluster, parameters the compiler adds
/// for a launcher to fill (a TMA descriptor), a type with no suite equivalent. Paths in it must stay
/// inside the manifest's project (`project`). Throws InputError naming the file, line and field.
CutileManifest read_cutile_manifest(const std::filesystem::path& file, const std::filesystem::path& project);

/// Why `manifest`'s source, cubin or PTX no longer match it ("" when they do).
std::string cutile_staleness(const CutileManifest& manifest);

} // namespace harness::suite
