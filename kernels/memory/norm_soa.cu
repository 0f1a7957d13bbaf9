// Demonstrates: structure-of-arrays access. x, y and z live in separate arrays, so each of the warp's three
// loads is 128 contiguous bytes, fully used (compare norm_aos.cu).

/// out[i] = |(x[i], y[i], z[i])| for i < n, with x = coords, y = coords + n, z = coords + 2 n.
/// Launch with at most 256 threads per block and grid ceil(n / blockDim.x).
extern "C" __global__ void __launch_bounds__(256)
norm_soa(const float* __restrict__ coords, float* __restrict__ out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float x = coords[i];
    const float y = coords[n + i];
    const float z = coords[2 * n + i];
    out[i] = sqrtf(x * x + y * y + z * z);
}
