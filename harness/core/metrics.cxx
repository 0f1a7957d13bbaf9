#include "harness/core/metrics.hxx"

namespace harness {

namespace {

constexpr MetricInfo table[] = {
    {"time_median", "CUDA events, unprofiled pass", "us", Direction::lower_is_better, Stability::noisy, 0.05,
     "median kernel time over the timed samples"},
    {"time_min", "CUDA events, unprofiled pass", "us", Direction::lower_is_better, Stability::noisy, 0.05,
     "fastest timed sample"},
    {"time_noise", "CUDA events, unprofiled pass", "%", Direction::lower_is_better, Stability::noisy, 1.0,
     "relative standard deviation of the samples"},
    {"time_samples", "CUDA events, unprofiled pass", "count", Direction::neither, Stability::noisy, 1.0,
     "number of timed samples"},
    {"gflops", "suite flops expression / median time", "GFLOP/s", Direction::higher_is_better, Stability::noisy,
     0.05, "achieved floating-point throughput"},
    {"bandwidth", "suite bytes expression / median time", "GB/s", Direction::higher_is_better, Stability::noisy,
     0.05, "achieved compulsory-traffic bandwidth"},
    {"registers", "cuFuncGetAttribute(NUM_REGS)", "regs/thread", Direction::lower_is_better, Stability::exact, 0.0,
     "registers per thread of the kernel as loaded"},
    {"static_shared_bytes", "cuFuncGetAttribute(SHARED_SIZE_BYTES)", "B", Direction::lower_is_better,
     Stability::exact, 0.0, "statically declared shared memory per block"},
    {"dynamic_shared_bytes", "suite shared_bytes expression", "B", Direction::lower_is_better, Stability::exact, 0.0,
     "dynamic shared memory per block requested at launch"},
    {"spill_store_bytes", "ptxas report (-Xptxas=-v)", "B", Direction::lower_is_better, Stability::exact, 0.0,
     "bytes per thread stored to local memory because registers ran out"},
    {"spill_load_bytes", "ptxas report (-Xptxas=-v)", "B", Direction::lower_is_better, Stability::exact, 0.0,
     "bytes per thread loaded back from local memory after spilling"},
    {"barriers", "cubin .nv.info EIATTR_NUM_BARRIERS", "count", Direction::lower_is_better, Stability::exact, 0.0,
     "named barriers the kernel uses"},
    {"local_bytes", "cuFuncGetAttribute(LOCAL_SIZE_BYTES)", "B", Direction::lower_is_better, Stability::exact, 0.0,
     "local memory (stack and spills) per thread"},
    {"blocks_per_sm", "cuOccupancyMaxActiveBlocksPerMultiprocessor", "blocks", Direction::higher_is_better,
     Stability::exact, 0.0, "resident blocks per SM the occupancy calculator allows"},
    {"theoretical_occupancy", "occupancy calculator", "fraction", Direction::higher_is_better, Stability::exact, 0.0,
     "resident warps / maximum warps per SM"},
    {"verify_max_abs_error", "comparison with the reference variant", "abs", Direction::lower_is_better,
     Stability::exact, 0.0, "largest absolute difference from the reference output"},
    {"verify_max_rel_error", "comparison with the reference variant", "rel", Direction::lower_is_better,
     Stability::exact, 0.0, "largest relative difference from the reference output"},
};

} // namespace

std::span<const MetricInfo> metric_table()
{
    return table;
}

std::optional<MetricInfo> find_metric(std::string_view name)
{
    for (const auto& m : table)
        if (m.name == name) return m;
    return std::nullopt;
}

} // namespace harness
