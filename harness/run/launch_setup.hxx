#pragma once
// A variant's kernel launches set up at one point of the sweep: the grid, block, dynamic shared
// memory and arguments evaluated for that point, ready for cuLaunchKernel. The case runner and
// the scan runner both build their launches here, so a scanned point launches exactly as a case.

#include "harness/compile/nvrtc_compiler.hxx"
#include "harness/run/driver.hxx"
#include "harness/suite/suite.hxx"

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace harness::run {

/// A launch that cannot run as specified at its point (bad geometry, an argument that does not
/// evaluate, no memory): its case (or scanned point) fails, the worker goes on.
struct LaunchProblem : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// `e` at `params`; an expression that does not evaluate is a LaunchProblem naming `what`.
std::int64_t evaluate_at(const suite::Expression& e, const suite::Bindings& params, const std::string& what);

/// Refuses data of a type the GPU at hand (`arch`) lacks (FP8 before sm_89): the loader checks the
/// suite's `archs`, but the GPU may be older than every one of them.
void check_type_on_gpu(suite::ElementType type, const std::string& arch, const std::string& what);

/// One kernel launch at one point. Move-only: `params` points into `scalar_storage`.
struct KernelLaunch {
    CUfunction function = nullptr;
    std::string symbol; ///< the kernel's name in the cubin
    std::array<unsigned, 3> grid{}, block{};
    std::array<unsigned, 3> cluster{1, 1, 1}; ///< blocks per thread block cluster; {1, 1, 1}: none
    unsigned shared_bytes = 0;                ///< dynamic
    std::vector<std::array<std::byte, 8>> scalar_storage;
    std::vector<void*> params;

    KernelLaunch() = default;
    KernelLaunch(const KernelLaunch&) = delete;
    KernelLaunch& operator=(const KernelLaunch&) = delete;
    KernelLaunch(KernelLaunch&&) noexcept = default;
    KernelLaunch& operator=(KernelLaunch&&) noexcept = default;
};

/// Sets up launch `index` of `variant` (a kernel, not a library call) at `params` from `module`
/// (loaded from `compiled`): its function, grid, block (checked against the kernel's limit),
/// dynamic shared memory (opted in above 48 KiB) and arguments, a buffer argument being the
/// device pointer `buffer_pointer` gives for its name. Throws LaunchProblem naming the field.
KernelLaunch set_up_kernel_launch(const suite::VariantSpec& variant, std::size_t index, CUmodule module,
                                  const compile::CompiledModule& compiled, const suite::Bindings& params,
                                  const std::function<CUdeviceptr(const std::string&)>& buffer_pointer,
                                  const std::string& arch);

/// Enqueues `launch` on `stream`.
void enqueue(const KernelLaunch& launch, CUstream stream);

} // namespace harness::run
