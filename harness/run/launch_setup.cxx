#include "harness/run/launch_setup.hxx"

#include "harness/core/arch_limits.hxx"
#include "harness/run/buffer_data.hxx"
#include "harness/suite/compile_params.hxx"

#include <cstring>
#include <fmt/format.h>

namespace harness::run {

namespace {

std::array<unsigned, 3> dims(const std::vector<suite::Expression>& exprs, const suite::Bindings& params,
                             const std::string& what)
{
    std::array<unsigned, 3> d = {1, 1, 1};
    for (std::size_t i = 0; i < exprs.size(); ++i) {
        const std::int64_t v = evaluate_at(exprs[i], params, what);
        if (v < 1 || v > 0x7fffffff) throw LaunchProblem(fmt::format("{}[{}] = {} is out of range", what, i, v));
        d[i] = static_cast<unsigned>(v);
    }
    return d;
}

} // namespace

std::int64_t evaluate_at(const suite::Expression& e, const suite::Bindings& params, const std::string& what)
{
    try {
        return e.evaluate(params);
    } catch (const suite::ExpressionError& err) {
        throw LaunchProblem(fmt::format("{} '{}': {}", what, e.text(), err.what()));
    }
}

void check_type_on_gpu(suite::ElementType type, const std::string& arch, const std::string& what)
{
    const int needed = suite::element_type_info(type).min_sm_version;
    const ArchLimits* limits = find_arch_limits(arch);
    if (needed > 0 && limits && limits->sm_version < needed)
        throw LaunchProblem(fmt::format("{} is {}, which needs sm_{} or newer; this GPU is {}", what,
                                        suite::element_type_name(type), needed, arch));
}

KernelLaunch set_up_kernel_launch(const suite::VariantSpec& variant, std::size_t index, CUmodule module,
                                  const compile::CompiledModule& compiled, const suite::Bindings& params,
                                  const std::function<CUdeviceptr(const std::string&)>& buffer_pointer,
                                  const std::string& arch)
{
    const Driver& d = driver();
    const auto& spec = variant.launches[index];
    const std::string where = variant.launches.size() > 1 ? fmt::format("launches[{}].", index) : "";
    KernelLaunch l;
    l.symbol = compiled.lowered_names.at(suite::resolve_entry(spec.entry, params));
    CU_CHECK(d.cuModuleGetFunction(&l.function, module, l.symbol.c_str()));
    l.grid = dims(spec.grid, params, where + "grid");
    l.block = dims(spec.block, params, where + "block");
    for (std::size_t i = 0; i < 3; ++i) {
        l.cluster[i] = static_cast<unsigned>(spec.cluster[i]);
        if (l.grid[i] % l.cluster[i] != 0)
            throw LaunchProblem(fmt::format("{}grid[{}] = {} is not a multiple of the cluster's {} blocks", where, i,
                                            l.grid[i], l.cluster[i]));
    }
    const std::int64_t threads = std::int64_t{l.block[0]} * l.block[1] * l.block[2];
    int max_threads = 0;
    CU_CHECK(d.cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, l.function));
    if (threads > max_threads)
        throw LaunchProblem(
            fmt::format("{}block has {} threads, {} allows at most {}", where, threads, spec.entry, max_threads));
    const std::int64_t shared = evaluate_at(spec.shared_bytes, params, where + "shared_bytes");
    if (shared < 0) throw LaunchProblem(fmt::format("{}shared_bytes = {} is negative", where, shared));
    l.shared_bytes = static_cast<unsigned>(shared);
    if (l.shared_bytes > 48 * 1024) {
        const CUresult r = d.cuFuncSetAttribute(l.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                static_cast<int>(l.shared_bytes));
        if (r != CUDA_SUCCESS)
            throw LaunchProblem(
                fmt::format("{}shared_bytes = {} exceeds what the GPU allows per block", where, l.shared_bytes));
    }
    l.scalar_storage.resize(spec.args.size());
    for (std::size_t ai = 0; ai < spec.args.size(); ++ai) {
        const auto& a = spec.args[ai];
        auto& slot = l.scalar_storage[ai];
        if (a.is_buffer()) {
            const CUdeviceptr ptr = buffer_pointer(a.buffer);
            std::memcpy(slot.data(), &ptr, sizeof(CUdeviceptr));
        } else {
            check_type_on_gpu(a.scalar_type, arch, fmt::format("{}args[{}]", where, ai));
            const std::int64_t v = a.literal ? 0 : evaluate_at(a.scalar, params, fmt::format("{}args[{}]", where, ai));
            const Bytes bytes = scalar_bytes(a.scalar_type, v, a.literal ? *a.literal : static_cast<double>(v));
            std::memcpy(slot.data(), bytes.data(), bytes.size());
        }
    }
    for (auto& slot : l.scalar_storage) l.params.push_back(slot.data());
    return l;
}

void enqueue(const KernelLaunch& l, CUstream stream)
{
    if (l.cluster == std::array<unsigned, 3>{1, 1, 1}) {
        CU_CHECK(driver().cuLaunchKernel(l.function, l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1],
                                         l.block[2], l.shared_bytes, stream, const_cast<void**>(l.params.data()),
                                         nullptr));
        return;
    }
    // A kernel compiled for clusters (Triton's num_ctas) launches as clusters, the blocks of one
    // spread over SMs as Triton's own launcher asks.
    CUlaunchAttribute attributes[2] = {};
    attributes[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attributes[0].value.clusterDim.x = l.cluster[0];
    attributes[0].value.clusterDim.y = l.cluster[1];
    attributes[0].value.clusterDim.z = l.cluster[2];
    attributes[1].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE;
    attributes[1].value.clusterSchedulingPolicyPreference = CU_CLUSTER_SCHEDULING_POLICY_SPREAD;
    CUlaunchConfig config = {};
    config.gridDimX = l.grid[0];
    config.gridDimY = l.grid[1];
    config.gridDimZ = l.grid[2];
    config.blockDimX = l.block[0];
    config.blockDimY = l.block[1];
    config.blockDimZ = l.block[2];
    config.sharedMemBytes = l.shared_bytes;
    config.hStream = stream;
    config.attrs = attributes;
    config.numAttrs = 2;
    CU_CHECK(driver().cuLaunchKernelEx(&config, l.function, const_cast<void**>(l.params.data()), nullptr));
}

} // namespace harness::run
