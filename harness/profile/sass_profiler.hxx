#pragma once
// CUPTI SASS Metrics: the kernel is instrumented, so its figures are exact and per instruction.

#include <cstdint>
#include <cuda.h>
#include <functional>
#include <string>
#include <vector>

namespace harness::profile {

/// The figures of one instruction (function + PC offset), one value per requested metric.
struct SassRecord {
    std::string function; ///< mangled name, as in the cubin
    std::uint32_t pc_offset = 0;
    std::vector<std::uint64_t> values; ///< in the order of SassProfiler::metrics()
};

/// Host wall time of one measure() call outside the caller's prepare, in seconds.
struct SassTimings {
    double setup = 0.0;    ///< instrumentation enabled
    double run = 0.0;      ///< the instrumented launches, patching included
    double teardown = 0.0; ///< records flushed and merged, instrumentation disabled
};

/// Collects a fixed list of SASS metrics (e.g. "smsp__sass_sectors_mem_global") on one device.
class SassProfiler {
public:
    SassProfiler(CUcontext context, int device_ordinal, std::vector<std::string> metrics);
    ~SassProfiler();
    SassProfiler(const SassProfiler&) = delete;
    SassProfiler& operator=(const SassProfiler&) = delete;

    const std::vector<std::string>& metrics() const { return metrics_; }

    /// Runs `prepare`, then `launch` (which must synchronise) with instrumentation on; returns every
    /// executed instruction's figures, summed over the launches.
    std::vector<SassRecord> measure(const std::function<void()>& prepare, const std::function<void()>& launch,
                                    SassTimings* timings = nullptr);

private:
    CUcontext context_;
    int device_ordinal_;
    std::vector<std::string> metrics_;
    std::vector<std::uint64_t> metric_ids_;
};

} // namespace harness::profile
