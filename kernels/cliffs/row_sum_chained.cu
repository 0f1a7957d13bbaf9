// Demonstrates: a shallow staircase along a row width, one step per 128-byte line a row spans.
// Each warp sums whole rows, 32 floats at a time, and every load waits on the one before it (the
// next column depends on the value just loaded), so a row costs one memory latency per line it
// spans, ceil(width / 32), and not per byte: the time steps up by 1/k at k lines, 6.3 % at 16 lines
// and 4.3 % at 23, around a suite's min_depth of 5 %. Rows are padded to whole lines.
//
// `interior_slowdown` plants a slowdown for the gate's tests without changing the kernel: each warp
// waits, after each row, for that share of the row's own time at the middle of the scan
// (first_width..last_width), less towards its ends and none at them (a sine hump). 0: none.

/// out[r] = the sum of row r's first `width` floats, rows `pitch` floats apart. Launch with 256
/// threads per block; the warps take the rows in turn (grid-stride). in holds rows * pitch floats.
extern "C" __global__ void __launch_bounds__(256)
row_sum_chained(const float* __restrict__ in, float* __restrict__ out, int rows, int width, int pitch,
                int first_width, int last_width, float interior_slowdown)
{
    const int lane = threadIdx.x % 32;
    const int warps = gridDim.x * (blockDim.x / 32);
    const float share = last_width > first_width
                            ? interior_slowdown * sinpif(float(width - first_width) / float(last_width - first_width))
                            : 0.0f;
    for (int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32; r < rows; r += warps) {
        const long long started = clock64();
        const float* row = in + static_cast<long long>(r) * pitch;
        float sum = 0.0f;
        for (int start = 0; start < width;) {
            const float v = start + lane < width ? row[start + lane] : 0.0f;
            sum += v;
            // Never more than 1 in magnitude (the suite fills in with [-1, 1]), but the compiler
            // cannot know: the next address waits for this load.
            start += v > 2.0f ? 64 : 32;
        }
        for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
        if (lane == 0) out[r] = sum;
        if (share > 0.0f) {
            const long long until = clock64() + static_cast<long long>(share * float(clock64() - started));
            while (clock64() < until) {
            }
        }
    }
}
