#include "harness/run/case_runner.hxx"

#include "harness/compile/cubin_info.hxx"
#include "harness/compile/launch_resources.hxx"
#include "harness/compile/nvrtc_compiler.hxx"
#include "harness/compile/occupancy.hxx"
#include "harness/core/input_files.hxx"
#include "harness/core/metrics.hxx"
#include "harness/core/stopwatch.hxx"
#include "harness/profile/case_profiler.hxx"
#include "harness/profile/counter_cache.hxx"
#include "harness/profile/range_profiler.hxx"
#include "harness/run/builtins.hxx"
#include "harness/run/clock_monitor.hxx"
#include "harness/run/launch_setup.hxx"
#include "harness/run/timing_stats.hxx"
#include "harness/suite/compile_params.hxx"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cupti_version.h>
#include <fmt/format.h>
#include <nvtx3/nvtx3.hpp>
#include <span>

namespace harness::run {

namespace {

struct harness_domain {
    static constexpr const char* name{"harness"};
};

std::int64_t eval(const suite::Expression& e, const suite::Bindings& params, const std::string& what)
{
    return evaluate_at(e, params, what);
}

const compile::KernelResources* kernel_of(const compile::CubinInfo& info, const std::string& symbol)
{
    for (const auto& k : info.kernels)
        if (k.name == symbol) return &k;
    return nullptr;
}

/// Page-locking for the staging buffer through the driver: uploads from page-locked memory skip
/// the driver's own bounce buffer.
StagingBuffer::Pinning page_locking()
{
    return {[](std::byte* p, std::size_t bytes) { return driver().cuMemHostRegister(p, bytes, 0) == CUDA_SUCCESS; },
            [](std::byte* p) { driver().cuMemHostUnregister(p); }};
}

} // namespace

struct CaseRunner::Prepared {
    struct Buffer {
        suite::BufferSpec spec;
        std::size_t count = 0;
        DeviceMemory device;
        DeviceMemory pristine;   // initial contents of inout buffers, restored before each timed run
        std::string content_key; // hash of the initial contents, for counter-cache keys
    };
    // The kernel's function, grid, block and arguments (launch_setup.hxx), or a library call.
    struct Launch : KernelLaunch {
        const BuiltinInfo* builtin = nullptr; // a library call instead of a kernel
        std::vector<BuiltinArg> builtin_args;
    };
    std::vector<std::unique_ptr<Buffer>> buffers;
    std::vector<Launch> launches;
    const compile::CompiledModule* compiled = nullptr; // null for a built-in

    Buffer* find(const std::string& name)
    {
        for (auto& b : buffers)
            if (b->spec.name == name) return b.get();
        return nullptr;
    }
};

std::filesystem::path module_source_path(const suite::Suite& suite, const suite::VariantSpec& variant,
                                         const std::string& recorded)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path path(recorded);
    // Looked at only where the path rule lets the tool read: a file elsewhere is named, never opened.
    if (path.is_absolute())
        if (const PathCheck check = check_readable_file(path, quotable_folders(suite, variant));
            check.verdict == PathVerdict::readable)
            return path;
    // The table is the module's, not ours: a name that climbs (..) is never looked for in the
    // project's folders, so that it cannot reach a file outside them.
    if (std::any_of(path.begin(), path.end(), [](const fs::path& part) { return part == ".."; })) return path;
    if (path.is_relative())
        for (const fs::path& base : {variant.module.parent_path(), suite.file.parent_path(), suite.project_root})
            if (fs::is_regular_file(base / path, ec)) return base / path;
    // Built in another folder or on another machine: the longest end of the recorded path that
    // names a file of the project ("/ci/work/tests/kernels/k.cu" -> <project>/kernels/k.cu).
    std::vector<fs::path> parts(path.begin(), path.end());
    for (std::size_t skip = 1; skip < parts.size(); ++skip) {
        fs::path tail;
        for (std::size_t k = skip; k < parts.size(); ++k) tail /= parts[k];
        if (fs::is_regular_file(suite.project_root / tail, ec)) return suite.project_root / tail;
    }
    return path; // as recorded: reports say where the module's builder found it
}

ReadableFolders quotable_folders(const suite::Suite& suite, const suite::VariantSpec& variant)
{
    ReadableFolders folders;
    folders.project = {suite.project_root};
    folders.project.insert(folders.project.end(), suite.include_dirs.begin(), suite.include_dirs.end());
    switch (variant.kind) {
    case suite::VariantKind::source: folders.project.push_back(variant.source.parent_path()); break;
    case suite::VariantKind::module:
    case suite::VariantKind::triton:
    case suite::VariantKind::cutile:
    case suite::VariantKind::builtin: break;
    }
    folders.toolkit = compile::toolkit_include_dirs();
    return folders;
}

bool may_quote_source(const suite::Suite& suite, const suite::VariantSpec& variant, const std::filesystem::path& path)
{
    const PathVerdict verdict = check_readable_file(path, quotable_folders(suite, variant)).verdict;
    return verdict == PathVerdict::readable || verdict == PathVerdict::missing; // nothing to quote then
}

