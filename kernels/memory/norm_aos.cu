// Demonstrates: array-of-structures access. Each thread reads one 12-byte float3, so a warp's three scalar
// loads stride by 12 bytes and each one spans 384 bytes of which it uses a third (compare norm_soa.cu).

/// out[i] = |points[i]| (Euclidean norm) for i < n; points is n interleaved (x, y, z) triples.
/// Launch with at most 256 threads per block and grid ceil(n / blockDim.x).
extern "C" __global__ void __launch_bounds__(256)
norm_aos(const float3* __restrict__ points, float* __restrict__ out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float3 p = points[i];
    out[i] = sqrtf(p.x * p.x + p.y * p.y + p.z * p.z);
}
