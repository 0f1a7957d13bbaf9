// Demonstrates: a memory-bound elementwise epilogue, out = max(in + bias[column], 0) over a row-major
// ROWS x COLS tensor. Consecutive threads touch consecutive elements (4 sectors per warp request, no excess);
// bias is one row that every row reuses, so it stays in cache. No shared memory, no local memory.

/// out[r * cols + c] = max(in[r * cols + c] + bias[c], 0) for r < rows, c < cols (rows * cols < 2^31).
/// Launch with at most 256 threads per block and grid ceil(rows * cols / blockDim.x).
extern "C" __global__ void __launch_bounds__(256)
bias_relu(const float* __restrict__ in, const float* __restrict__ bias, float* __restrict__ out, int rows, int cols)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows * cols) return;
    const int c = i % cols;
    out[i] = fmaxf(in[i] + bias[c], 0.0f);
}
