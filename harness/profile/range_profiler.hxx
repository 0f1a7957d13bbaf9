#pragma once
// CUPTI Range Profiler with user replay and one user range per launch of a case: the caller's
// prepare (restore inputs, empty the L2) and the launches run once per pass, each pass inside its
// own start/stop, so every pass starts from the state Nsight Compute's cache control gives and
// nothing but the caller touches memory or caches.

#include <cstdint>
#include <cuda.h>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace harness::profile {

/// The chip's name as CUPTI knows it (e.g. "GH100"), for metric queries.
std::string chip_name(int device_ordinal);

/// Initialises the CUPTI profiler once per process; throws CuptiError (environment) when counters
/// cannot be read (permission, another profiler attached, MIG).
void initialize_profiler();

/// Which counters `context` can read: CUPTI's counter availability image, read on first use and
/// kept for the context's life. Throws CuptiError when it cannot be read.
const std::vector<std::uint8_t>& counter_availability(CUcontext context);

/// Host wall time of one measure() call outside the caller's prepare, in seconds.
struct RangeTimings {
    double setup = 0.0;         ///< profiler enabled, counter image prepared, configuration set
    double launches = 0.0;      ///< the launches in their ranges, every pass
    double teardown = 0.0;      ///< passes ended, counters decoded and evaluated, profiler disabled
    bool enabled = false;       ///< the context's range profiler was enabled afresh for this profiler
    std::size_t remeasured = 0; ///< measurements taken again one launch at a time after a short pass
};

/// One case of a batch measured in a single pass (RangeProfiler::measure_batch).
struct BatchCase {
    std::function<void()> prepare;            ///< outside any range: its buffers made, inputs restored, L2 emptied
    std::size_t launches = 0;                 ///< its launches, each measured in a range of its own
    std::function<void(std::size_t)> launch;  ///< launches its step `i` and synchronises
    std::function<void()> done;               ///< outside any range, after its launches: its buffers freed
    std::function<void(std::size_t)> between; ///< outside any range, before its step `i` > 0 (may be empty)
};

/// How a profiler cuts the GPU's work into ranges.
enum class RangeMode {
    per_launch, ///< one user range around each launch the caller makes (counters of a case's steps)
    per_kernel, ///< one range per kernel, bounded on the GPU itself, as Nsight Compute's are
};

/// One kernel's metric values in per-kernel mode.
struct KernelValues {
    std::string name; ///< the range's name as CUPTI gives it (the kernel's, where it knows it)
    std::vector<double> values;
};

/// Collects a fixed list of CUPTI metrics (full names with rollup, e.g. "dram__bytes_read.sum").
class RangeProfiler {
public:
    RangeProfiler(CUcontext context, int device_ordinal, std::vector<std::string> metrics,
                  RangeMode mode = RangeMode::per_launch);
    ~RangeProfiler();
    RangeProfiler(const RangeProfiler&) = delete;
    RangeProfiler& operator=(const RangeProfiler&) = delete;

    /// Replay passes CUPTI needs for the metric list (each profiled launch runs this many times).
    std::size_t passes() const { return passes_; }
    const std::vector<std::string>& metrics() const { return metrics_; }

    /// Runs `prepare`, then each of `launches` (each launches one step of a case and synchronises)
    /// in a range of its own, once per pass, with `between(i)` (where given) outside any range
    /// before launch i > 0; returns one row of metric values per launch, in the order of metrics().
    std::vector<std::vector<double>> measure(const std::function<void()>& prepare,
                                             const std::vector<std::function<void()>>& launches,
                                             RangeTimings* timings = nullptr,
                                             const std::function<void(std::size_t)>& between = {});

    /// A one-pass profiler's measurement of several cases in one set-up, one pass and one
    /// read-back: each case's prepare, launches (a range each) and done in turn, so that no case
    /// runs beside another's buffers. Returns per case one row per launch, as measure() does, or
    /// nullopt where CUPTI recorded fewer ranges than there were launches: measured beside other
    /// GPUs' workers on four H100s, 6 of 59 batches came back short (6 ranges of 15, 8 of 16), and
    /// none in a run on one GPU; the caller then measures each case alone. Setting up and reading
    /// back a measurement costs about 13 and 6 ms on an H100, and twice that beside other GPUs'
    /// workers, since CUPTI serialises them across the host.
    std::optional<std::vector<std::vector<std::vector<double>>>> measure_batch(const std::vector<BatchCase>& cases,
                                                                               RangeTimings* timings = nullptr);

    /// Per-kernel mode with a one-pass metric list: runs `body` once, in one pass, and returns one
    /// row per kernel the GPU ran meanwhile (at most `max_kernels`), in order.
    std::vector<KernelValues> measure_kernels(const std::function<void()>& body, std::size_t max_kernels,
                                              RangeTimings* timings = nullptr);

private:
    struct HostObject;
    class Enabled;
    struct SharedEnable;
    /// The context's enabled range profiler with this profiler's configuration; `enabled` says
    /// whether it had to be enabled afresh.
    Enabled& acquire(bool* enabled = nullptr);
    std::vector<std::uint8_t> configure(Enabled& profiler, std::size_t ranges);
    /// Every pass of one measurement: prepare, the launches before `first` outside any range, then
    /// `count` launches in a range each; returns the number of ranges CUPTI recorded.
    std::size_t run_passes(Enabled& profiler, const std::function<void()>& prepare,
                           const std::vector<std::function<void()>>& launches,
                           const std::function<void(std::size_t)>& between, std::size_t first, std::size_t count,
                           const std::vector<std::uint8_t>& counter_data, RangeTimings& t);
    std::size_t decode(Enabled& profiler, const std::vector<std::uint8_t>& counter_data);
    std::vector<double> evaluate(const std::vector<std::uint8_t>& counter_data, std::size_t range);
    CUcontext context_;
    RangeMode mode_;
    std::vector<std::string> metrics_;
    std::vector<const char*> metric_names_;
    std::unique_ptr<HostObject> host_;
    std::vector<std::uint8_t> config_image_;
    std::size_t passes_ = 0;
    /// Freshly initialised counter data images by number of ranges, copied for each measurement:
    /// sizing and initialising one costs about 2 ms on an H100.
    std::map<std::size_t, std::vector<std::uint8_t>> blank_counter_data_;
    /// Shared by every profiler of the context: CUPTI allows one enabled range profiler per
    /// context. It stays enabled between measurements of the same profiler (enabling costs about
    /// 0.1 s on an H100; an enabled profiler that is not started changes neither timed samples
    /// nor counters) and is enabled afresh when another profiler's configuration is needed.
    std::shared_ptr<SharedEnable> shared_;
};

} // namespace harness::profile
