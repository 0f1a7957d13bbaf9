#include "harness/run/builtins.hxx"

#include "harness/core/error.hxx"

#include <cublas_v2.h>
#include <dlfcn.h>
#include <fmt/format.h>

namespace harness::run {

namespace {

/// cuBLAS, opened on first use in the worker (the tool does not link it).
struct Cublas {
    decltype(&::cublasCreate_v2) create = nullptr;
    decltype(&::cublasSetStream_v2) set_stream = nullptr;
    decltype(&::cublasSgemm_v2) sgemm = nullptr;
    cublasHandle_t handle = nullptr;
};

Cublas& cublas()
{
    static Cublas lib = [] {
        Cublas c;
        void* so = dlopen("libcublas.so.13", RTLD_NOW | RTLD_LOCAL);
        if (!so) throw Error(ErrorKind::environment, fmt::format("cannot load libcublas.so.13: {}", dlerror()));
        c.create = reinterpret_cast<decltype(c.create)>(dlsym(so, "cublasCreate_v2"));
        c.set_stream = reinterpret_cast<decltype(c.set_stream)>(dlsym(so, "cublasSetStream_v2"));
        c.sgemm = reinterpret_cast<decltype(c.sgemm)>(dlsym(so, "cublasSgemm_v2"));
        if (!c.create || !c.set_stream || !c.sgemm)
            throw Error(ErrorKind::environment, "libcublas.so.13 lacks cublasCreate_v2 / cublasSgemm_v2");
        if (const cublasStatus_t s = c.create(&c.handle); s != CUBLAS_STATUS_SUCCESS)
            throw Error(ErrorKind::environment, fmt::format("cublasCreate failed with status {}", static_cast<int>(s)));
        return c;
    }();
    return lib;
}

void check_cublas(cublasStatus_t status, const char* call)
{
    if (status != CUBLAS_STATUS_SUCCESS)
        throw Error(ErrorKind::internal,
                    fmt::format("{} failed with cuBLAS status {}", call, static_cast<int>(status)));
}

// Row-major C[M x N] = A[M x K] * B[K x N]. cuBLAS is column-major, where the same memory holds
// the transposes, so it computes C^T = B^T * A^T.
void sgemm_row_major(std::span<const BuiltinArg> args, CUstream stream)
{
    Cublas& c = cublas();
    const int m = static_cast<int>(args[3].scalar);
    const int n = static_cast<int>(args[4].scalar);
    const int k = static_cast<int>(args[5].scalar);
    const float alpha = 1.0f, beta = 0.0f;
    check_cublas(c.set_stream(c.handle, reinterpret_cast<cudaStream_t>(stream)), "cublasSetStream");
    check_cublas(c.sgemm(c.handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha,
                         reinterpret_cast<const float*>(args[1].pointer), n,
                         reinterpret_cast<const float*>(args[0].pointer), k, &beta,
                         reinterpret_cast<float*>(args[2].pointer), n),
                 "cublasSgemm");
}

const BuiltinInfo builtins[] = {
    {"cublas_sgemm", "[A, B, C, {i32: M}, {i32: N}, {i32: K}]",
     "cuBLAS SGEMM, row-major C[M x N] = A[M x K] * B[K x N] (fp32, no tensor cores)", 3, 3, suite::ElementType::f32,
     sgemm_row_major},
};

} // namespace

std::span<const BuiltinInfo> builtin_table()
{
    return builtins;
}

const BuiltinInfo* find_builtin(const std::string& name)
{
    for (const auto& b : builtins)
        if (name == b.name) return &b;
    return nullptr;
}

} // namespace harness::run
