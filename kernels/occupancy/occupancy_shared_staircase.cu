// Demonstrates: the shared-memory limiter as a staircase. Each thread keeps its running sums in dynamic
// shared memory, `slots` floats per thread (slots KiB per 256-thread block), so the blocks that fit on an SM
// fall one at a time as slots grows. An SM holds 228 KiB on an H100 (164 KiB on an A100) and reserves 1 KiB
// per block: 8 blocks (100 %) up to 27 KiB per block on an H100, 7 from 28, 6 from 32, 5 from 38, ...
#include "occupancy/chase.cuh"

/// out[i] = sum of the kChaseSteps values thread i loads along its warp's chase (as occupancy_registers),
/// accumulated in `slots` running sums in dynamic shared memory (step s adds to sum s % slots).
/// Launch with block (kChaseBlock), grid ceil(n / kChaseBlock), shared_bytes slots * kChaseBlock * 4 (or
/// more); sectors = table elements / 8, a power of two; slots >= 1.
extern "C" __global__ void __launch_bounds__(kChaseBlock)
occupancy_shared_staircase(const float* __restrict__ table, float* __restrict__ out, int n, unsigned sectors,
                           int slots)
{
    extern __shared__ float sums[]; // [slots][kChaseBlock]: a thread's sums are a column, free of bank conflicts
    float* mine = sums + threadIdx.x;
    for (int j = 0; j < slots; ++j) mine[j * kChaseBlock] = 0.0f;

    const int i = blockIdx.x * kChaseBlock + threadIdx.x;
    unsigned sector = chase_first(i / 32, sectors);
    for (int s = 0; s < kChaseSteps; ++s) {
        const float v = chase_load(table, sector);
        mine[(s % slots) * kChaseBlock] += v;
        sector = chase_next(sector, v, sectors);
    }

    float total = 0.0f;
    for (int j = 0; j < slots && j < kChaseSteps; ++j) total += mine[j * kChaseBlock];
    if (i < n) out[i] = total;
}
