#pragma once
// A suite's kernel arguments against the parameters the compiled kernel declares, before anything
// is launched with them: the driver copies each argument's bytes as the kernel's parameter sizes
// say, so a `{f32: 0.75}` given to a `__half` parameter, or one argument too few, would run with
// garbage instead of failing.

#include "harness/compile/compile_suite.hxx"
#include "harness/compile/cubin_info.hxx"
#include "harness/suite/suite.hxx"

#include <cstddef>
#include <string>
#include <vector>

namespace harness::compile {

/// The bytes an argument passes: 8 for a buffer (a device pointer), the type's size for a scalar.
std::size_t argument_bytes(const suite::ArgSpec& arg);

/// Why the arguments of launch `launch` of `variant` do not fit `kernel` (compiled from `entry`):
/// one message for a count of arguments other than the kernel's parameter count, else one per
/// argument whose size is not its parameter's. Each names the suite file, line, column and field,
/// the argument and both sizes. Empty when they fit or the cubin does not list the parameters.
std::vector<std::string> argument_mismatches(const suite::Suite& suite, const suite::VariantSpec& variant,
                                             std::size_t launch, const KernelResources& kernel,
                                             const std::string& entry);

/// Checks every launch of every module in `compiled` against its kernel's parameters; throws Error
/// (bad_input) naming every mismatch. Modules whose cubin cannot be read are left to the caller.
void check_kernel_arguments(const suite::Suite& suite, const SuiteModules& compiled);

} // namespace harness::compile
