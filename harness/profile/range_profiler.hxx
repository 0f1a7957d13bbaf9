#pragma once
// CUPTI Range Profiler with auto range: one range per kernel launch. Kernel replay runs every pass
// inside one start/stop (CUPTI saves and restores memory between passes); user replay runs the
// caller's prepare and launch once per pass, so nothing but the caller touches memory or caches.

#include <cuda.h>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace harness::profile {

/// The chip's name as CUPTI knows it (e.g. "GH100"), for metric queries.
std::string chip_name(int device_ordinal);

/// Initialises the CUPTI profiler once per process; throws CuptiError (environment) when counters
/// cannot be read (permission, another profiler attached, MIG).
void initialize_profiler();

/// How the passes a metric list needs are run.
enum class Replay { kernel, user };

/// Collects a fixed list of CUPTI metrics (full names with rollup, e.g. "dram__bytes_read.sum").
class RangeProfiler {
public:
    RangeProfiler(CUcontext context, int device_ordinal, std::vector<std::string> metrics,
                  Replay replay = Replay::kernel);
    ~RangeProfiler();
    RangeProfiler(const RangeProfiler&) = delete;
    RangeProfiler& operator=(const RangeProfiler&) = delete;

    /// Replay passes CUPTI needs for the metric list (each profiled launch runs this many times).
    std::size_t passes() const { return passes_; }
    const std::vector<std::string>& metrics() const { return metrics_; }

    /// Runs `prepare` (restores inputs, flushes caches), then `launch` (which must launch at most
    /// `max_launches` kernels and synchronise) under the profiler, once, or once per pass with
    /// user replay; returns one row of metric values per kernel launch, in launch order.
    std::vector<std::vector<double>> measure(const std::function<void()>& prepare, const std::function<void()>& launch,
                                             std::size_t max_launches);

private:
    struct HostObject;
    CUcontext context_;
    Replay replay_;
    std::vector<std::string> metrics_;
    std::vector<const char*> metric_names_;
    std::unique_ptr<HostObject> host_;
    std::vector<std::uint8_t> config_image_;
    std::size_t passes_ = 0;
};

} // namespace harness::profile