profile::CaseSource hotspot_source(const suite::Suite& suite, const suite::VariantSpec& variant,
                                   const std::string* cubin)
{
    profile::CaseSource source;
    source.cubin = cubin;
    source.recorded_folders = suite::names_files_as_built(variant.kind);
    source.resolve = [&suite, &variant](const std::string& file) -> std::filesystem::path {
        if (suite::names_files_as_built(variant.kind)) return module_source_path(suite, variant, file);
        if (file == variant.source.filename().string()) return variant.source;
        for (const auto& dir : suite.include_dirs)
            if (std::filesystem::exists(dir / file)) return dir / file;
        return variant.source.parent_path() / file;
    };
    source.may_quote = [&suite, &variant](const std::filesystem::path& path) {
        return may_quote_source(suite, variant, path);
    };
    // Relative to the suite's project, so that reports read the same from any folder or machine.
    source.display = [&suite](const std::filesystem::path& path) {
        std::error_code ec;
        const auto relative = std::filesystem::relative(path, suite.project_root, ec);
        if (ec || relative.empty() || relative.native().starts_with("..")) return path.string();
        return relative.string();
    };
    return source;
}

CaseRunner::CaseRunner(GpuSession& session, const suite::Suite& suite,
                       const std::map<std::string, compile::CompiledModule>& modules, RunOptions options)
    : session_(session), suite_(&suite), modules_(&modules), options_(options), staging_(page_locking())
{
    auto mark = std::chrono::steady_clock::now();
    {
        CUdevice device = 0;
        char bus_id[64] = {};
        if (driver().cuDeviceGet(&device, session_.info().ordinal) == CUDA_SUCCESS &&
            driver().cuDeviceGetPCIBusId(bus_id, sizeof bus_id, device) == CUDA_SUCCESS)
            clocks_ = std::make_unique<ClockMonitor>(bus_id);
    }
    startup_.clock = seconds_since(mark);
    mark = std::chrono::steady_clock::now();
    if (options_.time_source == TimeSource::kernels && !options_.verify_only && !options_.external_profiler) {
        try {
            timer_ = std::make_unique<profile::RangeProfiler>(session_.context(), session_.info().ordinal,
                                                              std::vector<std::string>{"gpu__time_duration.sum"},
                                                              profile::RangeMode::per_kernel);
        } catch (const std::exception& e) {
            timer_problem_ = e.what();
        }
    }
    startup_.timer = seconds_since(mark);
    mark = std::chrono::steady_clock::now();
    if (options_.profile && !options_.external_profiler) {
        profiler_ = std::make_unique<profile::CaseProfiler>(session_.context(), session_.info().ordinal,
                                                            profile::plan_profile(options_.metrics));
        startup_.profiler = seconds_since(mark);
        if (!options_.counter_cache_dir.empty()) {
            counter_cache_ = std::make_unique<profile::CounterCache>(options_.counter_cache_dir);
            std::uint32_t cupti_version = 0;
            cuptiGetVersion(&cupti_version);
            profiler_identity_ = fmt::format("{} driver {} cupti {}", profile::chip_name(session_.info().ordinal),
                                             session_.info().driver_version, cupti_version);
        }
    }
}

CaseRunner::~CaseRunner()
{
    for (auto& [name, module] : loaded_) driver().cuModuleUnload(module);
}

void CaseRunner::use_suite(const suite::Suite& suite, const std::map<std::string, compile::CompiledModule>& modules)
{
    if (&suite == suite_ && &modules == modules_) return;
    // Where groups span suites, loaded modules stay loaded, each suite's under its own modules: a
    // case timed in one suite may be measured after another suite's cases were started, and
    // modules unloaded and loaded again between a case's timing and its SASS measurement gave
    // wrong instruction counts and a crash on an H100.
    if (!options_.groups_span_suites) {
        for (auto& [id, module] : loaded_) driver().cuModuleUnload(module);
        loaded_.clear();
    }
    suite_ = &suite;
    modules_ = &modules;
    if (profiler_ && suite.metrics != options_.metrics) {
        profiler_.reset();
        profiler_ = std::make_unique<profile::CaseProfiler>(session_.context(), session_.info().ordinal,
                                                            profile::plan_profile(suite.metrics));
    }
    options_.metrics = suite.metrics;
}

CUmodule CaseRunner::module_for(const std::string& key)
{
    // Module keys name a variant and its compile configuration, not the suite: another suite's
    // may use the same key for another module.
    const auto id = std::pair{modules_, key};
    if (auto it = loaded_.find(id); it != loaded_.end()) return it->second;
    const auto& compiled = modules_->at(key);
    CUmodule module = nullptr;
    CU_CHECK(driver().cuModuleLoadData(&module, compiled.cubin.data()));
    loaded_[id] = module;
    return module;
}

