#pragma once
// Runs one case on the GPU: allocate and fill buffers, launch, verify against the reference,
// time, and read the kernel's resources. Used inside a worker process only.

#include "harness/compile/nvrtc_compiler.hxx"
#include "harness/core/case_result.hxx"
#include "harness/core/readable_path.hxx"
#include "harness/profile/case_profiler.hxx"
#include "harness/profile/counter_cache.hxx"
#include "harness/run/buffer_data.hxx"
#include "harness/run/gpu_session.hxx"
#include "harness/run/run_settings.hxx"
#include "harness/run/verification.hxx"
#include "harness/suite/sweep.hxx"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace harness::profile {
class CaseProfiler;
class CounterCache;
class RangeProfiler;
} // namespace harness::profile

namespace harness::run {

/// What a worker needs of a suite's settings (RunSettings, under the same names): how it measures
/// every case it runs. Built by the pipeline (pipeline::worker_options).
struct RunOptions {
    TimeSource time_source = TimeSource::kernels;
    bool hot = false;         ///< skip the L2 flush between timed samples
    bool verify_only = false; ///< no timing pass
    bool profile = true;      ///< collect hardware counters (CUPTI) in a pass of their own
    /// Run each case once, then once more inside its NVTX range and between cuProfilerStart/Stop
    /// (a warm run, as timed runs are), for an external profiler; no timing, no counters.
    bool external_profiler = false;
    std::vector<std::string> metrics; ///< metric-table names to collect; empty: the default set
    /// Where exact counters are kept between runs (empty: no counter cache).
    std::filesystem::path counter_cache_dir;
    bool fresh_counters = false; ///< measure every figure even on a cache hit, then refresh the entry
    /// A worker's group of cases may span suites, and modules stay loaded for the worker's life
    /// (see CaseRunner::start). For a worker beside others on the host's GPUs, where each change
    /// of the range profiler between timer and counters holds up the other GPUs too; a lone
    /// worker ends a group with its suite and unloads the suite's modules, which keeps device
    /// memory laid out as the baselines were recorded (with every suite's modules loaded, gemm
    /// blocktiled_1d N=2048 read 7 to 8 % more DRAM bytes in 5 of 7 one-GPU runs on an H100).
    bool groups_span_suites = false;

    /// Suites whose workers' options are equal share workers.
    bool operator==(const RunOptions&) const = default;
};

class ClockMonitor;
class ClockWatch;
struct TimeSamples;

/// Loads modules once per process and runs cases in the current context.
class CaseRunner {
public:
    CaseRunner(GpuSession& session, const suite::Suite& suite,
               const std::map<std::string, compile::CompiledModule>& modules, RunOptions options);
    ~CaseRunner();

    /// Runs the cases of another suite from now on, keeping the context and the profilers (whose
    /// set-up is most of a worker's start): a worker serves every suite of a run. With
    /// RunOptions::groups_span_suites, cases started in another suite may still be finished;
    /// without, every started case must be finished first, and the suite's modules are unloaded.
    void use_suite(const suite::Suite& suite, const std::map<std::string, compile::CompiledModule>& modules);

    /// A case verified and timed whose hardware counters are still to be measured.
    struct Staged {
        CaseResult result;
        const suite::Suite* suite = nullptr; ///< the suite (and its modules) the case was started in
        const std::map<std::string, compile::CompiledModule>* modules = nullptr;
        const suite::VariantSpec* variant = nullptr;
        suite::Bindings params;
        bool profile = false; ///< whether finish() has counters to measure
        /// The hashes of the buffers' initial contents, in prepare()'s order, for counter-cache
        /// keys: finish() draws the same contents again and does not hash them again.
        std::vector<std::string> content_keys;
        std::size_t launches = 0; ///< the case's launch steps
        std::string counter_key;  ///< its counter-cache key (empty: no cache, or a built-in)
        /// Its exact figures and hotspots from the counter cache, looked up by start(): only its
        /// noisy counters are left to measure.
        std::optional<profile::CachedCounters> cached;
    };

