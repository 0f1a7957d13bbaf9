#include "harness/profile/cupti_error.hxx"

#include <cupti.h>
#include <fmt/format.h>

namespace harness::profile {

namespace {

ErrorKind kind_of(CUptiResult result)
{
    switch (result) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_NOT_INITIALIZED: return ErrorKind::environment;
    default: return ErrorKind::internal;
    }
}

} // namespace

CuptiError::CuptiError(CUptiResult result, const std::string& message)
    : Error(kind_of(result), message), result_(result)
{
}

std::string cupti_advice(CUptiResult result)
{
    switch (result) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
        return "this user may not read GPU performance counters (ERR_NVGPUCTRPERM): run as root, or load the "
               "driver with `options nvidia NVreg_RestrictProfilingToAdminUsers=0` (e.g. in "
               "/etc/modprobe.d/nvidia-profiling.conf, then reboot); in a container add --cap-add=SYS_ADMIN; "
               "or run with --no-profile";
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
        return "another profiler (Nsight Compute, Nsight Systems, or a CUPTI tool) is attached to this process: "
               "use --external-profiler to run each case once for it, or --no-profile";
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
        return "hardware counters cannot be read on a MIG instance: run on a whole GPU, or with --no-profile";
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
        return "hardware counters are not exposed to this virtual GPU: run with --no-profile";
    default: return {};
    }
}

void check(CUptiResult result, const char* call)
{
    if (result == CUPTI_SUCCESS) return;
    const char* text = nullptr;
    if (cuptiGetResultString(result, &text) != CUPTI_SUCCESS || !text) text = "unknown CUPTI error";
    std::string message = fmt::format("{} failed: {} ({})", call, text, static_cast<int>(result));
    if (const std::string advice = cupti_advice(result); !advice.empty()) message += ". " + advice;
    throw CuptiError(result, message);
}

} // namespace harness::profile
