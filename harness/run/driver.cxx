#include "harness/run/driver.hxx"

#include <atomic>
#include <dlfcn.h>
#include <fmt/format.h>
#include <mutex>

namespace harness::run {

namespace {

struct Loaded {
    Driver driver;
    std::string error; // empty when loaded
};

std::atomic<bool> started{false};

Loaded load()
{
    started = true;
    Loaded out;
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        out.error = fmt::format("no NVIDIA driver: cannot load libcuda.so.1 ({})", dlerror());
        return out;
    }
    using GetProc = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
    auto get_proc = reinterpret_cast<GetProc>(dlsym(lib, "cuGetProcAddress_v2"));
    if (!get_proc) {
        out.error = "the NVIDIA driver is too old: libcuda.so.1 has no cuGetProcAddress_v2";
        return out;
    }
    std::string missing;
#define HARNESS_DRIVER_RESOLVE(name)                                                                                   \
    {                                                                                                                  \
        void* fn = nullptr;                                                                                            \
        CUdriverProcAddressQueryResult found{};                                                                        \
        if (get_proc(#name, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &found) != CUDA_SUCCESS || !fn)            \
            missing += std::string(missing.empty() ? "" : ", ") + #name;                                               \
        out.driver.name = reinterpret_cast<decltype(out.driver.name)>(fn);                                             \
    }
    HARNESS_DRIVER_FUNCTIONS(HARNESS_DRIVER_RESOLVE)
#undef HARNESS_DRIVER_RESOLVE
    if (!missing.empty()) {
        out.error = fmt::format("the NVIDIA driver lacks {} for CUDA {}.{}: update the driver", missing,
                                CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
        return out;
    }
    int version = 0;
    out.driver.cuDriverGetVersion(&version);
    if (version < CUDA_VERSION) {
        out.error = fmt::format("the NVIDIA driver supports CUDA {}.{}, the harness needs {}.{}: update the driver",
                                version / 1000, version % 1000 / 10, CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
        return out;
    }
    const CUresult init = out.driver.cuInit(0);
    if (init != CUDA_SUCCESS) {
        const char* name = "?";
        out.driver.cuGetErrorName(init, &name);
        out.error = init == CUDA_ERROR_NO_DEVICE ? std::string("no CUDA device: the driver sees no GPU")
                                                 : fmt::format("cuInit failed: {}", name);
    }
    return out;
}

const Loaded& loaded()
{
    static const Loaded instance = load();
    return instance;
}

} // namespace

const Driver& driver()
{
    const Loaded& l = loaded();
    if (!l.error.empty()) throw Error(ErrorKind::environment, l.error);
    return l.driver;
}

bool driver_available(std::string* why)
{
    const Loaded& l = loaded();
    if (why) *why = l.error;
    return l.error.empty();
}

bool driver_started()
{
    return started;
}

bool CudaError::poisons_context() const
{
    switch (code_) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED: return true;
    default: return false;
    }
}

void check(CUresult result, const char* call)
{
    if (result == CUDA_SUCCESS) return;
    const char* name = "CUDA_ERROR_UNKNOWN";
    const char* text = "unknown error";
    const Loaded& l = loaded();
    if (l.driver.cuGetErrorName) l.driver.cuGetErrorName(result, &name);
    if (l.driver.cuGetErrorString) l.driver.cuGetErrorString(result, &text);
    throw CudaError(result, fmt::format("{} failed: {} ({})", call, name, text));
}

} // namespace harness::run
