// Demonstrates: warp divergence. The branch tests threadIdx.x % 2, so every warp holds both outcomes and runs
// both paths back to back with half its lanes masked off each time: about twice branch_warp_uniform's time.
#include "divergence/branch_paths.cuh"

/// out[i] = even_path(in[i]) for even i, odd_path(in[i]) for odd i, i < n.
/// Launch with an even block size of at most 256 threads and grid ceil(n / blockDim.x).
extern "C" __global__ void __launch_bounds__(256)
branch_divergent(const float* __restrict__ in, float* __restrict__ out, int n, int iterations)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    // With an even block size, threadIdx.x % 2 is the parity of i.
    if (threadIdx.x % 2 == 0)
        out[i] = even_path(in[i], iterations);
    else
        out[i] = odd_path(in[i], iterations);
}