std::unique_ptr<CaseRunner::Prepared> CaseRunner::prepare(const suite::VariantSpec& variant,
                                                          const suite::Bindings& params, bool hash_contents)
{
    const Driver& d = driver();
    auto p = std::make_unique<Prepared>();

    // Allocate only the buffers this variant's launches use.
    std::size_t total_bytes = 0;
    for (const auto& spec : suite_->buffers_of(variant)) {
        if (!suite::uses_buffer(variant, spec.name)) continue;
        check_type_on_gpu(spec.type, session_.info().arch, "buffer " + spec.name);
        auto b = std::make_unique<Prepared::Buffer>();
        b->spec = spec;
        const std::int64_t count = eval(spec.count, params, "buffer " + spec.name + " count");
        if (count < 1) throw LaunchProblem(fmt::format("buffer {} has count {}", spec.name, count));
        b->count = static_cast<std::size_t>(count);
        b->device.bytes = b->count * suite::element_size(spec.type);
        total_bytes += b->device.bytes * (spec.role == suite::BufferRole::inout ? 2 : 1);
        p->buffers.push_back(std::move(b));
    }
    std::size_t free_bytes = 0, total = 0;
    CU_CHECK(d.cuMemGetInfo(&free_bytes, &total));
    if (total_bytes > free_bytes)
        throw LaunchProblem(fmt::format("buffers need {:.1f} MiB, the GPU has {:.1f} MiB free", total_bytes / 1048576.0,
                                        free_bytes / 1048576.0));
    for (auto& b : p->buffers) {
        CU_CHECK(d.cuMemAlloc(&b->device.ptr, b->device.bytes));
        // Drawn into one host buffer kept for every case: its pages are faulted in once per worker,
        // not once per buffer of every case (most of the drawing time of large buffers).
        const auto host = staging_.get(b->device.bytes);
        draw_contents(b->spec, b->count, params, host.data());
        staging_.written(host.size());
        if (counter_cache_ && hash_contents) {
            profile::CounterKey contents;
            contents.add("contents", std::as_bytes(host));
            b->content_key = contents.finish();
        }
        CU_CHECK(d.cuMemcpyHtoD(b->device.ptr, host.data(), host.size()));
        if (b->spec.role == suite::BufferRole::inout) {
            b->pristine.bytes = b->device.bytes;
            CU_CHECK(d.cuMemAlloc(&b->pristine.ptr, b->pristine.bytes));
            // On the session stream: a plain device-to-device copy returns before it finishes and
            // our (non-blocking) stream would not wait for it.
            CU_CHECK(d.cuMemcpyDtoDAsync(b->pristine.ptr, b->device.ptr, b->device.bytes, session_.stream()));
        }
    }
    CU_CHECK(d.cuStreamSynchronize(session_.stream()));

    switch (variant.kind) {
    case suite::VariantKind::builtin: {
        Prepared::Launch l;
        l.builtin = find_builtin(variant.builtin);
        for (std::size_t ai = 0; ai < variant.launches[0].args.size(); ++ai) {
            const auto& a = variant.launches[0].args[ai];
            BuiltinArg value;
            value.is_pointer = a.is_buffer();
            if (a.is_buffer())
                value.pointer = p->find(a.buffer)->device.ptr;
            else
                value.scalar =
                    a.literal ? *a.literal : static_cast<double>(eval(a.scalar, params, fmt::format("args[{}]", ai)));
            l.builtin_args.push_back(value);
        }
        p->launches.push_back(std::move(l));
        return p;
    }
    case suite::VariantKind::source:
    case suite::VariantKind::module:
    case suite::VariantKind::triton:
    case suite::VariantKind::cutile: break; // kernels of the compiled module, set up below
    }

    const std::string key = suite::compile_key(variant, params);
    p->compiled = &modules_->at(key);
    CUmodule module = module_for(key);
    for (std::size_t li = 0; li < variant.launches.size(); ++li) {
        Prepared::Launch l;
        static_cast<KernelLaunch&>(l) = set_up_kernel_launch(
            variant, li, module, *p->compiled, params,
            [&](const std::string& name) { return p->find(name)->device.ptr; }, session_.info().arch);
        p->launches.push_back(std::move(l));
    }
    return p;
}

void CaseRunner::launch_all(Prepared& p)
{
    for (std::size_t step = 0; step < p.launches.size(); ++step) launch_step(p, step);
}

void CaseRunner::launch_step(Prepared& p, std::size_t step)
{
    auto& l = p.launches[step];
    if (l.builtin)
        l.builtin->call(l.builtin_args, session_.stream());
    else
        enqueue(l, session_.stream());
}

std::map<std::string, Bytes> CaseRunner::download_outputs(Prepared& p)
{
    std::map<std::string, Bytes> out;
    for (auto& b : p.buffers) {
        if (b->spec.role != suite::BufferRole::out && b->spec.role != suite::BufferRole::inout) continue;
        Bytes host(b->device.bytes);
        CU_CHECK(driver().cuMemcpyDtoH(host.data(), b->device.ptr, host.size()));
        out[b->spec.name] = std::move(host);
    }
    return out;
}

