// Demonstrates: wave quantisation. Every block holds its SM for the same number of SM clock cycles,
// whatever else runs beside it, so the kernel lasts one block's time per wave of blocks over the
// GPU: a grid one block past a full wave (SMs x resident blocks per SM) takes a whole wave longer.
// 256 threads and few registers: 8 resident blocks per SM (limiter: warps) on sm_80 and sm_90.

/// Spins every thread for `cycles` SM clock cycles, then out[b] = b for each block b.
/// Launch with 256 threads per block and any grid; out holds one element per block.
extern "C" __global__ void __launch_bounds__(256) waves_fixed_block(int* __restrict__ out, int cycles)
{
    const long long start = clock64();
    while (clock64() - start < cycles) {
    }
    if (threadIdx.x == 0) out[blockIdx.x] = static_cast<int>(blockIdx.x);
}
