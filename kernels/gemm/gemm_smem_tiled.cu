// Demonstrates: shared-memory tiling. Each block stages TILE x TILE tiles of A and B in shared
// memory with coalesced loads, so every global element is read N / TILE times instead of N times.

/// C[M x N] = A[M x K] * B[K x N], row-major, fp32.
/// TILE: tile edge; launch with block (TILE, TILE) and grid (ceil(N / TILE), ceil(M / TILE)).
/// Edges are zero-padded in shared memory, so M, N, K need not be multiples of TILE.
template <int TILE>
__global__ void __launch_bounds__(TILE * TILE)
gemm_smem_tiled(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                int m, int n, int k)
{
    static_assert(TILE * TILE <= 1024, "a block holds at most 1024 threads");
    static_assert(2 * TILE * TILE * sizeof(float) <= 48 * 1024, "static shared memory is limited to 48 KiB");

    __shared__ float a_tile[TILE][TILE];
    __shared__ float b_tile[TILE][TILE];

    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;

    float sum = 0.0f;
    for (int t = 0; t < k; t += TILE) {
        a_tile[ty][tx] = (row < m && t + tx < k) ? a[row * k + t + tx] : 0.0f;
        b_tile[ty][tx] = (t + ty < k && col < n) ? b[(t + ty) * n + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int i = 0; i < TILE; ++i) sum += a_tile[ty][i] * b_tile[i][tx];
        __syncthreads();
    }
    if (row < m && col < n) c[row * n + col] = sum;
}
