// Demonstrates: vectorised access: each thread moves one float4 (16 bytes) with a single 128-bit load and
// store, a quarter of the memory instructions of a scalar copy. The last n % 4 elements are copied as floats.

/// out[i] = in[i] for i < n. in and out must be 16-byte aligned (cudaMalloc gives 256).
/// Launch with at most 256 threads per block and grid ceil(ceil(n / 4) / blockDim.x).
extern "C" __global__ void __launch_bounds__(256)
copy_float4(const float* __restrict__ in, float* __restrict__ out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int vector_count = n / 4;
    if (i < vector_count) reinterpret_cast<float4*>(out)[i] = reinterpret_cast<const float4*>(in)[i];

    // The scalar tail: at most three elements, taken by the first threads of the grid.
    const int tail = vector_count * 4 + i;
    if (tail < n) out[tail] = in[tail];
}
