// Demonstrates: a grid-stride loop: a fixed grid (about one wave of resident blocks) walks any n, so the
// grid no longer depends on the problem size and each thread amortises its index set-up over many elements.

/// c[i] = a[i] + b[i] for i < n, any grid. Launch with at most 256 threads per block.
extern "C" __global__ void __launch_bounds__(256)
vector_add_grid_stride(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n)
{
    const int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) c[i] = a[i] + b[i];
}
