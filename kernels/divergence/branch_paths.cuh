// The two branch bodies shared by the divergence kernels: different instruction sequences of similar cost,
// so the compiler cannot merge them and a warp holding both outcomes must run one after the other.
#pragma once

/// Work for even elements: a dependent chain of fast sines, bounded in [-0.8, 1].
__device__ __forceinline__ float even_path(float x, int iterations)
{
    for (int k = 0; k < iterations; ++k) x = __sinf(x) * 0.9f + 0.1f;
    return x;
}

/// Work for odd elements: a dependent chain of fast Gaussians, bounded in (0, 1].
__device__ __forceinline__ float odd_path(float x, int iterations)
{
    for (int k = 0; k < iterations; ++k) x = __expf(-x * x);
    return x;
}
