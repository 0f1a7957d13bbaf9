// A 7-point 1D stencil built by nvcc into a fatbin (sm_80 and sm_90 code, with line info), the
// way a project ships kernels it compiles itself: out[i] = sum_k w[k] * in[i + k - 3].
// Each block stages its BLOCK inputs plus a 3-element halo on each side in shared memory, so
// every input is read from global memory once, coalesced.
constexpr int RADIUS = 3;

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) stencil_1d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ float tile[BLOCK + 2 * RADIUS];
    const int i = blockIdx.x * BLOCK + threadIdx.x;
    tile[threadIdx.x + RADIUS] = i < n ? in[i] : 0.0f;
    if (threadIdx.x < RADIUS) {
        const int left = i - RADIUS, right = i + BLOCK;
        tile[threadIdx.x] = left >= 0 ? in[left] : 0.0f;
        tile[threadIdx.x + BLOCK + RADIUS] = right < n ? in[right] : 0.0f;
    }
    __syncthreads();
    constexpr float w[2 * RADIUS + 1] = {0.05f, 0.1f, 0.2f, 0.3f, 0.2f, 0.1f, 0.05f};
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k <= 2 * RADIUS; ++k) sum += w[k] * tile[threadIdx.x + k];
    if (i < n) out[i] = sum;
}

template __global__ void stencil_1d<256>(const float*, float*, int);
