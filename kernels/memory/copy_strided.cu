// Demonstrates: strided reads. out[i] = in[i * stride]: a warp's load spans 128 * stride bytes, so the used
// fraction of each 32-byte sector falls as 1 / stride up to stride 8, where each element costs a sector.

/// out[i] = in[i * stride] for i < n; in holds n * stride elements (fewer than 2^31).
/// Launch with at most 256 threads per block and grid ceil(n / blockDim.x).
extern "C" __global__ void __launch_bounds__(256)
copy_strided(const float* __restrict__ in, float* __restrict__ out, int n, int stride)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i * stride];
}
