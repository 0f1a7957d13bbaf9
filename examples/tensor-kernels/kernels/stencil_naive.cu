// The reference for the nvcc-built stencil: the same 7-point stencil reading global memory directly,
// compiled by NVRTC. out[i] = sum_k w[k] * in[i + k - 3], zero outside [0, n).
extern "C" __global__ void stencil_naive(const float* in, float* out, int n)
{
    const float w[7] = {0.05f, 0.1f, 0.2f, 0.3f, 0.2f, 0.1f, 0.05f};
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float sum = 0.0f;
    for (int k = 0; k < 7; ++k) {
        const int j = i + k - 3;
        if (j >= 0 && j < n) sum += w[k] * in[j];
    }
    out[i] = sum;
}
