// Demonstrates: sequential-addressing tree reduction whose last 64 partials are summed by one warp with
// __shfl_down_sync: the final five levels need neither shared memory nor __syncthreads().
#include "reduce/block_sum_shuffle.cuh"

/// Sums in[0, n) into one partial per block: block_sums[blockIdx.x] (grid-stride load, as in
/// reduce_interleaved_divergent). Launched twice (grid ceil(n / BLOCK), then grid 1 over the partials)
/// it is the two-pass reduction: no atomics, a deterministic result.
/// BLOCK: threads per block, a power of two from 64 to 1024; launch with block (BLOCK).
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
reduce_warp_shuffle(const float* __restrict__ in, float* __restrict__ block_sums, int n)
{
    float v = 0.0f;
    for (int i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += gridDim.x * BLOCK) v += in[i];
    v = block_sum_shuffle<BLOCK>(v);
    if (threadIdx.x == 0) block_sums[blockIdx.x] = v;
}
