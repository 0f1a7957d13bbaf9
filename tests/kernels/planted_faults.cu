// Demonstrates: kernels that fail on purpose, to show that a faulting or hanging case fails alone.
// scale is correct; scale_out_of_bounds writes far past its buffer; scale_spin never returns.

extern "C" __global__ void scale(const float* in, float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * in[i];
}

/// Same result, then one thread writes 64 GiB past the output: an illegal address.
extern "C" __global__ void scale_out_of_bounds(const float* in, float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * in[i];
    if (i == 0) out[(1ull << 34) + 7] = 1.0f;
}

/// Never finishes: the flag is never set, and volatile keeps the compiler from removing the loop.
extern "C" __global__ void scale_spin(const float* in, float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    volatile const float* flag = in;
    while (flag[0] < 1e30f) {
    }
    if (i < n) out[i] = 2.0f * in[i];
}

/// Computes the wrong answer: verification must catch it.
extern "C" __global__ void scale_wrong(const float* in, float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (i == n / 2) ? 0.0f : 2.0f * in[i];
}
