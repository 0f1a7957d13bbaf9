// Demonstrates: edits that leave every access as it was, and accesses the static tier cannot
// predict. With TWIN 0 each kernel is as tests/baselines/benign_accesses was recorded; with TWIN 1
// (tests/suites/benign_accesses.yaml) its benign twin, which must pass: locals renamed, lines
// moved, a grid-stride loop over the same launch, an added bounds check. The gather and the
// histogram address memory through loaded values: not predicted, never gated.
#ifndef TWIN
#define TWIN 0
#endif

extern "C" __global__ void __launch_bounds__(256) benign_renamed(const float* in, float* out, int n)
{
#if TWIN
    const int element = blockIdx.x * blockDim.x + threadIdx.x;
    if (element < n) out[element] = 2.0f * in[element];
#else
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * in[i];
#endif
}

extern "C" __global__ void __launch_bounds__(256) benign_moved(const float* in, float* out, int m, int n)
{
    __shared__ float tile[32][33];
#if TWIN
    const int row = blockIdx.y * 32 + threadIdx.y;
    const int col = blockIdx.x * 32 + threadIdx.x;

    // The tile is read in rows of 8.
    for (int j = 0; j < 32; j += 8)
        if (row + j < m && col < n)
            tile[threadIdx.y + j][threadIdx.x] = in[(row + j) * n + col];

    __syncthreads();
    const int orow = blockIdx.x * 32 + threadIdx.y;
    const int ocol = blockIdx.y * 32 + threadIdx.x;
#else
    const int col = blockIdx.x * 32 + threadIdx.x, row = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8)
        if (row + j < m && col < n) tile[threadIdx.y + j][threadIdx.x] = in[(row + j) * n + col];
    __syncthreads();
    const int ocol = blockIdx.y * 32 + threadIdx.x, orow = blockIdx.x * 32 + threadIdx.y;
#endif
    for (int j = 0; j < 32; j += 8)
        if (orow + j < n && ocol < m) out[(orow + j) * m + ocol] = tile[threadIdx.x][threadIdx.y + j];
}

extern "C" __global__ void __launch_bounds__(256) benign_grid_stride(const float* in, float* out, int n)
{
#if TWIN
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = in[i] + 1.0f;
#else
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] + 1.0f;
#endif
}

extern "C" __global__ void __launch_bounds__(256) benign_bounds(const float* in, float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
#if TWIN
    if (i >= n || i < 0) return;
#endif
    out[i] = in[i] * in[i];
}

// out[i] = in[index[i]]: the load's address is a loaded value.
extern "C" __global__ void __launch_bounds__(256) benign_gather(const float* in, const int* index, float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[index[i]];
}

// bins[value's bin] += 1: the atomic's address is a loaded value.
extern "C" __global__ void __launch_bounds__(256) benign_histogram(const float* in, unsigned* bins, int n, int nbins)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[min(nbins - 1, static_cast<int>(in[i] * nbins))], 1u);
}