    /// Runs `c` in two halves: start() prepares, verifies and times it; finish() measures its
    /// counters, in the suite the case was started in (finish() calls use_suite()). A worker starts
    /// a group of cases (of any suites, with RunOptions::groups_span_suites), then finishes them:
    /// the context has one enabled range profiler, which must be enabled afresh for each change
    /// between the timer's and the counter profiler's configurations, so it changes hands twice per
    /// group instead of twice per case. Enabling takes about 0.1 s on an H100 and holds up every
    /// other process of the host that enables or starts a profiler meanwhile, even on another GPU.
    /// The result records failures of the case itself; a CudaError that poisons the context
    /// propagates from either, since nothing more can run in this process. `budget_s`: seconds of
    /// timing, the case's suite's as the run resolved it (RunSettings::budget_s).
    Staged start(const suite::Case& c, ReferenceOutputs& reference, double budget_s);
    CaseResult finish(Staged staged);

    /// Whether finish_batch() can take `staged`: its exact figures come from the counter cache
    /// and its noisy counters take one pass.
    bool batchable(const Staged& staged) const;
    /// finish() for several batchable cases of one suite, their noisy counters measured in one
    /// range-profiler measurement: each case's buffers are made, its launches measured and its
    /// buffers freed in turn, so no case runs beside another's buffers. `on_begin` is called with
    /// each case's position as its turn comes. Throws what finish() would for the case whose
    /// turn it was (or the last, for a failure after every launch); the batch's results are lost.
    /// Nullopt where CUPTI recorded the batch only in part: each case is then finished alone.
    std::optional<std::vector<CaseResult>> finish_batch(const std::vector<Staged>& batch,
                                                        const std::function<void(std::size_t)>& on_begin);

    /// Seconds the constructor spent on each of its parts.
    struct StartupCost {
        double clock = 0;    ///< NVML, for the SM clock
        double timer = 0;    ///< the range profiler that reads kernel durations
        double profiler = 0; ///< the counter profilers (range, noisy, SASS)
    };
    const StartupCost& startup() const { return startup_; }

    /// Runs the reference variant at `c`'s point untimed and returns its outputs.
    std::map<std::string, Bytes> reference_outputs(const suite::Case& c);

private:
    struct Prepared;
    /// The module a case of `variant` at `params` runs, loaded once per compile configuration.
    CUmodule module_for(const std::string& key);
    /// Allocates and fills the buffers of a case and sets up its launches. With `hash_contents`
    /// (and a counter cache), each buffer's initial contents are hashed for the counter key.
    std::unique_ptr<Prepared> prepare(const suite::VariantSpec& variant, const suite::Bindings& params,
                                      bool hash_contents);
    void launch_all(Prepared& p);
    void launch_step(Prepared& p, std::size_t step);
    std::map<std::string, Bytes> download_outputs(Prepared& p);
    void read_resources(Prepared& p, CaseResult& r);
    /// Times a verified case for `budget_s` in named steps: a warm-up run, samples taken while
    /// the SM clock is watched (take_samples), those taken while it throttled dropped, the figures set.
    void time_case(const suite::VariantSpec& variant, const suite::Case& c, Prepared& p, double budget_s,
                   CaseResult& r);
    /// Inputs restored, the L2 emptied and the case run once more before its timed samples.
    void warm_up_for_timing(Prepared& p);
    /// Samples until `policy` has enough (timing_stats: enough_samples), in batches sized to its
    /// budget (next_batch_size), from the GPU's per-kernel durations; where the profiler misses a
    /// kernel, every sample is taken again with CUDA events (said in `r`'s message).
    TimeSamples take_samples(const suite::VariantSpec& variant, Prepared& p, const suite::TimingSpec& policy,
                             ClockWatch& clock, CaseResult& r);
    /// One sample timed with CUDA events around the case's launches (us), its inputs restored and
    /// the L2 emptied first.
    double event_sample(Prepared& p);
    void restore_and_flush(Prepared& p);
    /// Takes `batch` timed samples from the GPU's per-kernel durations, appending them (us), where
    /// a sample runs `per_sample` kernels (0: unknown, learnt from a sample of its own). False when
    /// the profiler did not record every kernel, three times over.
    /// Each launch's own durations go to `step_samples`, one vector per launch, where a sample's
    /// kernels are the suite's own.
    bool time_kernels(Prepared& p, std::size_t batch, std::size_t& per_sample, std::vector<double>& samples,
                      std::vector<std::vector<double>>& step_samples, TimingCost& cost);
    static constexpr std::size_t max_batch = 16;
    /// Ranges CUPTI records in one pass of a per-kernel profiler (measured: 16 on an H100 with
    /// CUDA 13.0); a pass cut shorter than that lowers `ranges_per_pass_` for the runner's life.
    static constexpr std::size_t max_ranges_per_pass = 16;
    static constexpr std::size_t max_library_kernels = 16; ///< kernels one library call may run
    void profile_case(const suite::VariantSpec& variant, Prepared& p, Staged& staged);
    /// A started case's buffers made afresh for its counters, with the content keys start() hashed,
    /// charging `r`.
    std::unique_ptr<Prepared> prepare_again(const Staged& staged, CaseResult& r);
    /// Restores a prepared case's inputs and empties the L2 before a profiled run, charging `r`.
    void ready_for_profiling(Prepared& p, CaseResult& r);
    /// What empties the L2 between a profiled run's launches (suite `timing.l2_flush`), charging
    /// `r`; empty where the L2 is emptied once per run, or never (--hot).
    std::function<void(std::size_t)> flush_between_launches(CaseResult& r);
    /// The counter-cache key of a prepared case: everything that determines its exact counters.
    std::string counter_key(const suite::VariantSpec& variant, const Prepared& p) const;

