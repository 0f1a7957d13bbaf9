// Demonstrates: alignment of global accesses. out[i] = in[i + offset]: at offset 0 each warp load is one
// aligned 128-byte line; at offset 1 every warp load straddles two lines and touches 5 sectors instead of 4.

/// out[i] = in[i + offset] for i < n; in holds n + offset elements.
/// Launch with at most 256 threads per block and grid ceil(n / blockDim.x).
extern "C" __global__ void __launch_bounds__(256)
copy_offset(const float* __restrict__ in, float* __restrict__ out, int n, int offset)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i + offset];
}