std::map<std::string, Bytes> CaseRunner::reference_outputs(const suite::Case& c)
{
    const auto& variant = *suite_->find_variant(suite_->reference);
    auto p = prepare(variant, c.params, false); // the reference's outputs are not profiled
    launch_all(*p);
    CU_CHECK(driver().cuStreamSynchronize(session_.stream()));
    return download_outputs(*p);
}

CaseRunner::Staged CaseRunner::start(const suite::Case& c, ReferenceOutputs& reference, double budget_s)
{
    const Driver& d = driver();
    const auto& variant = suite_->variants[c.variant];
    const bool is_reference = variant.name == suite_->reference;
    Staged staged;
    staged.suite = suite_;
    staged.modules = modules_;
    staged.variant = &variant;
    staged.params = c.params;
    CaseResult& r = staged.result;
    r.suite = suite_->name;
    r.variant = variant.name;
    r.arch = session_.info().arch;
    r.params = {c.params.begin(), c.params.end()};
    r.params_text = c.params_text;
    r.launches = suite::case_launches(*suite_, variant, c.params);

    using Clock = std::chrono::steady_clock;
    auto mark = Clock::now();
    std::unique_ptr<Prepared> p;
    try {
        if (!is_reference)
            r.cost.reference = ensure_reference(*suite_, c, reference, [&] { return reference_outputs(c); });
        p = prepare(variant, c.params, true);
    } catch (const LaunchProblem& e) {
        r.status = CaseStatus::launch_error;
        r.message = e.what();
        return staged;
    }

    r.cost.prepare = seconds_since(mark);
    mark = Clock::now();
    // Under an external profiler, the case runs once unprofiled first, then with its inputs
    // restored and the L2 emptied, so that the profiled run is a warm one, as every timed sample
    // is: a kernel's first launch in a process is slower (ncu read memory_copy's first case
    // N=1000003 at 5.6 us, the same kernel later in the run at 5.15 us, our samples at 5.12 us).
    // Only that run is between cuProfilerStart and cuProfilerStop, for `ncu --profile-from-start off`.
    if (options_.external_profiler) {
        launch_all(*p);
        restore_and_flush(*p);
        CU_CHECK(d.cuStreamSynchronize(session_.stream()));
        CU_CHECK(d.cuProfilerStart());
    }
    // The verification run: its output is checked, and it doubles as the first warm-up. Its NVTX
    // range holds this case's kernels and nothing else (not the reference's), so an external
    // profiler can select exactly one run of each case.
    {
        nvtx3::scoped_range_in<harness_domain> range{variant.name + " " + c.params_text};
        launch_all(*p);
        CU_CHECK(d.cuStreamSynchronize(session_.stream()));
    }
    if (options_.external_profiler) CU_CHECK(d.cuProfilerStop());
    auto outputs = download_outputs(*p);
    r.status = CaseStatus::passed;
    if (is_reference) {
        reference.suite = suite_;
        reference.point = c.point;
        reference.buffers = outputs;
        r.message = "reference";
    } else {
        std::vector<CaseOutput> checked;
        for (const auto& b : p->buffers)
            if (const auto it = outputs.find(b->spec.name); it != outputs.end())
                checked.push_back({&b->spec, b->count, &it->second});
        verify_outputs(*suite_, checked, reference, r);
    }

    if (suite::runs_module_kernels(variant.kind)) read_resources(*p, r);
    r.cost.verify = seconds_since(mark);
    if (options_.verify_only || options_.external_profiler) return staged;
    mark = Clock::now();
    time_case(variant, c, *p, budget_s, r);
    r.cost.timing = seconds_since(mark);
    // The counters are measured later, by finish(): a worker times a group of cases, then
    // measures all their counters, so that the timer and the counter profiler take turns on the
    // context's one enabled range profiler once per group, not once per case.
    staged.profile = profiler_ != nullptr;
    for (const auto& b : p->buffers) staged.content_keys.push_back(b->content_key);
    staged.launches = p->launches.size();
    // Looked up while the case's buffers are at hand, so that the worker knows which cases need
    // only their noisy counters and can measure those of several at once (finish_batch).
    if (staged.profile && counter_cache_ && suite::runs_module_kernels(variant.kind)) {
        staged.counter_key = counter_key(variant, *p);
        if (!options_.fresh_counters) staged.cached = counter_cache_->load(staged.counter_key);
    }
    return staged;
}

CaseResult CaseRunner::finish(Staged staged)
{
    if (!staged.profile) return std::move(staged.result);
    use_suite(*staged.suite, *staged.modules);
    // The buffers are made afresh, as start() made them, not held from it: a case runs with no
    // other case's buffers allocated, since where its own land moves its DRAM traffic (held
    // buffers moved tiled32 N=2048's DRAM reads by 5.5 % on an H100).
    const auto p = prepare_again(staged, staged.result);
    profile_case(*staged.variant, *p, staged);
    return std::move(staged.result);
}

