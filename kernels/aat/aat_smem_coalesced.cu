// Demonstrates: C = A * A^T with both operands staged through shared memory by coalesced row reads.
// The A^T tile is stored column-wise, so its store hits one bank 32 times per warp (32-way conflict).

/// C[N x N] = A[N x K] * A^T, row-major, fp32.
/// TILE: tile edge; launch with block (TILE, TILE) and grid (ceil(N / TILE), ceil(N / TILE)).
/// Tiles are zero-padded at the edges, so N and K need not be multiples of TILE.
template <int TILE>
__global__ void __launch_bounds__(TILE * TILE)
aat_smem_coalesced(const float* __restrict__ a, float* __restrict__ c, int n, int k)
{
    static_assert(TILE * TILE <= 1024, "a block holds at most 1024 threads");
    static_assert(2 * TILE * TILE * sizeof(float) <= 48 * 1024, "static shared memory is limited to 48 KiB");

    __shared__ float a_tile[TILE][TILE];          // rows of A for this block's output rows
    __shared__ float transposed_tile[TILE][TILE]; // rows of A for this block's output columns, transposed

    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;
    const int col_row = blockIdx.x * TILE + ty; // the row of A that this thread loads for the A^T tile

    float sum = 0.0f;
    for (int t = 0; t < k; t += TILE) {
        a_tile[ty][tx] = (row < n && t + tx < k) ? a[row * k + t + tx] : 0.0f;
        // Coalesced read along a row of A; the transposed store walks down a column of the tile, and with
        // a row pitch of TILE (= 32) floats every thread of the warp lands in the same bank.
        transposed_tile[tx][ty] = (col_row < n && t + tx < k) ? a[col_row * k + t + tx] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int i = 0; i < TILE; ++i) sum += a_tile[ty][i] * transposed_tile[i][tx];
        __syncthreads();
    }
    if (row < n && col < n) c[row * n + col] = sum;
}
