// The fp32 reference GEMM, C = A * B (row-major): one thread per element of C, fp32 throughout.
__global__ void gemm_f32(const float* A, const float* B, float* C, int M, int N, int K)
{
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N) return;
    float sum = 0.0f;
    for (int k = 0; k < K; ++k) sum += A[row * K + k] * B[k * N + col];
    C[row * N + col] = sum;
}
