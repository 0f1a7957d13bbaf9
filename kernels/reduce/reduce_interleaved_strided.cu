// Demonstrates: interleaved addressing with index = 2 * stride * tid: active threads are contiguous, so no
// divergence within a warp, but their shared-memory accesses collide in banks (2-way up to 8-way at 256).

/// Sums in[0, n) into one partial per block: block_sums[blockIdx.x] (grid-stride load, as in
/// reduce_interleaved_divergent). BLOCK: threads per block, a power of two; launch with block (BLOCK).
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
reduce_interleaved_strided(const float* __restrict__ in, float* __restrict__ block_sums, int n)
{
    static_assert((BLOCK & (BLOCK - 1)) == 0 && BLOCK <= 1024, "BLOCK must be a power of two, at most 1024");
    static_assert(BLOCK * sizeof(float) <= 48 * 1024, "static shared memory is limited to 48 KiB");

    __shared__ float partial[BLOCK];
    const int tid = threadIdx.x;

    float v = 0.0f;
    for (int i = blockIdx.x * BLOCK + tid; i < n; i += gridDim.x * BLOCK) v += in[i];
    partial[tid] = v;
    __syncthreads();

    for (int stride = 1; stride < BLOCK; stride *= 2) {
        const int index = 2 * stride * tid;
        if (index < BLOCK) partial[index] += partial[index + stride];
        __syncthreads();
    }
    if (tid == 0) block_sums[blockIdx.x] = partial[0];
}
