// Demonstrates: the register limiter and its cliff. At 256 threads per block, <= 32 registers per thread let
// 8 blocks (100 %) reside on an sm_80 / sm_90 SM; 33..40 registers allow only 6 blocks (75 %).
#include "occupancy/chase.cuh"

/// out[i] = sum of the kChaseSteps values thread i loads along its warp's chase, for i < n.
/// PARTIALS: running sums held in registers across the whole chase (step s adds to sum s % PARTIALS); more
///           sums need more registers but buy nothing, since the chase is latency-bound. Divides kChaseSteps.
/// MIN_BLOCKS: blocks per SM that __launch_bounds__ asks the compiler to leave room for, which pins the
///             register budget: 8 -> at most 32 registers, 6 -> at most 40 (64 K registers per SM).
/// Launch with block (kChaseBlock), grid ceil(n / kChaseBlock); sectors = table elements / 8, a power of two.
template <int PARTIALS, int MIN_BLOCKS>
__global__ void __launch_bounds__(kChaseBlock, MIN_BLOCKS)
occupancy_registers(const float* __restrict__ table, float* __restrict__ out, int n, unsigned sectors)
{
    static_assert(kChaseSteps % PARTIALS == 0, "PARTIALS must divide kChaseSteps");

    const int i = blockIdx.x * kChaseBlock + threadIdx.x;
    unsigned sector = chase_first(i / 32, sectors);

    float partial[PARTIALS];
#pragma unroll
    for (int j = 0; j < PARTIALS; ++j) partial[j] = 0.0f;

    // Threads past n still walk the chase: chase_next shuffles across the whole warp.
    for (int s = 0; s < kChaseSteps; s += PARTIALS) {
#pragma unroll
        for (int j = 0; j < PARTIALS; ++j) {
            const float v = chase_load(table, sector);
            partial[j] += v;
            sector = chase_next(sector, v, sectors);
        }
    }

    float total = 0.0f;
#pragma unroll
    for (int j = 0; j < PARTIALS; ++j) total += partial[j];
    if (i < n) out[i] = total;
}
