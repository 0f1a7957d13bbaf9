// Demonstrates: one-pass reduction: each block sums its elements (warp-shuffle final stage) and adds the
// block total to the result with one atomicAdd. No second launch, but all blocks contend for one address.
#include "reduce/block_sum_shuffle.cuh"

/// Adds the sum of in[0, n) to *sum, which must be zero beforehand. Any grid: each thread adds its
/// elements of a grid-stride walk, so a smaller grid means fewer atomics and more work per thread.
/// BLOCK: threads per block, a power of two from 64 to 1024; launch with block (BLOCK).
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
reduce_atomic(const float* __restrict__ in, float* __restrict__ sum, int n)
{
    float v = 0.0f;
    for (int i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += gridDim.x * BLOCK) v += in[i];
    v = block_sum_shuffle<BLOCK>(v);
    if (threadIdx.x == 0) atomicAdd(sum, v);
}
