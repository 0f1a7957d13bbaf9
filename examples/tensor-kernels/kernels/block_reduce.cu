// Sum of n floats in two launches: each block reduces BLOCK * ITEMS inputs to one partial sum,
// then one block reduces the partial sums. The CUB variant uses cub::BlockReduce; the reference
// is a plain shared-memory tree. Both read with consecutive threads on consecutive addresses
// (coalesced): thread t of a block reads t, t + BLOCK, t + 2 * BLOCK, ...
//
// BLOCK: threads per block (a multiple of 32, at most 1024); ITEMS: inputs per thread.
#include <cub/block/block_reduce.cuh>

template <int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK) cub_block_sum(const float* in, float* out, int n)
{
    using Reduce = cub::BlockReduce<float, BLOCK>;
    __shared__ typename Reduce::TempStorage storage;
    const long long base = static_cast<long long>(blockIdx.x) * BLOCK * ITEMS;
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        const long long index = base + i * BLOCK + threadIdx.x;
        if (index < n) sum += in[index];
    }
    const float total = Reduce(storage).Sum(sum);
    if (threadIdx.x == 0) out[blockIdx.x] = total;
}

// The second pass: one block of BLOCK threads sums all n partial sums, striding by BLOCK.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) cub_final_sum(const float* in, float* out, int n)
{
    using Reduce = cub::BlockReduce<float, BLOCK>;
    __shared__ typename Reduce::TempStorage storage;
    float sum = 0.0f;
    for (int i = threadIdx.x; i < n; i += BLOCK) sum += in[i];
    const float total = Reduce(storage).Sum(sum);
    if (threadIdx.x == 0) *out = total;
}

// The reference: a shared-memory tree of 256 threads, one input per thread per step.
__global__ void __launch_bounds__(256) tree_sum(const float* in, float* out, int n)
{
    __shared__ float partial[256];
    float sum = 0.0f;
    for (long long i = static_cast<long long>(blockIdx.x) * 256 + threadIdx.x; i < n; i += 256LL * gridDim.x)
        sum += in[i];
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (int stride = 128; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}
