// Demonstrates: local memory. The running sums sit in an array indexed with a run-time value, which registers
// cannot hold, so it goes to the stack frame (local memory: DRAM behind L1); each update is a load + store.
#include "occupancy/chase.cuh"

/// out[i] = sum of the kChaseSteps values thread i loads along its warp's chase (as occupancy_registers),
/// with step s added to partial[s % partials]; partials in [1, kChaseSteps].
/// Launch with block (kChaseBlock), grid ceil(n / kChaseBlock); sectors = table elements / 8, a power of two.
extern "C" __global__ void __launch_bounds__(kChaseBlock)
occupancy_local_array(const float* __restrict__ table, float* __restrict__ out, int n, unsigned sectors,
                      int partials)
{
    const int i = blockIdx.x * kChaseBlock + threadIdx.x;
    unsigned sector = chase_first(i / 32, sectors);

    float partial[kChaseSteps];
    for (int j = 0; j < partials; ++j) partial[j] = 0.0f;

    for (int s = 0; s < kChaseSteps; ++s) {
        const float v = chase_load(table, sector);
        partial[s % partials] += v; // the run-time index is what forces the array out of registers
        sector = chase_next(sector, v, sectors);
    }

    float total = 0.0f;
    for (int j = 0; j < partials; ++j) total += partial[j];
    if (i < n) out[i] = total;
}
