// bf16 tensor-core GEMM with fp32 accumulation, C = A * B (row-major; M, N multiples of TILE,
// K a multiple of 32). One block computes a TILE x TILE tile of C with (TILE / 16)^2 warps, each
// warp one 16 x 16 WMMA accumulator. A and B are staged through shared memory in k-slabs of 32;
// rows are padded by 8 bf16 (16 bytes) so the fragment loads of consecutive rows fall in
// different banks.
//
// TILE (16, 32 or 64) is the swept template parameter: it sets the warps per block, the shared
// memory per block and so the occupancy, and how often A and B are re-read from global memory.
#include <cuda_bf16.h>
#include <mma.h>

template <int TILE>
__global__ void __launch_bounds__((TILE / 16) * (TILE / 16) * 32)
wmma_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C, int M, int N, int K)
{
    using namespace nvcuda;
    static_assert(TILE % 16 == 0 && TILE >= 16 && TILE <= 64, "TILE is 16, 32 or 64");
    constexpr int KT = 32;                 // k-slab staged per step
    constexpr int PAD = 8;                 // bf16 elements of row padding (16 bytes)
    constexpr int WARPS_PER_ROW = TILE / 16;
    __shared__ __align__(32) __nv_bfloat16 As[TILE][KT + PAD];
    __shared__ __align__(32) __nv_bfloat16 Bs[KT][TILE + PAD];

    const int warp = threadIdx.x / 32;
    const int warp_row = warp / WARPS_PER_ROW, warp_col = warp % WARPS_PER_ROW;
    const int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k0 = 0; k0 < K; k0 += KT) {
        // Consecutive threads read consecutive elements of a row: coalesced.
        for (int i = threadIdx.x; i < TILE * KT; i += blockDim.x)
            As[i / KT][i % KT] = A[(row0 + i / KT) * K + k0 + i % KT];
        for (int i = threadIdx.x; i < KT * TILE; i += blockDim.x)
            Bs[i / TILE][i % TILE] = B[(k0 + i / TILE) * N + col0 + i % TILE];
        __syncthreads();
        for (int kk = 0; kk < KT; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a;
            wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> b;
            wmma::load_matrix_sync(a, &As[warp_row * 16][kk], KT + PAD);
            wmma::load_matrix_sync(b, &Bs[kk][warp_col * 16], TILE + PAD);
            wmma::mma_sync(acc, a, b, acc);
        }
        __syncthreads();
    }
    wmma::store_matrix_sync(&C[(row0 + warp_row * 16) * N + col0 + warp_col * 16], acc, N, wmma::mem_row_major);
}
