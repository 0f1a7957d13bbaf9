// Demonstrates: FP8 (e4m3, e5m2) data verified against an f32 reference that reads the same values
// (`round_to`). out[i] = alpha * x[i] + y[i], computed in f32 and rounded once, with saturation,
// to the output type.
//
// FP8 values travel as their bits (unsigned char) and convert with the PTX cvt instructions that
// cuda_fp8.h uses on sm_89 and newer: a pair converts at once, the low byte being the low half.
// The suite lists only sm_89 and newer; on older architectures these kernels trap.

template <bool E4M3> __device__ float fp8_to_f32(unsigned char v)
{
#if __CUDA_ARCH__ >= 890
    unsigned int halves;
    if (E4M3)
        asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(halves) : "h"(static_cast<unsigned short>(v)));
    else
        asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(halves) : "h"(static_cast<unsigned short>(v)));
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(static_cast<unsigned short>(halves & 0xffffu)));
    return f;
#else
    __trap();
    return 0.0f;
#endif
}

template <bool E4M3> __device__ unsigned char f32_to_fp8(float f)
{
#if __CUDA_ARCH__ >= 890
    unsigned short pair;
    if (E4M3)
        asm("cvt.rn.satfinite.e4m3x2.f32 %0, %2, %1;" : "=h"(pair) : "f"(f), "f"(0.0f));
    else
        asm("cvt.rn.satfinite.e5m2x2.f32 %0, %2, %1;" : "=h"(pair) : "f"(f), "f"(0.0f));
    return static_cast<unsigned char>(pair & 0xffu);
#else
    __trap();
    return 0;
#endif
}

/// The reference: f32 in, f32 out.
extern "C" __global__ void axpy_f32(const float* x, const float* y, float* out, float alpha, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = alpha * x[i] + y[i];
}

/// e4m3 in, e4m3 out, alpha an e4m3 scalar (1 byte).
extern "C" __global__ void axpy_e4m3(const unsigned char* x, const unsigned char* y, unsigned char* out,
                                     unsigned char alpha, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = f32_to_fp8<true>(fp8_to_f32<true>(alpha) * fp8_to_f32<true>(x[i]) + fp8_to_f32<true>(y[i]));
}

/// e5m2 in, e5m2 out, alpha an e5m2 scalar (1 byte).
extern "C" __global__ void axpy_e5m2(const unsigned char* x, const unsigned char* y, unsigned char* out,
                                     unsigned char alpha, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = f32_to_fp8<false>(fp8_to_f32<false>(alpha) * fp8_to_f32<false>(x[i]) + fp8_to_f32<false>(y[i]));
}
