// Kernels that CMake builds with nvcc into module files for the tests (CMakeLists.txt, "module
// fixtures"): <build>/test-modules/module_kernels.{fatbin,cubin,ptx}. tests/suites/nvcc_modules.yaml
// gates them as modules against the same source compiled by NVRTC.
//
// scale<BLOCK> stages BLOCK inputs in shared memory (4 * BLOCK bytes), coalesced; both
// instantiations are built, so a suite can sweep BLOCK over a module.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) scale(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ float tile[BLOCK];
    const int i = blockIdx.x * BLOCK + threadIdx.x;
    tile[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    if (i < n) out[i] = 2.0f * tile[threadIdx.x];
}

template __global__ void scale<128>(const float*, float*, int);
template __global__ void scale<256>(const float*, float*, int);

// An unmangled name, as C libraries and hand-written PTX export them.
extern "C" __global__ void copy_c(const float* __restrict__ in, float* __restrict__ out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * in[i];
}

// Uncoalesced on purpose: thread i doubles element (33 i) mod n, so a warp's 32 loads and stores
// fall 33 floats apart, 32 sectors per request where 4 would do. Every element is still written
// once when n is coprime to 33. The GPU test finds the hotspot on the line that reads and writes element j.
extern "C" __global__ void scale_scattered(const float* __restrict__ in, float* __restrict__ out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int j = static_cast<int>((static_cast<long long>(i) * 33) % n);
    out[j] = 2.0f * in[j];
}
