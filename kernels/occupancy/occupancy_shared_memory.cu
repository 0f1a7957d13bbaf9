// Demonstrates: the shared-memory limiter. Each thread records its chase in dynamic shared memory (48 KiB per
// block), so only 4 blocks (50 %) fit on an H100 SM (228 KiB) and 3 (37.5 %) on an A100 (164 KiB).
#include "occupancy/chase.cuh"

/// out[i] = sum of the kChaseSteps values thread i loads along its warp's chase (as occupancy_registers),
/// summed from shared memory in PARTIALS running sums after the chase. Launch with block (kChaseBlock),
/// grid ceil(n / kChaseBlock), shared_bytes kChaseSteps * kChaseBlock * 4; sectors = table elements / 8.
/// PARTIALS: running sums of the final pass (step s goes to sum s % PARTIALS); divides kChaseSteps.
template <int PARTIALS>
__global__ void __launch_bounds__(kChaseBlock)
occupancy_shared_memory(const float* __restrict__ table, float* __restrict__ out, int n, unsigned sectors)
{
    static_assert(kChaseSteps % PARTIALS == 0, "PARTIALS must divide kChaseSteps");
    static_assert(kChaseSteps * kChaseBlock * sizeof(float) <= 48 * 1024,
                  "dynamic shared memory above 48 KiB needs cudaFuncAttributeMaxDynamicSharedMemorySize");

    extern __shared__ float history[]; // [kChaseSteps][kChaseBlock]: a thread's steps are a column

    const int i = blockIdx.x * kChaseBlock + threadIdx.x;
    unsigned sector = chase_first(i / 32, sectors);
    for (int s = 0; s < kChaseSteps; ++s) {
        const float v = chase_load(table, sector);
        history[s * kChaseBlock + threadIdx.x] = v;
        sector = chase_next(sector, v, sectors);
    }

    float partial[PARTIALS];
#pragma unroll
    for (int j = 0; j < PARTIALS; ++j) partial[j] = 0.0f;
    for (int s = 0; s < kChaseSteps; s += PARTIALS) {
#pragma unroll
        for (int j = 0; j < PARTIALS; ++j) partial[j] += history[(s + j) * kChaseBlock + threadIdx.x];
    }
    float total = 0.0f;
#pragma unroll
    for (int j = 0; j < PARTIALS; ++j) total += partial[j];
    if (i < n) out[i] = total;
}
