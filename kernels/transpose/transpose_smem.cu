// Demonstrates: transpose through a TILE x TILE shared tile, so global reads and writes are both coalesced.
// Reading a tile column back with a row pitch of 32 floats puts a whole warp in one bank: 32-way conflicts.

/// out[N x M] = in[M x N]^T, row-major, fp32.
/// TILE: tile edge (32 makes the conflict 32-way); BLOCK_ROWS: block height, each thread moves
/// TILE / BLOCK_ROWS elements. Launch with block (TILE, BLOCK_ROWS), grid (ceil(N / TILE), ceil(M / TILE)).
template <int TILE, int BLOCK_ROWS>
__global__ void __launch_bounds__(TILE * BLOCK_ROWS)
transpose_smem(const float* __restrict__ in, float* __restrict__ out, int m, int n)
{
    static_assert(TILE % BLOCK_ROWS == 0, "each thread handles a whole number of rows");
    static_assert(TILE * TILE * sizeof(float) <= 48 * 1024, "static shared memory is limited to 48 KiB");

    __shared__ float tile[TILE][TILE];

    int col = blockIdx.x * TILE + threadIdx.x;
    int row = blockIdx.y * TILE + threadIdx.y;
#pragma unroll
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        if (row + j < m && col < n) tile[threadIdx.y + j][threadIdx.x] = in[(row + j) * n + col];
    __syncthreads();

    // Swap the block coordinates: this block writes the tile to its mirrored position in out.
    col = blockIdx.y * TILE + threadIdx.x;
    row = blockIdx.x * TILE + threadIdx.y;
#pragma unroll
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        if (row + j < n && col < m) out[(row + j) * m + col] = tile[threadIdx.x][threadIdx.y + j];
}
