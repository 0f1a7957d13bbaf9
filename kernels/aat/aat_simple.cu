// Demonstrates: C = A * A^T straight from global memory (CUDA Best Practices Guide, "simpleMultiply").
// Reads of a[col * k + i] are strided by k across a warp, so each warp load touches 32 separate sectors.

/// C[N x N] = A[N x K] * A^T, row-major, fp32. Launch with a 2D block of at most 1024 threads and
/// grid (ceil(N / blockDim.x), ceil(N / blockDim.y)); any N, K.
extern "C" __global__ void __launch_bounds__(1024)
aat_simple(const float* __restrict__ a, float* __restrict__ c, int n, int k)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= n || col >= n) return;

    float sum = 0.0f;
    // a[row * k + i] is a broadcast within the warp; a[col * k + i] is the uncoalesced, strided read.
    for (int i = 0; i < k; ++i) sum += a[row * k + i] * a[col * k + i];
    c[row * n + col] = sum;
}
