// Demonstrates: access regressions the static tier predicts from PTX, without a GPU. Each kernel
// is written well with PLANTED 0 (tests/baselines/planted_accesses was recorded so) and with the
// regression planted with PLANTED 1 (tests/suites/planted_accesses.yaml), which must fail naming
// the predicted metric and the line below.
#ifndef PLANTED
#define PLANTED 0
#endif

// A transpose through a padded shared tile (both global sides coalesced); planted: the tile
// written straight to out[], column by column, so each warp's store touches 32 sectors.
extern "C" __global__ void __launch_bounds__(256) planted_transpose(const float* in, float* out, int m, int n)
{
    __shared__ float tile[32][33];
    const int col = blockIdx.x * 32 + threadIdx.x, row = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8)
        if (row + j < m && col < n) tile[threadIdx.y + j][threadIdx.x] = in[(row + j) * n + col];
    __syncthreads();
    const int ocol = blockIdx.y * 32 + threadIdx.x, orow = blockIdx.x * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) {
#if PLANTED
        if (row + j < m && col < n) out[col * m + row + j] = tile[threadIdx.y + j][threadIdx.x];
#else
        if (orow + j < n && ocol < m) out[(orow + j) * m + ocol] = tile[threadIdx.x][threadIdx.y + j];
#endif
    }
}

// C = A A^T through a shared tile of A read by column; planted: the tile without its padding
// column, so a column read hits one bank 32 times.
extern "C" __global__ void __launch_bounds__(1024) planted_aat(const float* a, float* c, int n)
{
#if PLANTED
    __shared__ float tile[32][32];
#else
    __shared__ float tile[32][33];
#endif
    const int i = blockIdx.y * 32 + threadIdx.y, j = blockIdx.x * 32 + threadIdx.x;
    float sum = 0.0f;
    for (int k0 = 0; k0 < n; k0 += 32) {
        tile[threadIdx.y][threadIdx.x] = a[(blockIdx.x * 32 + threadIdx.y) * n + k0 + threadIdx.x];
        __syncthreads();
        for (int k = 0; k < 32; ++k) sum += a[i * n + k0 + k] * tile[threadIdx.x][k];
        __syncthreads();
    }
    c[i * n + j] = sum;
}

// The length of n 3-vectors, stored as three planes (SoA); planted: as an array of structs (AoS),
// so each of the three loads strides 12 bytes.
extern "C" __global__ void __launch_bounds__(256) planted_layout(const float* p, float* len, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
#if PLANTED
    const float x = p[3 * i], y = p[3 * i + 1], z = p[3 * i + 2];
#else
    const float x = p[i], y = p[n + i], z = p[2 * n + i];
#endif
    len[i] = sqrtf(x * x + y * y + z * z);
}

// A copy; planted: the load one element off, so each warp's load straddles two 128-byte lines.
extern "C" __global__ void __launch_bounds__(256) planted_offset(const float* in, float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
#if PLANTED
    if (i < n) out[i] = in[i + 1];
#else
    if (i < n) out[i] = in[i];
#endif
}

// A float4 copy; planted: the vector load split into four scalar loads 16 bytes apart per lane.
extern "C" __global__ void __launch_bounds__(256) planted_vector(const float* in, float4* out, int n4)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n4) return;
#if PLANTED
    const float4 v = make_float4(in[4 * i], in[4 * i + 1], in[4 * i + 2], in[4 * i + 3]);
#else
    const float4 v = reinterpret_cast<const float4*>(in)[i];
#endif
    out[i] = v;
}

// A block sum by sequential addressing (active threads read consecutive words); planted: by
// interleaved addressing, index = 2 * stride * tid, whose accesses collide in banks.
extern "C" __global__ void __launch_bounds__(256) planted_reduce(const float* in, float* sums, int n)
{
    __shared__ float partial[256];
    const int tid = threadIdx.x, i = blockIdx.x * 256 + tid;
    partial[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
#if PLANTED
    for (int stride = 1; stride < 256; stride *= 2) {
        const int index = 2 * stride * tid;
        if (index < 256) partial[index] += partial[index + stride];
        __syncthreads();
    }
#else
    for (int stride = 128; stride > 0; stride /= 2) {
        if (tid < stride) partial[tid] += partial[tid + stride];
        __syncthreads();
    }
#endif
    if (tid == 0) sums[blockIdx.x] = partial[0];
}
