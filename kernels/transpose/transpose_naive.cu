// Demonstrates: transpose straight through global memory. Each warp reads one row segment (coalesced)
// and writes one column segment, so the stores are strided by the height and touch 32 sectors per warp.

/// out[N x M] = in[M x N]^T, row-major, fp32.
/// TILE: edge of the square tile one block covers; BLOCK_ROWS: block height, each thread handles
/// TILE / BLOCK_ROWS rows. Launch with block (TILE, BLOCK_ROWS), grid (ceil(N / TILE), ceil(M / TILE)).
template <int TILE, int BLOCK_ROWS>
__global__ void __launch_bounds__(TILE * BLOCK_ROWS)
transpose_naive(const float* __restrict__ in, float* __restrict__ out, int m, int n)
{
    static_assert(TILE % BLOCK_ROWS == 0, "each thread handles a whole number of rows");

    const int col = blockIdx.x * TILE + threadIdx.x;
    const int row = blockIdx.y * TILE + threadIdx.y;
    if (col >= n) return;
#pragma unroll
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        if (row + j < m) out[col * m + row + j] = in[(row + j) * n + col];
}
