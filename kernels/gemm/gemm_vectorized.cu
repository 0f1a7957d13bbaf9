// Demonstrates: vectorised access on top of 2D block tiling: tiles move as float4 (128-bit) global loads,
// shared reads and global stores; edges, and rows whose length is not a multiple of 4, fall back to scalars.

/// Four elements of row-major `matrix` (cols columns) starting at (row, col), zero outside rows x cols.
/// One 128-bit load when the whole quad is inside and 16-byte aligned (aligned rows: cols % 4 == 0).
__device__ __forceinline__ float4 load_quad(const float* __restrict__ matrix, int rows, int cols, int row,
                                            int col, bool aligned_rows)
{
    if (aligned_rows && row < rows && col + 3 < cols)
        return *reinterpret_cast<const float4*>(matrix + row * cols + col);
    float4 q;
    q.x = (row < rows && col + 0 < cols) ? matrix[row * cols + col + 0] : 0.0f;
    q.y = (row < rows && col + 1 < cols) ? matrix[row * cols + col + 1] : 0.0f;
    q.z = (row < rows && col + 2 < cols) ? matrix[row * cols + col + 2] : 0.0f;
    q.w = (row < rows && col + 3 < cols) ? matrix[row * cols + col + 3] : 0.0f;
    return q;
}

/// C[M x N] = A[M x K] * B[K x N], row-major, fp32; a, b, c 16-byte aligned (cudaMalloc gives 256).
/// BM, BN: rows and columns of C per block; BK: depth of the tiles staged per step (a multiple of 4);
/// TM, TN: rows and columns of C per thread (multiples of 4), so a block has (BM / TM) * (BN / TN) threads.
/// Launch with block ((BM / TM) * (BN / TN)) and grid (ceil(N / BN), ceil(M / BM)); any M, N, K.
template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
gemm_vectorized(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                int m, int n, int k)
{
    constexpr int kThreads = (BM / TM) * (BN / TN);
    // A is stored transposed, k-major, so a thread's TM values of one k are contiguous; 4 floats of padding
    // keep rows 16-byte aligned and put the two k-quads a warp stores into different banks.
    constexpr int kAPitch = BM + 4;
    static_assert(BM % TM == 0 && BN % TN == 0, "TM and TN must divide BM and BN");
    static_assert(BK % 4 == 0 && TM % 4 == 0 && TN % 4 == 0 && BN % 4 == 0, "tiles move in float4 quads");
    static_assert(kThreads <= 1024, "a block holds at most 1024 threads");
    static_assert((BK * kAPitch + BK * BN) * sizeof(float) <= 48 * 1024,
                  "static shared memory is limited to 48 KiB");

    __shared__ __align__(16) float a_tile_t[BK][kAPitch];
    __shared__ __align__(16) float b_tile[BK][BN];

    const int tid = threadIdx.x;
    const int thread_col = tid % (BN / TN);
    const int thread_row = tid / (BN / TN);
    const int block_row = blockIdx.y * BM;
    const int block_col = blockIdx.x * BN;
    // Grid-uniform: when a row length is not a multiple of 4, no quad of that matrix is 16-byte aligned.
    const bool a_rows_aligned = k % 4 == 0;
    const bool b_rows_aligned = n % 4 == 0;

    float acc[TM][TN] = {};
    for (int t = 0; t < k; t += BK) {
#pragma unroll
        for (int e = tid; e < BM * BK / 4; e += kThreads) {
            const int row = e / (BK / 4);
            const int quad = e % (BK / 4) * 4;
            const float4 q = load_quad(a, m, k, block_row + row, t + quad, a_rows_aligned);
            a_tile_t[quad + 0][row] = q.x;
            a_tile_t[quad + 1][row] = q.y;
            a_tile_t[quad + 2][row] = q.z;
            a_tile_t[quad + 3][row] = q.w;
        }
#pragma unroll
        for (int e = tid; e < BK * BN / 4; e += kThreads) {
            const int row = e / (BN / 4);
            const int quad = e % (BN / 4) * 4;
            *reinterpret_cast<float4*>(&b_tile[row][quad]) =
                load_quad(b, k, n, t + row, block_col + quad, b_rows_aligned);
        }
        __syncthreads();

#pragma unroll
        for (int d = 0; d < BK; ++d) {
            float a_values[TM];
            float b_values[TN];
#pragma unroll
            for (int r = 0; r < TM; r += 4) {
                const float4 q = *reinterpret_cast<const float4*>(&a_tile_t[d][thread_row * TM + r]);
                a_values[r] = q.x, a_values[r + 1] = q.y, a_values[r + 2] = q.z, a_values[r + 3] = q.w;
            }
#pragma unroll
            for (int j = 0; j < TN; j += 4) {
                const float4 q = *reinterpret_cast<const float4*>(&b_tile[d][thread_col * TN + j]);
                b_values[j] = q.x, b_values[j + 1] = q.y, b_values[j + 2] = q.z, b_values[j + 3] = q.w;
            }
#pragma unroll
            for (int r = 0; r < TM; ++r)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[r][j] += a_values[r] * b_values[j];
        }
        __syncthreads();
    }

#pragma unroll
    for (int r = 0; r < TM; ++r) {
        const int row = block_row + thread_row * TM + r;
        if (row >= m) break;
#pragma unroll
        for (int j = 0; j < TN; j += 4) {
            const int col = block_col + thread_col * TN + j;
            if (b_rows_aligned && col + 3 < n) {
                *reinterpret_cast<float4*>(c + row * n + col) =
                    make_float4(acc[r][j], acc[r][j + 1], acc[r][j + 2], acc[r][j + 3]);
            } else {
#pragma unroll
                for (int x = 0; x < 4; ++x)
                    if (col + x < n) c[row * n + col + x] = acc[r][j + x];
            }
        }
    }
}
