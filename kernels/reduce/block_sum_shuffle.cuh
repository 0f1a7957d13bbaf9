// Block-wide sum shared by reduce_warp_shuffle.cu and reduce_atomic.cu: sequential addressing in shared
// memory while more than one warp is active, then a warp-shuffle final stage with no shared memory or sync.
#pragma once

/// Sum of v over the BLOCK threads of the calling block; the result is valid in thread 0 only.
/// Every thread of the block must call it. BLOCK: threads per block, a power of two from 64 to 1024.
template <int BLOCK>
__device__ __forceinline__ float block_sum_shuffle(float v)
{
    static_assert((BLOCK & (BLOCK - 1)) == 0 && BLOCK >= 64 && BLOCK <= 1024,
                  "BLOCK must be a power of two from 64 to 1024");
    static_assert(BLOCK * sizeof(float) <= 48 * 1024, "static shared memory is limited to 48 KiB");

    __shared__ float partial[BLOCK];
    const int tid = threadIdx.x;
    partial[tid] = v;
    __syncthreads();

    for (int stride = BLOCK / 2; stride > 32; stride /= 2) {
        if (tid < stride) partial[tid] += partial[tid + stride];
        __syncthreads();
    }
    if (tid < 32) {
        // The last 64 partials fold into one warp; from here lanes exchange registers directly.
        v = partial[tid] + partial[tid + 32];
#pragma unroll
        for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    }
    return v;
}
