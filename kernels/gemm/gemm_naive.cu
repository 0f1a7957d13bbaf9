// Demonstrates: one thread per output element reading A and B straight from global memory.
// Loads of B are coalesced across a warp, loads of A are broadcast; no data reuse through shared memory.

/// C[M x N] = A[M x K] * B[K x N], row-major, fp32. Launch with a 2D block; any M, N, K.
extern "C" __global__ void gemm_naive(const float* __restrict__ a, const float* __restrict__ b,
                                      float* __restrict__ c, int m, int n, int k)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= m || col >= n) return;

    float sum = 0.0f;
    for (int i = 0; i < k; ++i) sum += a[row * k + i] * b[i * n + col];
    c[row * n + col] = sum;
}
