// Demonstrates: edits that leave the SASS gate's pathologies as they were. With TWIN 0 each kernel
// is as tests/baselines/benign_sass was recorded; with TWIN 1 (tests/suites/benign_sass.yaml) its
// benign twin, which must pass: locals renamed, lines moved, an added bounds check. The vector
// load stays 128 bits wide, the tensor cores and the asynchronous copies stay, and no local
// memory appears; instruction counts that move are drift, reported.
#include <mma.h>

#ifndef TWIN
#define TWIN 0
#endif

// A float4 copy; twin: a bounds check added, locals renamed.
extern "C" __global__ void __launch_bounds__(256) benign_vector_copy(const float4* in, float4* out, int n4)
{
#if TWIN
    const int element = blockIdx.x * blockDim.x + threadIdx.x;
    if (element >= n4) return;
    out[element] = in[element];
#else
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i];
#endif
}

// C = A B on the tensor cores, one warp per 16 x 16 tile (tests/kernels/planted_sass.cu); twin:
// fragments renamed, lines moved.
extern "C" __global__ void __launch_bounds__(32) benign_wmma_gemm(const __half* a, const __half* b, float* c, int n)
{
    using namespace nvcuda;
#if TWIN
    const int tile_row = blockIdx.y * 16;
    const int tile_col = blockIdx.x * 16;

    // Sixteen columns of A and rows of B per step.
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> sums;
    wmma::fill_fragment(sums, 0.0f);
    for (int k = 0; k < n; k += 16) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a_tile;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b_tile;

        wmma::load_matrix_sync(a_tile, a + tile_row * n + k, n);
        wmma::load_matrix_sync(b_tile, b + tile_col * n + k, n);
        wmma::mma_sync(sums, a_tile, b_tile, sums);
    }

    wmma::store_matrix_sync(c + tile_row * n + tile_col, sums, n, wmma::mem_row_major);
#else
    const int row0 = blockIdx.y * 16, col0 = blockIdx.x * 16;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k = 0; k < n; k += 16) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
        wmma::load_matrix_sync(fa, a + row0 * n + k, n);
        wmma::load_matrix_sync(fb, b + col0 * n + k, n);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(c + row0 * n + col0, acc, n, wmma::mem_row_major);
#endif
}

// One of eight inputs picked by a per-thread index through an unrolled select, the window in
// registers; twin: locals renamed, lines moved.
extern "C" __global__ void __launch_bounds__(256) benign_local_pick(const float* in, const int* pick, float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
#if TWIN
    float inputs[8];

#pragma unroll
    for (int slot = 0; slot < 8; ++slot) inputs[slot] = in[slot * n + i];

    const int wanted = pick[i] & 7;
    float chosen = 0.0f;
#pragma unroll
    for (int slot = 0; slot < 8; ++slot) chosen = slot == wanted ? inputs[slot] : chosen;
    out[i] = chosen;
#else
    float window[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) window[j] = in[j * n + i];
    const int s = pick[i] & 7;
    float picked = 0.0f;
#pragma unroll
    for (int j = 0; j < 8; ++j) picked = j == s ? window[j] : picked;
    out[i] = picked;
#endif
}

// A tile of 128 float4 staged by an asynchronous copy (cp.async: LDGSTS), two tiles in flight
// (tests/kernels/planted_sass.cu); twin: a bounds check added on the tiles copied and on the sums
// stored.
__device__ void copy_async(float4* slot, const float4* from)
{
    const unsigned shared = static_cast<unsigned>(__cvta_generic_to_shared(slot));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(shared), "l"(from) : "memory");
}

extern "C" __global__ void __launch_bounds__(128)
    benign_async_pipeline(const float4* in, float* out, int tiles, int n4)
{
    __shared__ float4 stage[2][128];
    const float4* base = in + blockIdx.x * tiles * 128;
    const int first = blockIdx.x * tiles * 128 + threadIdx.x;
#if TWIN
    if (first < n4) copy_async(&stage[0][threadIdx.x], base + threadIdx.x);
#else
    copy_async(&stage[0][threadIdx.x], base + threadIdx.x);
#endif
    asm volatile("cp.async.commit_group;\n" ::: "memory");
    float sum = 0.0f;
    for (int t = 0; t < tiles; ++t) {
#if TWIN
        if (t + 1 < tiles && first + (t + 1) * 128 < n4)
#else
        if (t + 1 < tiles)
#endif
            copy_async(&stage[(t + 1) & 1][threadIdx.x], base + (t + 1) * 128 + threadIdx.x);
        asm volatile("cp.async.commit_group;\ncp.async.wait_group 1;\n" ::: "memory");
        __syncthreads();
        const float4 v = stage[t & 1][(threadIdx.x + 1) % 128];
        sum += v.x + v.y + v.z + v.w;
        __syncthreads();
    }
    out[blockIdx.x * 128 + threadIdx.x] = sum;
}
