// Demonstrates: a register-limited occupancy cliff set by two defines. At 256 threads per block on
// sm_90, <= 32 registers per thread let 8 blocks reside (100 %); 33..40 registers allow 6 (75 %).
//
// PARTIALS:   running sums each thread keeps live across the whole loop; more sums want more
//             registers (16 take 40 when allowed, and squeeze into 32 without spilling). Divides 48.
// MIN_BLOCKS: blocks per SM that __launch_bounds__ asks the compiler to leave room for, which caps
//             the register budget: 8 -> at most 32 registers, 6 -> at most 40.
#ifndef PARTIALS
#define PARTIALS 4
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 8
#endif

constexpr int kBlock = 256;
constexpr int kSteps = 48;

/// out[i] = a mix of in[] along a data-dependent walk that starts at i, for i < n.
/// Launch with block (256), grid ceil(n / 256); n must be positive.
__global__ void __launch_bounds__(kBlock, MIN_BLOCKS)
register_cliff(const float* __restrict__ in, float* __restrict__ out, int n)
{
    const int i = blockIdx.x * kBlock + threadIdx.x;
    if (i >= n) return;
    float partial[PARTIALS];
#pragma unroll
    for (int j = 0; j < PARTIALS; ++j) partial[j] = 0.0f;

    unsigned at = static_cast<unsigned>(i);
    for (int s = 0; s < kSteps; s += PARTIALS) {
#pragma unroll
        for (int j = 0; j < PARTIALS; ++j) {
            const float v = in[at % static_cast<unsigned>(n)];
            partial[j] = partial[j] * 0.5f + v;
            at = at * 1664525u + 1013904223u + static_cast<unsigned>(v * 16.0f);
        }
    }

    float total = 0.0f;
#pragma unroll
    for (int j = 0; j < PARTIALS; ++j) total += partial[j] * static_cast<float>(j + 1);
    out[i] = total;
}
