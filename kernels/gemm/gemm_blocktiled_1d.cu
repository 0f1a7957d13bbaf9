// Demonstrates: 1D block tiling. Each thread computes TM outputs of one column of C, so every value it reads
// from the B tile in shared memory is reused TM times from a register: fewer shared loads per FMA.

/// C[M x N] = A[M x K] * B[K x N], row-major, fp32.
/// BM, BN: rows and columns of C per block; BK: depth of the A and B tiles staged per step;
/// TM: consecutive rows of C per thread, so a block has (BM / TM) * BN threads.
/// Launch with block ((BM / TM) * BN) and grid (ceil(N / BN), ceil(M / BM)). Tiles are zero-padded at the
/// edges, so M, N and K need not be multiples of the tile sizes.
template <int BM, int BN, int BK, int TM>
__global__ void __launch_bounds__((BM / TM) * BN)
gemm_blocktiled_1d(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                   int m, int n, int k)
{
    constexpr int kThreads = (BM / TM) * BN;
    static_assert(BM % TM == 0, "TM must divide BM");
    static_assert(BN % 32 == 0, "a warp must share one thread row, so the A-tile reads are broadcasts");
    static_assert(kThreads <= 1024, "a block holds at most 1024 threads");
    static_assert((BM * BK + BK * BN) * sizeof(float) <= 48 * 1024,
                  "static shared memory is limited to 48 KiB");

    __shared__ float a_tile[BM][BK];
    __shared__ float b_tile[BK][BN];

    const int tid = threadIdx.x;
    const int thread_col = tid % BN;
    const int thread_row = tid / BN; // this thread owns tile rows thread_row * TM ... + TM - 1
    const int block_row = blockIdx.y * BM;
    const int block_col = blockIdx.x * BN;

    float acc[TM];
#pragma unroll
    for (int r = 0; r < TM; ++r) acc[r] = 0.0f;

    for (int t = 0; t < k; t += BK) {
        // Consecutive threads load consecutive elements of a tile row: coalesced as far as the row reaches.
#pragma unroll
        for (int e = tid; e < BM * BK; e += kThreads) {
            const int row = block_row + e / BK;
            const int col = t + e % BK;
            a_tile[e / BK][e % BK] = (row < m && col < k) ? a[row * k + col] : 0.0f;
        }
#pragma unroll
        for (int e = tid; e < BK * BN; e += kThreads) {
            const int row = t + e / BN;
            const int col = block_col + e % BN;
            b_tile[e / BN][e % BN] = (row < k && col < n) ? b[row * n + col] : 0.0f;
        }
        __syncthreads();

#pragma unroll
        for (int d = 0; d < BK; ++d) {
            const float b_value = b_tile[d][thread_col]; // one shared load, TM uses
#pragma unroll
            for (int r = 0; r < TM; ++r) acc[r] += a_tile[thread_row * TM + r][d] * b_value;
        }
        __syncthreads();
    }

    const int col = block_col + thread_col;
#pragma unroll
    for (int r = 0; r < TM; ++r) {
        const int row = block_row + thread_row * TM + r;
        if (row < m && col < n) c[row * n + col] = acc[r];
    }
}
