#pragma once
// Built-in variants: library calls (cuBLAS) that stand beside the suite's kernels as reference
// rows, so reports can show each kernel as a fraction of the library. Loaded at run time, inside
// worker processes only.

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

/// The implementation of a built-in variant (suite/builtin_signatures.hxx names them and their
/// arguments).
struct BuiltinInfo {
    const char* name;
    void (*call)(std::span<const BuiltinArg> args, CUstream stream);
};

/// All built-ins: one for each suite::builtin_signatures() row (a test checks).
std::span<const BuiltinInfo> builtin_table();

/// The built-in called `name`, or nullptr.
const BuiltinInfo* find_builtin(const std::string& name);

} // namespace harness::run