namespace {

void use_cached_counters(const profile::CachedCounters& cached, CaseResult& r)
{
    for (const auto& m : cached.metrics) {
        r.set_metric(m.name, m.value);
        r.reused_metrics.push_back(m.name);
    }
    r.hotspots = cached.hotspots;
}

} // namespace

bool CaseRunner::batchable(const Staged& staged) const
{
    return staged.profile && staged.cached && staged.launches > 0 && profiler_ && profiler_->batches_noisy();
}

std::optional<std::vector<CaseResult>> CaseRunner::finish_batch(const std::vector<Staged>& batch,
                                                                const std::function<void(std::size_t)>& on_begin)
{
    if (batch.empty()) return std::vector<CaseResult>{};
    for (const auto& staged : batch)
        if (!batchable(staged) || staged.suite != batch.front().suite)
            throw Error(ErrorKind::internal, "a batch of cases that are not all batchable cases of one suite");
    use_suite(*batch.front().suite, *batch.front().modules);
    const Driver& d = driver();
    std::vector<CaseResult> results;
    for (const auto& staged : batch) {
        results.push_back(staged.result);
        use_cached_counters(*staged.cached, results.back());
    }
    // The case whose turn it is holds its buffers; none other has any allocated. Made afresh, as
    // finish() makes them (see there).
    std::unique_ptr<Prepared> current;
    std::vector<profile::CaseProfiler::NoisyCase> cases;
    for (std::size_t k = 0; k < batch.size(); ++k) {
        const Staged& staged = batch[k];
        CaseResult& r = results[k];
        profile::BatchCase steps;
        steps.prepare = [&, k] {
            on_begin(k);
            current = prepare_again(staged, r);
            ready_for_profiling(*current, r);
        };
        steps.launches = staged.launches;
        steps.launch = [&](std::size_t step) {
            launch_step(*current, step);
            CU_CHECK(d.cuStreamSynchronize(session_.stream()));
        };
        steps.done = [&] { current.reset(); };
        steps.between = flush_between_launches(r);
        cases.push_back({std::move(steps), &r});
    }
    if (!profiler_->profile_noisy_batch(cases)) return std::nullopt;
    return results;
}

void CaseRunner::restore_and_flush(Prepared& p)
{
    const Driver& d = driver();
    for (auto& b : p.buffers)
        if (b->pristine.ptr)
            CU_CHECK(d.cuMemcpyDtoDAsync(b->device.ptr, b->pristine.ptr, b->device.bytes, session_.stream()));
    if (!options_.hot) session_.flush_l2();
}

std::unique_ptr<CaseRunner::Prepared> CaseRunner::prepare_again(const Staged& staged, CaseResult& r)
{
    const auto mark = std::chrono::steady_clock::now();
    auto p = prepare(*staged.variant, staged.params, false);
    for (std::size_t i = 0; i < p->buffers.size() && i < staged.content_keys.size(); ++i)
        p->buffers[i]->content_key = staged.content_keys[i];
    r.cost.prepare += seconds_since(mark);
    return p;
}

std::function<void(std::size_t)> CaseRunner::flush_between_launches(CaseResult& r)
{
    // Before each launch but the first (which prepare's flush serves), outside its range, so that
    // its counters are its own: what the launch before it left dirty in the L2 is written back
    // here, not charged to it.
    if (options_.hot || suite_->timing.l2_flush == suite::L2Flush::each_variant) return {};
    return [this, &r](std::size_t) {
        const auto mark = std::chrono::steady_clock::now();
        session_.flush_l2();
        CU_CHECK(driver().cuStreamSynchronize(session_.stream()));
        r.cost.profile.l2_flush += seconds_since(mark);
    };
}

void CaseRunner::ready_for_profiling(Prepared& p, CaseResult& r)
{
    const Driver& d = driver();
    auto mark = std::chrono::steady_clock::now();
    for (auto& b : p.buffers)
        if (b->pristine.ptr)
            CU_CHECK(d.cuMemcpyDtoDAsync(b->device.ptr, b->pristine.ptr, b->device.bytes, session_.stream()));
    CU_CHECK(d.cuStreamSynchronize(session_.stream()));
    r.cost.profile.restore += seconds_since(mark);
    mark = std::chrono::steady_clock::now();
    if (!options_.hot) session_.flush_l2();
    CU_CHECK(d.cuStreamSynchronize(session_.stream()));
    r.cost.profile.l2_flush += seconds_since(mark);
}

