#pragma once
// Built-in variants: library calls (cuBLAS) that stand beside the suite's kernels as reference
// rows, so reports can show each kernel as a fraction of the library. Loaded at run time, inside
// worker processes only.

#include "harness/suite/element_type.hxx"

#include <cuda.h>
#include <span>
#include <string>
#include <vector>

namespace harness::run {

/// One argument of a built-in call: a device pointer or a scalar.
struct BuiltinArg {
    CUdeviceptr pointer = 0;
    double scalar = 0.0;
    bool is_pointer = false;
};

/// A library routine callable as a variant: `builtin: <name>` with `args:` in the order given here.
struct BuiltinInfo {
    const char* name;
    const char* signature; ///< the argument list, for messages
    const char* description;
    std::size_t buffer_args;        ///< how many leading arguments are buffers
    std::size_t scalar_args;        ///< how many scalars follow
    suite::ElementType buffer_type; ///< the element type every buffer argument must have
    void (*call)(std::span<const BuiltinArg> args, CUstream stream);
};

/// All built-ins.
std::span<const BuiltinInfo> builtin_table();

/// The built-in called `name`, or nullptr.
const BuiltinInfo* find_builtin(const std::string& name);

} // namespace harness::run
