// Demonstrates: tree reduction in shared memory with interleaved addressing and `tid % (2 * stride) == 0`.
// Active threads are scattered over every warp, so each level diverges and keeps all warps busy.

/// Sums in[0, n) into one partial per block: block_sums[blockIdx.x]. Each thread first adds its elements
/// of a grid-stride walk (exactly one when grid = ceil(n / BLOCK)), then the block reduces in shared memory.
/// Two passes sum any n: grid ceil(n / BLOCK) into block_sums, then grid 1 over those partials.
/// BLOCK: threads per block, a power of two; launch with block (BLOCK).
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
reduce_interleaved_divergent(const float* __restrict__ in, float* __restrict__ block_sums, int n)
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
        // Only every (2 * stride)-th thread works, but no warp is idle until stride reaches 32.
        if (tid % (2 * stride) == 0) partial[tid] += partial[tid + stride];
        __syncthreads();
    }
    if (tid == 0) block_sums[blockIdx.x] = partial[0];
}
