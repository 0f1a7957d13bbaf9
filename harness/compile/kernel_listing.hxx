#pragma once
// The kernels a source file or an nvcc-built module holds, with their parameters, for writing a
// suite skeleton (`harness scaffold`): names demangled, each parameter's size from the cubin, its
// name and type from the kernel's declaration where the source is at hand, else from the demangled
// signature.

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
};

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
                                             const std::optional<std::string>& source_text);

/// The parameters of the `__global__` function `name` as `source_text` declares them (comments
/// removed first); nullopt when it declares none of that name.
std::optional<std::vector<ListedParameter>> declared_parameters(const std::string& source_text,
                                                                const std::string& name);

/// "float" for "const float* __restrict__": a pointer's element type, qualifiers dropped.
std::string pointee_type(const std::string& type);

} // namespace harness::compile
