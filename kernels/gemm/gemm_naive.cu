// Demonstrates: one thread per output element reading A and B from global memory, without reuse through shared
// memory. A warp spans two 16-thread block rows: B loads are two 64-byte runs, A loads two broadcasts.

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
