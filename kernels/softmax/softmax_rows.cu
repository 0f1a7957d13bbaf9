// Demonstrates: row-wise softmax with one block per row, the row's maximum and sum reduced through
// shared memory; the CUDA C++ reference for the Triton softmax (kernels/triton/softmax.py).

/// out[r][c] = exp(in[r][c] - max_r) / sum_c exp(in[r][c] - max_r), row-major, `n_cols` per row.
/// Launch one block of BLOCK threads (a power of two) per row.
template <int BLOCK>
__global__ void softmax_rows(float* __restrict__ out, const float* __restrict__ in, int n_cols)
{
    __shared__ float partial[BLOCK];
    const float* row_in = in + static_cast<long>(blockIdx.x) * n_cols;
    float* row_out = out + static_cast<long>(blockIdx.x) * n_cols;

    float largest = __int_as_float(0xff800000); // -infinity
    for (int c = threadIdx.x; c < n_cols; c += BLOCK) largest = fmaxf(largest, row_in[c]);
    partial[threadIdx.x] = largest;
    __syncthreads();
    for (int half = BLOCK / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) partial[threadIdx.x] = fmaxf(partial[threadIdx.x], partial[threadIdx.x + half]);
        __syncthreads();
    }
    largest = partial[0];
    __syncthreads();

    float sum = 0.0f;
    for (int c = threadIdx.x; c < n_cols; c += BLOCK) sum += expf(row_in[c] - largest);
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (int half = BLOCK / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
        __syncthreads();
    }
    sum = partial[0];

    for (int c = threadIdx.x; c < n_cols; c += BLOCK) row_out[c] = expf(row_in[c] - largest) / sum;
}
