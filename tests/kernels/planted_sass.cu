// Demonstrates: regressions the static tier reads from the SASS, without a GPU. Each kernel is
// written well with PLANTED 0 (tests/baselines/planted_sass was recorded so) and with the
// regression planted with PLANTED 1 (tests/suites/planted_sass.yaml), which must fail the SASS gate
// naming the kernel, the line below and both forms (docs/sass.md).
#include <mma.h>

#ifndef PLANTED
#define PLANTED 0
#endif

// A float4 copy; planted: the vector load split into four scalar loads (LDG.E.128 -> 4 x LDG.E).
extern "C" __global__ void __launch_bounds__(256) sass_vector_copy(const float* in, float4* out, int n4)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n4) return;
#if PLANTED
    out[i] = make_float4(in[4 * i], in[4 * i + 1], in[4 * i + 2], in[4 * i + 3]);
#else
    out[i] = reinterpret_cast<const float4*>(in)[i];
#endif
}

// C = A B (n x n, A row-major, B column-major, half inputs, fp32 sums), one warp per 16 x 16 tile
// of C on the tensor cores (HMMA); planted: the same products summed lane by lane in FP32 (FFMA),
// as a kernel falls back when its types no longer fit a WMMA shape.
extern "C" __global__ void __launch_bounds__(32) sass_wmma_gemm(const __half* a, const __half* b, float* c, int n)
{
    using namespace nvcuda;
    const int row0 = blockIdx.y * 16, col0 = blockIdx.x * 16;
#if PLANTED
    for (int e = threadIdx.x; e < 256; e += 32) {
        float sum = 0.0f;
#pragma unroll 1
        for (int k = 0; k < n; ++k)
            sum += __half2float(a[(row0 + e / 16) * n + k]) * __half2float(b[(col0 + e % 16) * n + k]);
        c[(row0 + e / 16) * n + col0 + e % 16] = sum;
    }
#else
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

// Each thread sorts its eight keys into eight buckets and writes the fullest bucket's count.
// Counted by an unrolled compare against every bucket, the counts stay in registers; planted: the
// bucket indexed by the key at run time, which registers cannot be, so the counts live in local
// memory (STL, LDL).
extern "C" __global__ void __launch_bounds__(256) sass_local_buckets(const int* keys, float* fullest, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int count[8] = {};
#pragma unroll
    for (int j = 0; j < 8; ++j) {
        const int bucket = keys[j * n + i] & 7;
#if PLANTED
        ++count[bucket];
#else
#pragma unroll
        for (int b = 0; b < 8; ++b) count[b] += bucket == b;
#endif
    }
    int most = 0;
#pragma unroll
    for (int b = 0; b < 8; ++b) most = max(most, count[b]);
    fullest[i] = most;
}

// One block's tile of 128 float4 staged into shared memory, 16 bytes per thread: by an
// asynchronous copy (cp.async, LDGSTS on sm_80 and later) that overlaps the previous tile's sums;
// planted: by a plain load and store, which waits for the data before the store can issue.
__device__ void stage_tile(float4* slot, const float4* from)
{
#if PLANTED
    *slot = *from;
#else
    const unsigned shared = static_cast<unsigned>(__cvta_generic_to_shared(slot));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(shared), "l"(from) : "memory");
#endif
}

// The copies issued since the last commit become one group; then every group but the newest is
// waited for.
__device__ void commit_copies()
{
#if !PLANTED
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

__device__ void wait_all_but_newest()
{
#if !PLANTED
    asm volatile("cp.async.wait_group 1;\n" ::: "memory");
#endif
}

// Sums, per thread, its neighbour's float4 over `tiles` tiles of 128 float4, two tiles in flight:
// tile t + 1 is copied while tile t is summed.
extern "C" __global__ void __launch_bounds__(128) sass_async_pipeline(const float4* in, float* out, int tiles)
{
    __shared__ float4 stage[2][128];
    const float4* base = in + blockIdx.x * tiles * 128;
    stage_tile(&stage[0][threadIdx.x], base + threadIdx.x);
    commit_copies();
    float sum = 0.0f;
#pragma unroll 1
    for (int t = 0; t < tiles; ++t) {
        if (t + 1 < tiles) stage_tile(&stage[(t + 1) & 1][threadIdx.x], base + (t + 1) * 128 + threadIdx.x);
        commit_copies();
        wait_all_but_newest();
        __syncthreads();
        const float4 v = stage[t & 1][(threadIdx.x + 1) % 128];
        sum += v.x + v.y + v.z + v.w;
        __syncthreads();
    }
    out[blockIdx.x * 128 + threadIdx.x] = sum;
}
