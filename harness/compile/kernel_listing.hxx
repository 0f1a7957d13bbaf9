#pragma once
// The kernels a source file or an nvcc-built module holds, with their parameters, for writing a
// suite skeleton (`harness scaffold`): names demangled, each parameter's size from the cubin, its
// name and type from the kernel's declaration where the source is at hand, else from the demangled
// signature.

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace harness::compile {

/// One parameter of a listed kernel.
struct ListedParameter {
    std::string name;           ///< from the declaration; "arg0", "arg1", ... where it is unknown
    std::string type;           ///< "const float*", "int"; "" where only the size is known
    int size_bytes = 0;         ///< from the cubin; 0 where it does not list its parameters
    bool pointer = false;       ///< a device pointer (a buffer)
    bool const_pointee = false; ///< a pointer to const: read only (an input buffer)
    std::string pointee;        ///< the pointer's element type as declared, "float"; "" for a value
};

/// One kernel (entry function) of a cubin.
struct ListedKernel {
    std::string symbol;    ///< as the cubin names it (mangled for C++ kernels)
    std::string name;      ///< demangled, without return type and parameters: "gemm<32>", "vector_add"
    std::string signature; ///< "vector_add(const float* a, const float* b, float* c, int n)"
    int registers = 0;
    int static_shared_bytes = 0;
    std::vector<ListedParameter> parameters;
    /// The launch bounds it declares: `.maxntid` and `.reqntid` from the cubin (x, y, z), the
    /// minimum of resident blocks per SM (`.minnctapersm`) from the PTX where the module has it.
    std::optional<std::array<int, 3>> max_threads, required_threads;
    std::optional<int> min_blocks;
};

/// "at most 128 threads a block, at least 4 resident blocks asked (__launch_bounds__(128, 4))",
/// "exactly 64 x 2 x 1 threads a block (.reqntid)", or "" for a kernel that declares no bounds.
std::string launch_bounds_text(const ListedKernel& kernel);

/// The `.minnctapersm` of the entry `symbol` in `ptx` (`__launch_bounds__`'s second argument);
/// nullopt when the entry declares none or `ptx` does not hold it.
std::optional<int> declared_min_blocks(std::string_view ptx, std::string_view symbol);

/// What `file` holds for `arch`: a kernel source (.cu) compiled with NVRTC (its template kernels,
/// which NVRTC instantiates only when named, are not listed: `notes` says so), or a cubin, fatbin or
/// PTX module built by the project's compiler, whose parameters are named from `source` (the .cu it
/// was built from) where given. Throws Error (bad input) for a file that is neither or does not
/// compile.
std::vector<ListedKernel> list_kernels(const std::filesystem::path& file, const std::string& arch,
                                       const std::optional<std::filesystem::path>& source,
                                       std::vector<std::string>& notes);

/// The kernels of `cubin`, a module's or the compilation of `file`, their parameters named from
/// `source_text` (the .cu it was built from) where given. Throws Error (bad input) naming `file`
/// for a cubin that is malformed.
std::vector<ListedKernel> list_cubin_kernels(std::string_view cubin, const std::filesystem::path& file,
                                             const std::optional<std::string>& source_text, std::string_view ptx = {});

/// The parameters of the `__global__` function `name` as `source_text` declares them (comments
/// removed first); nullopt when it declares none of that name.
std::optional<std::vector<ListedParameter>> declared_parameters(const std::string& source_text,
                                                                const std::string& name);

/// "float" for "const float* __restrict__": a pointer's element type, qualifiers dropped.
std::string pointee_type(const std::string& type);

} // namespace harness::compile