void CaseRunner::profile_case(const suite::VariantSpec& variant, Prepared& p, Staged& staged)
{
    CaseResult& r = staged.result;
    const Driver& d = driver();
    profile::CaseSource source;
    if (suite::runs_module_kernels(variant.kind)) source = hotspot_source(*suite_, variant, &p.compiled->cubin);
    // Each profiled run starts with restored inputs and (unless --hot) a cold, clean L2, so its
    // DRAM traffic is its own, as under Nsight Compute's default cache control.
    const auto prepare = [&] { ready_for_profiling(p, r); };
    std::vector<std::function<void()>> steps;
    for (std::size_t step = 0; step < p.launches.size(); ++step)
        steps.emplace_back([&, step] {
            launch_step(p, step);
            CU_CHECK(d.cuStreamSynchronize(session_.stream()));
        });
    const auto between = flush_between_launches(r);
    if (staged.cached) {
        use_cached_counters(*staged.cached, r);
        profiler_->profile_noisy(prepare, steps, r, between);
        return;
    }
    profiler_->profile(prepare, steps, source, r, between);
    if (const std::string& key = staged.counter_key; !key.empty()) {
        profile::CachedCounters fresh;
        for (const auto& m : r.metrics)
            if (profile::cached_metric(m.name)) fresh.metrics.push_back(m);
        fresh.hotspots = r.hotspots;
        counter_cache_->store(key, fresh);
    }
}

std::string CaseRunner::counter_key(const suite::VariantSpec& variant, const Prepared& p) const
{
    profile::CounterKey key;
    key.add("harness", HARNESS_VERSION);
    key.add("profiler", profiler_identity_);
    key.add("arch", session_.info().arch);
    for (const auto& name : options_.metrics) key.add("metric", name);
    key.add("hot cache", std::int64_t{options_.hot});
    const std::string& module = p.compiled->cubin;
    key.add("module", std::as_bytes(std::span(module.data(), module.size())));
    for (const auto& b : p.buffers) {
        key.add("buffer", b->spec.name);
        key.add("type", std::string(suite::element_type_name(b->spec.type)));
        key.add("role", std::int64_t{static_cast<int>(b->spec.role)});
        key.add("count", static_cast<std::int64_t>(b->count));
        key.add("contents", b->content_key);
    }
    for (std::size_t li = 0; li < p.launches.size(); ++li) {
        const auto& l = p.launches[li];
        key.add("launch", l.symbol);
        for (const unsigned d : l.grid) key.add("grid", std::int64_t{d});
        for (const unsigned d : l.block) key.add("block", std::int64_t{d});
        key.add("dynamic shared", std::int64_t{l.shared_bytes});
        const auto& args = variant.launches[li].args;
        for (std::size_t ai = 0; ai < args.size(); ++ai) {
            if (args[ai].is_buffer())
                key.add("buffer argument", args[ai].buffer);
            else
                key.add("scalar argument", std::as_bytes(std::span(l.scalar_storage[ai])));
        }
    }
    return key.finish();
}

void CaseRunner::read_resources(Prepared& prepared, CaseResult& r)
{
    const Driver& d = driver();
    auto* p = &prepared;
    // Static resources of the kernels as loaded; a multi-launch variant reports its most
    // demanding kernel (most registers, least occupancy).
    const compile::ArchLimits* limits = compile::find_arch_limits(session_.info().arch);
    compile::CubinInfo cubin_info = compile::read_cubin_info(p->compiled->cubin);
    // Spills are stated by ptxas' report only: the static tier's figures, measured here too, so
    // that a GPU run gates them against the same architecture baseline.
    const auto reported = compile::parse_ptxas_log(p->compiled->log);
    compile::merge_ptxas_log(cubin_info, reported);
    compile::ResourceTotals totals;
    for (std::size_t li = 0; li < p->launches.size(); ++li) {
        auto& l = p->launches[li];
        int regs = 0, smem = 0, lmem = 0, active = 0;
        CU_CHECK(d.cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, l.function));
        CU_CHECK(d.cuFuncGetAttribute(&smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, l.function));
        CU_CHECK(d.cuFuncGetAttribute(&lmem, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, l.function));
        const int threads = static_cast<int>(l.block[0] * l.block[1] * l.block[2]);
        CU_CHECK(d.cuOccupancyMaxActiveBlocksPerMultiprocessor(&active, l.function, threads, l.shared_bytes));
        const int warps = (threads + 31) / 32;
        compile::LaunchResources launch{.registers = regs,
                                        .static_shared_bytes = smem,
                                        .dynamic_shared_bytes = static_cast<int>(l.shared_bytes),
                                        .local_bytes = lmem,
                                        .blocks_per_sm = active,
                                        .occupancy =
                                            static_cast<double>(active * warps) / session_.info().max_warps_per_sm};
        const compile::KernelResources* kernel = kernel_of(cubin_info, l.symbol);
        if (kernel) launch.barriers = kernel->barriers;
        const bool in_report = std::any_of(reported.begin(), reported.end(),
                                           [&](const compile::KernelResources& k) { return k.name == l.symbol; });
        if (kernel && in_report) {
            launch.spill_store_bytes = kernel->spill_store_bytes.value_or(0);
            launch.spill_load_bytes = kernel->spill_load_bytes.value_or(0);
        }
        // The driver gives the blocks; the calculator says what limits them, and must agree.
        if (limits) {
            compile::OccupancyOptions o;
            o.barriers_per_block = kernel ? kernel->barriers : 0;
            o.shared_opt_in = l.shared_bytes > 48 * 1024;
            const auto calc =
                compile::theoretical_occupancy(*limits, threads, regs, smem + static_cast<int>(l.shared_bytes), o);
            launch.limiter = calc.limiter;
            if (calc.blocks_per_sm != active)
                r.message += fmt::format("{}occupancy calculator says {} blocks/SM, the driver {}",
                                         r.message.empty() ? "" : "; ", calc.blocks_per_sm, active);
        }
        totals.add(launch, li < r.launches.size() ? r.launches[li].label : std::string());
    }
    totals.write(r);
}

