// Demonstrates: C = A * A^T with coalesced reads through shared memory, A^T tile padded to TILE + 1 columns.
// The padding shifts each tile row by one bank, so the column-wise store is conflict-free.

/// C[N x N] = A[N x K] * A^T, row-major, fp32.
/// TILE: tile edge; launch with block (TILE, TILE) and grid (ceil(N / TILE), ceil(N / TILE)).
/// Tiles are zero-padded at the edges, so N and K need not be multiples of TILE.
template <int TILE>
__global__ void __launch_bounds__(TILE * TILE)
aat_smem_padded(const float* __restrict__ a, float* __restrict__ c, int n, int k)
{
    static_assert(TILE * TILE <= 1024, "a block holds at most 1024 threads");
    static_assert((TILE * TILE + TILE * (TILE + 1)) * sizeof(float) <= 48 * 1024,
                  "static shared memory is limited to 48 KiB");

    __shared__ float a_tile[TILE][TILE];
    // One extra column: element [i][j] sits in bank (i * (TILE + 1) + j) % 32, so a column spans 32 banks.
    __shared__ float transposed_tile[TILE][TILE + 1];

    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;
    const int col_row = blockIdx.x * TILE + ty;

    float sum = 0.0f;
    for (int t = 0; t < k; t += TILE) {
        a_tile[ty][tx] = (row < n && t + tx < k) ? a[row * k + t + tx] : 0.0f;
        transposed_tile[tx][ty] = (col_row < n && t + tx < k) ? a[col_row * k + t + tx] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int i = 0; i < TILE; ++i) sum += a_tile[ty][i] * transposed_tile[i][tx];
        __syncthreads();
    }
    if (row < n && col < n) c[row * n + col] = sum;
}
