// Demonstrates: the work of branch_divergent with a warp-uniform branch: threads are remapped so that a warp
// takes only even or only odd elements, and each warp runs a single path at full width.
#include "divergence/branch_paths.cuh"

/// out[i] = even_path(in[i]) for even i, odd_path(in[i]) for odd i, i < n (same result as branch_divergent).
/// Launch with a block size that is a multiple of 64, at most 256, and grid ceil(n / blockDim.x).
extern "C" __global__ void __launch_bounds__(256)
branch_warp_uniform(const float* __restrict__ in, float* __restrict__ out, int n, int iterations)
{
    // Each pair of warps covers 64 consecutive elements: the first warp the even ones, the second the odd.
    // The pair still reads and writes whole 256-byte spans between them, so DRAM traffic is unchanged.
    const int warp = threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    const int i = blockIdx.x * blockDim.x + (warp / 2) * 64 + 2 * lane + warp % 2;
    if (i >= n) return;
    if (warp % 2 == 0)
        out[i] = even_path(in[i], iterations);
    else
        out[i] = odd_path(in[i], iterations);
}