bool CaseRunner::time_kernels(Prepared& p, std::size_t batch, std::size_t& per_sample, std::vector<double>& samples,
                              std::vector<std::vector<double>>& step_samples, TimingCost& cost)
{
    // Every step of a sample begins with the sweep kernel (the L2 flush, or a marker that does
    // nothing under --hot), so each kernel starts cold, as under Nsight Compute's cache control;
    // every kernel is a profiler range of its own, and a sample's time is the sum of its steps'
    // GPU durations, without the launch latency before and between them.
    // A library call may run any number of kernels: the first sample, taken alone, says how many.
    const std::size_t steps = p.launches.size();
    const std::size_t most = per_sample > 0 ? per_sample : steps * (1 + max_library_kernels);
    batch = std::clamp<std::size_t>(per_sample > 0 ? ranges_per_pass_ / per_sample : 1, 1, batch);
    for (int attempt = 0; attempt < 3; ++attempt) {
        const auto body = [&] {
            for (std::size_t i = 0; i < batch; ++i) {
                restore_and_flush(p); // the first step's sweep, unless --hot
                for (std::size_t step = 0; step < steps; ++step) {
                    if (options_.hot || (step > 0 && suite_->timing.l2_flush == suite::L2Flush::each_variant))
                        session_.launch_marker();
                    else if (step > 0)
                        session_.flush_l2();
                    launch_step(p, step);
                }
                CU_CHECK(driver().cuStreamSynchronize(session_.stream()));
            }
        };
        // Room for more ranges than expected, so that a count that is off shows as such.
        profile::RangeTimings t;
        const auto kernels = timer_->measure_kernels(body, 2 * batch * most + 4, &t);
        cost.setup += t.setup;
        cost.samples += t.launches;
        cost.teardown += t.teardown;
        cost.passes += 1;
        cost.enables += t.enabled ? 1 : 0;
        // A library call's sample: its one sweep, then however many kernels the call ran.
        if (per_sample == 0 && batch == 1 && steps == 1 && kernels.size() >= 2 && kernels.size() <= most)
            per_sample = kernels.size();
        // CUPTI names these ranges by a running count, not by kernel: samples are told apart by
        // their number of kernels, and a batch with a range missing or extra is taken again. A
        // batch cut short after whole samples met CUPTI's limit of ranges in a pass, which then
        // bounds every later batch; any other miscount is retried one sample at a time.
        if (per_sample == 0 || kernels.size() != batch * per_sample) {
            ++cost.retaken;
            const bool cut_short = per_sample > 0 && kernels.size() < batch * per_sample &&
                                   kernels.size() >= per_sample && kernels.size() % per_sample == 0;
            if (cut_short) ranges_per_pass_ = kernels.size();
            batch = cut_short ? ranges_per_pass_ / per_sample : 1;
            continue;
        }
        for (std::size_t i = 0; i < batch; ++i) {
            const auto* first = &kernels[i * per_sample];
            double us = 0;
            if (per_sample == 2 * steps) { // sweep, kernel, sweep, kernel, ...
                step_samples.resize(steps);
                for (std::size_t step = 0; step < steps; ++step) {
                    const double step_us = first[2 * step + 1].values.at(0) * 1e-3;
                    step_samples[step].push_back(step_us);
                    us += step_us;
                }
            } else { // one library call: the sweep, then its kernels
                for (std::size_t k = 1; k < per_sample; ++k) us += first[k].values.at(0) * 1e-3;
            }
            samples.push_back(us);
        }
        return true;
    }
    return false;
}

void CaseRunner::warm_up_for_timing(Prepared& p)
{
    // Timing: its own pass, with the L2 flushed and inout buffers restored before every sample.
    restore_and_flush(p);
    launch_all(p); // second warm-up, after the verification run
    CU_CHECK(driver().cuStreamSynchronize(session_.stream()));
}

double CaseRunner::event_sample(Prepared& p)
{
    const Driver& d = driver();
    restore_and_flush(p);
    CU_CHECK(d.cuEventRecord(session_.start_event(), session_.stream()));
    launch_all(p);
    CU_CHECK(d.cuEventRecord(session_.stop_event(), session_.stream()));
    CU_CHECK(d.cuEventSynchronize(session_.stop_event()));
    float ms = 0;
    CU_CHECK(d.cuEventElapsedTime(&ms, session_.start_event(), session_.stop_event()));
    return ms * 1e3;
}

