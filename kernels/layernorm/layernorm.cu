// Layer normalisation of `rows` rows of `cols` floats: out = (x - mean) * rstd * weight + bias,
// with the row's mean and rstd (1 / sqrt(variance + 1e-5)) kept for a backward pass. The same
// arithmetic in one kernel, in two passes (statistics, then normalise) and in three (mean, rstd,
// normalise), as real code splits it: each row's sums are taken by one warp in the same order in
// every version, so their outputs agree to the last few bits.

__device__ float warp_sum(float value)
{
    for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
    return value;
}

/// The row of the warp that runs this thread, or -1 past the last row.
__device__ int warp_row(int rows)
{
    const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    return row < rows ? row : -1;
}

__device__ float row_mean_of(const float* x, int cols, int lane)
{
    float sum = 0.0f;
    for (int i = lane; i < cols; i += 32) sum += x[i];
    return warp_sum(sum) / cols;
}

__device__ float row_rstd_of(const float* x, float mean, int cols, int lane)
{
    float sum = 0.0f;
#ifdef PLANT_STRIDED_RSTD
    // Each lane walks a contiguous chunk of its own: the warp's loads touch 32 lines at a time.
    const int chunk = (cols + 31) / 32;
    for (int k = 0; k < chunk; ++k) {
        const int i = lane * chunk + k;
        if (i < cols) {
            const float d = x[i] - mean;
            sum += d * d;
        }
    }
#else
    for (int i = lane; i < cols; i += 32) {
        const float d = x[i] - mean;
        sum += d * d;
    }
#endif
    return rsqrtf(warp_sum(sum) / cols + 1e-5f);
}

extern "C" __global__ void layernorm_fused(const float* x, const float* weight, const float* bias, float* out,
                                           float* mean, float* rstd, int rows, int cols)
{
    const int row = warp_row(rows);
    if (row < 0) return;
    const int lane = threadIdx.x % 32;
    const float* in = x + static_cast<size_t>(row) * cols;
    const float m = row_mean_of(in, cols, lane);
    const float r = row_rstd_of(in, m, cols, lane);
    float* o = out + static_cast<size_t>(row) * cols;
    for (int i = lane; i < cols; i += 32) o[i] = (in[i] - m) * r * weight[i] + bias[i];
    if (lane == 0) {
        mean[row] = m;
        rstd[row] = r;
    }
}

extern "C" __global__ void row_stats(const float* x, float* mean, float* rstd, int rows, int cols)
{
    const int row = warp_row(rows);
    if (row < 0) return;
    const int lane = threadIdx.x % 32;
    const float* in = x + static_cast<size_t>(row) * cols;
    const float m = row_mean_of(in, cols, lane);
    const float r = row_rstd_of(in, m, cols, lane);
    if (lane == 0) {
        mean[row] = m;
        rstd[row] = r;
    }
}

extern "C" __global__ void row_mean(const float* x, float* mean, int rows, int cols)
{
    const int row = warp_row(rows);
    if (row < 0) return;
    const float m = row_mean_of(x + static_cast<size_t>(row) * cols, cols, threadIdx.x % 32);
    if (threadIdx.x % 32 == 0) mean[row] = m;
}

extern "C" __global__ void row_rstd(const float* x, const float* mean, float* rstd, int rows, int cols)
{
    const int row = warp_row(rows);
    if (row < 0) return;
    const float r = row_rstd_of(x + static_cast<size_t>(row) * cols, mean[row], cols, threadIdx.x % 32);
    if (threadIdx.x % 32 == 0) rstd[row] = r;
}

/// One thread per element.
extern "C" __global__ void normalize(const float* x, const float* mean, const float* rstd, const float* weight,
                                     const float* bias, float* out, int rows, int cols)
{
    const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= static_cast<size_t>(rows) * cols) return;
    const int row = static_cast<int>(i / cols);
    const int col = static_cast<int>(i % cols);
    out[i] = (x[i] - mean[row]) * rstd[row] * weight[col] + bias[col];
}
