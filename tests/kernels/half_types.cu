// Demonstrates: f16 and bf16 data verified against an f32 reference that reads the same values
// (`round_to`). out[i] = alpha * x[i] + y[i], computed in f32 and rounded once to the output type,
// so each narrow result is the reference's rounded to nearest even.
//
// The half types travel as their bits (unsigned short) and convert with the PTX cvt instructions
// that cuda_fp16.h and cuda_bf16.h use, so the file compiles without the toolkit's headers on
// NVRTC's include path. bf16 conversions from f32 need sm_80.

__device__ float f16_to_f32(unsigned short h)
{
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}

__device__ unsigned short f32_to_f16(float f)
{
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}

/// bf16 is the top half of an f32: widening is a shift.
__device__ float bf16_to_f32(unsigned short b)
{
    return __uint_as_float(static_cast<unsigned>(b) << 16);
}

__device__ unsigned short f32_to_bf16(float f)
{
    unsigned short b;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b) : "f"(f));
    return b;
}

/// The reference: f32 in, f32 out.
extern "C" __global__ void axpy_f32(const float* x, const float* y, float* out, float alpha, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = alpha * x[i] + y[i];
}

/// f16 in, f16 out, alpha an f16 scalar (2 bytes).
extern "C" __global__ void axpy_f16(const unsigned short* x, const unsigned short* y, unsigned short* out,
                                    unsigned short alpha, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = f32_to_f16(f16_to_f32(alpha) * f16_to_f32(x[i]) + f16_to_f32(y[i]));
}

/// bf16 in, bf16 out, alpha a bf16 scalar (2 bytes).
extern "C" __global__ void axpy_bf16(const unsigned short* x, const unsigned short* y, unsigned short* out,
                                     unsigned short alpha, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = f32_to_bf16(bf16_to_f32(alpha) * bf16_to_f32(x[i]) + bf16_to_f32(y[i]));
}
