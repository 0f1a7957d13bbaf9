// Demonstrates: row alignment against 32-byte sectors. Each block copies one row of `width` floats
// between two matrices whose rows are `pitch` floats apart. With a pitch that is a multiple of 8
// floats every row starts on a sector and a warp's 128 bytes touch 4 sectors; otherwise most rows
// start inside one and a warp's access touches 5: more sectors, the same useful bytes.

/// out[r * pitch + c] = in[r * pitch + c] for c < width, for the row r = blockIdx.x.
/// Launch with 256 threads per block and grid (rows, copies): every blockIdx.y copies the same
/// row again. in and out hold rows * pitch floats.
extern "C" __global__ void __launch_bounds__(256)
copy_rows_pitched(const float* __restrict__ in, float* __restrict__ out, int width, int pitch)
{
    const long long row = static_cast<long long>(blockIdx.x) * pitch;
    for (int c = threadIdx.x; c < width; c += blockDim.x) out[row + c] = in[row + c];
}