TimeSamples CaseRunner::take_samples(const suite::VariantSpec& variant, Prepared& p, const suite::TimingSpec& policy,
                                     ClockWatch& clock, CaseResult& r)
{
    TimeSamples taken;
    const auto begin = std::chrono::steady_clock::now();
    std::size_t batch = 1;
    // Kernels per sample, the sweep's included: known for the suite's own kernels.
    std::size_t kernels_per_sample = suite::runs_module_kernels(variant.kind) ? 2 * p.launches.size() : 0;
    bool by_kernels = timer_ != nullptr;
    for (;;) {
        if (by_kernels && !time_kernels(p, batch, kernels_per_sample, taken.total, taken.steps, r.cost.timing_parts)) {
            // Every sample of a case is measured the same way: start again with events.
            by_kernels = false;
            taken.clear();
            clock.restart();
            r.message += fmt::format("{}timed with CUDA events: the profiler did not record every kernel of a "
                                     "sample",
                                     r.message.empty() ? "" : "; ");
        }
        if (!by_kernels) taken.total.push_back(event_sample(p));
        const double elapsed = seconds_since(begin);
        const bool enough = enough_samples(taken.total, elapsed, policy);
        clock.after_samples(taken.total.size(), enough);
        if (enough) return taken;
        // Per-kernel durations are read in batches (one profiler pass each), sized so the budget holds.
        batch = next_batch_size(taken.total.size(), elapsed, policy, max_batch);
    }
}

namespace {

/// Drops the samples taken while the SM clock was throttled, as long as `min_samples` others
/// remain, and says so in the case's message.
void drop_throttled(TimeSamples& taken, ClockWatch& clock, int min_samples, std::string& message)
{
    if (!clock.slowest()) return;
    const std::size_t before = taken.total.size();
    taken.keep_only(clock.keep(before, static_cast<std::size_t>(min_samples)));
    const std::size_t dropped = before - taken.total.size();
    const ClockReading& slowest = *clock.slowest();
    message += fmt::format("{}{}", message.empty() ? "" : "; ",
                           dropped > 0 ? fmt::format("dropped {} of {} time samples taken while the SM clock was "
                                                     "throttled ({})",
                                                     dropped, before, slowest.describe())
                                       : fmt::format("timed while the SM clock was throttled ({}); too few "
                                                     "other samples to drop them",
                                                     slowest.describe()));
}

/// A case's time figures from its samples: median, minimum, noise and count, each launch's own
/// median where every sample was read kernel by kernel, and the rates its `flops` and `bytes` give.
void set_time_metrics(const suite::VariantSpec& variant, const suite::Case& c, const TimeSamples& taken, CaseResult& r)
{
    const TimingSummary t = summarize(taken.total);
    r.time_samples_us = taken.total;
    set_time_figures(r, t);
    // Each launch's own median duration, where the variant has several and every sample was read
    // kernel by kernel: reported beside the variant's total, which is what the time gate judges.
    if (taken.steps.size() == r.launches.size())
        for (std::size_t step = 0; step < taken.steps.size(); ++step)
            if (!r.launches[step].label.empty() && taken.steps[step].size() == taken.total.size() &&
                !taken.total.empty())
                r.set_metric(launch_metric_name(metric::time_median, r.launches[step].label),
                             summarize(taken.steps[step]).median_us);
    if (variant.flops) {
        const double flops = static_cast<double>(eval(*variant.flops, c.params, "flops"));
        r.set_metric(metric::gflops, flops / (t.median_us * 1e3));
    }
    if (variant.bytes) {
        const double bytes = static_cast<double>(eval(*variant.bytes, c.params, "bytes"));
        r.set_metric(metric::bandwidth, bytes / (t.median_us * 1e3));
    }
}

} // namespace

void CaseRunner::time_case(const suite::VariantSpec& variant, const suite::Case& c, Prepared& p, double budget_s,
                           CaseResult& r)
{
    warm_up_for_timing(p);
    // The suite's policy (its sample counts and noise), within the run's budget for the suite.
    suite::TimingSpec policy = suite_->timing;
    policy.budget_s = budget_s;
    // Samples taken while the SM clock was throttled (below 75 % of its maximum, or slowed by
    // power or heat) are dropped, as long as enough others remain.
    ClockWatch clock(clocks_.get());
    TimeSamples taken = take_samples(variant, p, policy, clock, r);
    drop_throttled(taken, clock, policy.min_samples, r.message);
    if (!timer_ && options_.time_source == TimeSource::kernels)
        r.message += fmt::format("{}timed with CUDA events, kernel durations are unreadable: {}",
                                 r.message.empty() ? "" : "; ", timer_problem_);
    set_time_metrics(variant, c, taken, r);
}

} // namespace harness::run