    GpuSession& session_;
    const suite::Suite* suite_;
    const std::map<std::string, compile::CompiledModule>* modules_;
    RunOptions options_;
    /// Modules loaded for the runner's life, by their suite's modules and key.
    std::map<std::pair<const std::map<std::string, compile::CompiledModule>*, std::string>, CUmodule> loaded_;
    StagingBuffer staging_; ///< host memory that buffers' initial contents are drawn into
    std::unique_ptr<profile::CaseProfiler> profiler_;
    /// Per-kernel durations for timing; null when timing with events (chosen, or CUPTI unusable).
    std::unique_ptr<profile::RangeProfiler> timer_;
    std::string timer_problem_;                         ///< why timer_ could not be made
    std::size_t ranges_per_pass_ = max_ranges_per_pass; ///< most kernels timed in one profiler pass
    std::unique_ptr<profile::CounterCache> counter_cache_;
    std::unique_ptr<ClockMonitor> clocks_; ///< the SM clock while timing; inert without NVML
    std::string profiler_identity_;        ///< chip, driver and CUPTI versions, for counter-cache keys
    StartupCost startup_;
};

/// The folders whose files reports may quote for a variant: the suite's project, its include
/// folders, the variant's own source folder (which --sources-anywhere may place elsewhere), and
/// the toolkit's headers.
ReadableFolders quotable_folders(const suite::Suite& suite, const suite::VariantSpec& variant);

/// Whether reports may quote lines of `path`, a file a kernel's line table names: the path rule
/// (core/readable_path.hxx) over quotable_folders(), so never a file in `.git`, a hard link or a
/// file outside them. A line table names whatever a kernel's `#line` or a module's builder
/// wrote, and reports are published: a file refused is named, never quoted.
bool may_quote_source(const suite::Suite& suite, const suite::VariantSpec& variant, const std::filesystem::path& path);

/// Where the hotspots of `variant`'s kernels find their files (`cubin` is its module's), which of
/// them reports may quote, and how reports name them. Holds references to `suite` and `variant`.
profile::CaseSource hotspot_source(const suite::Suite& suite, const suite::VariantSpec& variant,
                                   const std::string* cubin);

/// The file a module's line table names (`recorded`, as its builder gave it to nvcc, with the
/// table's folder): as recorded where it exists and the path rule lets it be read; else relative to the module's
/// folder, the suite's folder or the project; else the longest end of it that names a file of the project (a module
/// built in another folder or on another machine); else as recorded.
std::filesystem::path module_source_path(const suite::Suite& suite, const suite::VariantSpec& variant,
                                         const std::string& recorded);

} // namespace harness::run
