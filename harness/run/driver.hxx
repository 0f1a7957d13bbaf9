#pragma once
// The CUDA driver API, loaded at run time so the tool starts (and runs its static tier) on
// machines without an NVIDIA driver.

#include "harness/core/error.hxx"

#include <cuda.h>
#include <cudaProfiler.h>
#include <string>

namespace harness::run {

// Every driver entry point the harness uses; one row each. They are resolved for the CUDA version
// we build with, which returns the newest variant of an entry point: one whose signature changed
// without cuda.h renaming it (cuCtxSynchronize is cuCtxSynchronize_v2(CUcontext) for CUDA 13)
// must not be listed. Synchronise on the session stream instead.
#define HARNESS_DRIVER_FUNCTIONS(X)                                                                                    \
    X(cuInit)                                                                                                          \
    X(cuDriverGetVersion)                                                                                              \
    X(cuGetErrorName)                                                                                                  \
    X(cuGetErrorString)                                                                                                \
    X(cuDeviceGetCount)                                                                                                \
    X(cuDeviceGet)                                                                                                     \
    X(cuDeviceGetName)                                                                                                 \
    X(cuDeviceGetPCIBusId)                                                                                             \
    X(cuDeviceGetAttribute)                                                                                            \
    X(cuDeviceTotalMem)                                                                                                \
    X(cuDevicePrimaryCtxRetain)                                                                                        \
    X(cuDevicePrimaryCtxRelease)                                                                                       \
    X(cuCtxSetCurrent)                                                                                                 \
    X(cuModuleLoadData)                                                                                                \
    X(cuModuleUnload)                                                                                                  \
    X(cuModuleGetFunction)                                                                                             \
    X(cuFuncGetAttribute)                                                                                              \
    X(cuFuncSetAttribute)                                                                                              \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor)                                                                     \
    X(cuLaunchKernel)                                                                                                  \
    X(cuLaunchKernelEx)                                                                                                \
    X(cuMemAlloc)                                                                                                      \
    X(cuMemFree)                                                                                                       \
    X(cuMemGetInfo)                                                                                                    \
    X(cuMemcpyHtoD)                                                                                                    \
    X(cuMemcpyDtoH)                                                                                                    \
    X(cuMemcpyDtoDAsync)                                                                                               \
    X(cuMemsetD8)                                                                                                      \
    X(cuMemsetD32Async)                                                                                                \
    X(cuMemHostRegister)                                                                                               \
    X(cuMemHostUnregister)                                                                                             \
    X(cuProfilerStart)                                                                                                 \
    X(cuProfilerStop)                                                                                                  \
    X(cuStreamCreate)                                                                                                  \
    X(cuStreamDestroy)                                                                                                 \
    X(cuStreamSynchronize)                                                                                             \
    X(cuEventCreate)                                                                                                   \
    X(cuEventDestroy)                                                                                                  \
    X(cuEventRecord)                                                                                                   \
    X(cuEventSynchronize)                                                                                              \
    X(cuEventElapsedTime)

/// Function pointers into libcuda, typed from cuda.h (macros there pick the versioned symbol).
struct Driver {
#define HARNESS_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
    HARNESS_DRIVER_FUNCTIONS(HARNESS_DRIVER_MEMBER)
#undef HARNESS_DRIVER_MEMBER
};

/// Loads libcuda.so.1 and resolves every function once; throws Error(environment) when there
/// is no driver or it is older than the toolkit the harness was built with.
const Driver& driver();

/// Device memory of a case's buffer, freed on every path (the case and the scan runners').
struct DeviceMemory {
    CUdeviceptr ptr = 0;
    std::size_t bytes = 0;
    DeviceMemory() = default;
    DeviceMemory(const DeviceMemory&) = delete;
    DeviceMemory& operator=(const DeviceMemory&) = delete;
    ~DeviceMemory()
    {
        if (ptr) driver().cuMemFree(ptr);
    }
};

/// True when a driver can be loaded (no exception); `why` gets the reason when not.
bool driver_available(std::string* why = nullptr);

/// Whether this process has tried to load and initialise the driver yet (after that, changes to
/// CUDA_VISIBLE_DEVICES no longer take effect in it).
bool driver_started();

/// A failed driver call: the call's text and the driver's name and description of the error.
class CudaError : public Error {
public:
    CudaError(CUresult code, const std::string& message) : Error(ErrorKind::internal, message), code_(code) {}
    CUresult code() const { return code_; }
    /// Whether the error leaves the context unusable (faults inside a kernel).
    bool poisons_context() const;

private:
    CUresult code_;
};

/// Throws CudaError naming `call` when `result` is not CUDA_SUCCESS.
void check(CUresult result, const char* call);

} // namespace harness::run

/// Calls a driver function and checks the result, naming the call in the error.
#define CU_CHECK(call_expr) ::harness::run::check(call_expr, #call_expr)
