// Demonstrates: transpose through a shared tile padded to TILE x (TILE + 1): both global sides coalesced,
// and the extra column shifts each tile row by one bank, so reading a tile column is conflict-free.

/// out[N x M] = in[M x N]^T, row-major, fp32.
/// TILE: tile edge; BLOCK_ROWS: block height, each thread moves TILE / BLOCK_ROWS elements.
/// Launch with block (TILE, BLOCK_ROWS), grid (ceil(N / TILE), ceil(M / TILE)).
template <int TILE, int BLOCK_ROWS>
__global__ void __launch_bounds__(TILE * BLOCK_ROWS)
transpose_smem_padded(const float* __restrict__ in, float* __restrict__ out, int m, int n)
{
    static_assert(TILE % BLOCK_ROWS == 0, "each thread handles a whole number of rows");
    static_assert(TILE * (TILE + 1) * sizeof(float) <= 48 * 1024,
                  "static shared memory is limited to 48 KiB");

    __shared__ float tile[TILE][TILE + 1];

    int col = blockIdx.x * TILE + threadIdx.x;
    int row = blockIdx.y * TILE + threadIdx.y;
#pragma unroll
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        if (row + j < m && col < n) tile[threadIdx.y + j][threadIdx.x] = in[(row + j) * n + col];
    __syncthreads();

    col = blockIdx.y * TILE + threadIdx.x;
    row = blockIdx.x * TILE + threadIdx.y;
#pragma unroll
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        if (row + j < n && col < m) out[(row + j) * m + col] = tile[threadIdx.x][threadIdx.y + j];
}
