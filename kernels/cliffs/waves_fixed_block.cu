// Demonstrates: wave quantisation. Every block holds its SM for the same time, whatever else runs
// beside it: its warps sleep, and a sleeping warp issues nothing, so the blocks resident on an SM
// do not slow each other. The kernel then lasts one block's time per wave of blocks over the GPU:
// a grid one block past a full wave (SMs x resident blocks per SM) takes a whole wave longer.
// A fixed number of sleeps, not a spin on the clock, keeps the instruction count exact.
// 256 threads and few registers: 8 resident blocks per SM (limiter: warps) on sm_80 and sm_90.

/// Sleeps every thread `sleeps` times for about a microsecond, then out[b] = b for each block b.
/// Launch with 256 threads per block and any grid; out holds one element per block.
extern "C" __global__ void __launch_bounds__(256) waves_fixed_block(int* __restrict__ out, int sleeps)
{
    for (int i = 0; i < sleeps; ++i) __nanosleep(1000);
    if (threadIdx.x == 0) out[blockIdx.x] = static_cast<int>(blockIdx.x);
}
