// Demonstrates: a shared-memory occupancy staircase set by the launch. Each thread keeps `slots` running
// sums in dynamic shared memory (slots KiB per 256-thread block); an sm_90 SM holds 228 KiB and reserves
// 1 KiB per block, so one block fewer fits at each step: 8 blocks up to 27 KiB, 7 from 28, 6 from 32, ...

constexpr int kBlock = 256;
constexpr int kSteps = 48;

/// out[i] = the sum of in[] along a data-dependent walk of kSteps loads that starts at i, for i < n,
/// accumulated in `slots` sums in dynamic shared memory. Launch with block (256), grid ceil(n / 256),
/// shared_bytes at least slots * 1024; n and slots must be positive.
extern "C" __global__ void __launch_bounds__(kBlock)
shared_staircase(const float* __restrict__ in, float* __restrict__ out, int n, int slots)
{
    extern __shared__ float sums[]; // [slots][kBlock]: a thread's sums are a column
    float* mine = sums + threadIdx.x;
    for (int j = 0; j < slots; ++j) mine[j * kBlock] = 0.0f;

    const int i = blockIdx.x * kBlock + threadIdx.x;
    unsigned at = static_cast<unsigned>(i < n ? i : 0);
    for (int s = 0; s < kSteps; ++s) {
        const float v = in[at];
        mine[(s % slots) * kBlock] += v;
        at = (at * 1664525u + 1013904223u + __float_as_uint(v)) % static_cast<unsigned>(n);
    }

    float total = 0.0f;
    for (int j = 0; j < slots && j < kSteps; ++j) total += mine[j * kBlock];
    if (i < n) out[i] = total;
}
