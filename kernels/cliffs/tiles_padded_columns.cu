// Demonstrates: tile quantisation. Each block computes a tile of 256 columns of one row, in full even
// where the tile runs past the matrix's n columns (the padding is computed, then not stored), as
// tiled kernels do. The work done is the tiles', the useful work the columns': one column past a
// multiple of 256 costs a whole tile more. One block saturates its SM's FP32 pipes (8 warps, four
// independent FMA chains each), so with one row per SM the time grows with the tiles per row.

/// out[row * n + col] = a value computed from (row, col) by `iterations` rounds of four FMA chains,
/// for col < n. Launch with 256 threads per block and grid (ceil(n / 256), rows).
extern "C" __global__ void __launch_bounds__(256)
tiles_padded_columns(float* __restrict__ out, int n, int iterations)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y;
    float a = 1.0f + 1e-3f * static_cast<float>(col % 17), b = 0.5f + 1e-3f * static_cast<float>(row % 13);
    float c0 = a, c1 = b, c2 = a * b, c3 = a + b;
    for (int i = 0; i < iterations; ++i) {
        c0 = fmaf(c0, 0.999f, 1e-4f);
        c1 = fmaf(c1, 0.999f, 2e-4f);
        c2 = fmaf(c2, 0.999f, 3e-4f);
        c3 = fmaf(c3, 0.999f, 4e-4f);
    }
    if (col < n) out[static_cast<long long>(row) * n + col] = c0 + c1 + c2 + c3;
}
