#pragma once
// The fast GPU scan of a scanned axis (docs/cliffs.md): one variant timed at every point of the
// axis, unverified and unprofiled, for its cliff map. Used inside a worker process only.

#include "harness/cliff/launch_model.hxx"
#include "harness/compile/nvrtc_compiler.hxx"
#include "harness/run/gpu_session.hxx"
#include "harness/suite/suite.hxx"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace harness::run {

/// How the scan times each point.
struct ScanTiming {
    int batches = 7; ///< timed batches per point: the point's time is the median of their means
    /// A batch is this many back-to-back runs of the variant: as many as make the fastest end of
    /// the axis last batch_target_us (CUDA events resolve about 0.5 us), but no more than keep the
    /// slowest end within batch_limit_us. One count for the whole axis, so that the share of
    /// launch gaps in a batch does not change from point to point.
    double batch_target_us = 200.0;
    double batch_limit_us = 20000.0;
    std::size_t max_runs_per_batch = 4096;
};

/// One point of a scan as measured.
struct ScanPoint {
    std::int64_t x = 0;             ///< the axis value
    bool ok = false;                ///< false: `error` says why the point did not run
    std::string error;              ///< "N=40: grid[0] = 0 is out of range"
    double time_us = 0;             ///< one run of the variant (all its launches): median of the batch means
    double noise_us = 0;            ///< 1.4826 x MAD of the batch means, at least the event resolution per run
    std::size_t runs_per_batch = 0; ///< back-to-back runs in each timed batch
    cliff::LaunchShape shape;       ///< the first launch's, resources of the least occupied launch
};

void to_json(nlohmann::json& j, const ScanPoint& p);
void from_json(const nlohmann::json& j, ScanPoint& p);

/// The resolution of one CUDA event interval, in microseconds (about 0.5 us per the CUDA docs).
inline constexpr double event_resolution_us = 0.5;

/// Median and robust noise (1.4826 x MAD) of `means`, the per-run means of timed batches of
/// `runs_per_batch` runs; the noise is at least the event resolution spread over a batch.
std::pair<double, double> summarize_batches(std::vector<double> means, std::size_t runs_per_batch);

/// Times the variants of one suite along its scanned axis on a GPU session: the modules are those
/// of `modules` (keyed by suite::compile_key), each loaded once.
class ScanRunner {
public:
    ScanRunner(GpuSession& session, const suite::Suite& suite,
               const std::map<std::string, compile::CompiledModule>& modules);
    ~ScanRunner();
    ScanRunner(const ScanRunner&) = delete;
    ScanRunner& operator=(const ScanRunner&) = delete;

    /// Times `variant` (a kernel, not a library call) at each of `points` (in axis order, the other
    /// parameters fixed), handing each point to `on_point` as soon as it is measured. Buffers are
    /// allocated and filled once, at each buffer's largest count over the points; each point gets
    /// its own grid, block and arguments, one warm-up run, then ScanTiming's batches. A point that
    /// cannot launch as specified fails alone; a CudaError (a fault poisons the context)
    /// propagates. Throws LaunchProblem when the buffers cannot be made.
    void scan(const suite::VariantSpec& variant, const std::vector<suite::Bindings>& points, const ScanTiming& timing,
              const std::function<void(const ScanPoint&)>& on_point);

private:
    struct Buffers;
    class Scan;
    CUmodule module_for(const std::string& key);

    GpuSession& session_;
    const suite::Suite& suite_;
    const std::map<std::string, compile::CompiledModule>& modules_;
    std::map<std::string, CUmodule> loaded_;
};

} // namespace harness::run
