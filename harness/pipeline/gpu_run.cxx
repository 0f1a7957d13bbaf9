#include "harness/pipeline/gpu_run.hxx"

#include "harness/compile/compile_suite.hxx"
#include "harness/compile/kernel_arguments.hxx"
#include "harness/compile/launch_bounds.hxx"
#include "harness/core/metrics.hxx"
#include "harness/core/stopwatch.hxx"
#include "harness/core/text.hxx"
#include "harness/pipeline/case_costs.hxx"
#include "harness/pipeline/changed_only.hxx"
#include "harness/pipeline/device_choice.hxx"
#include "harness/pipeline/gpu_scan.hxx"
#include "harness/pipeline/report_header.hxx"
#include "harness/pipeline/shard.hxx"
#include "harness/run/device_schedule.hxx"
#include "harness/run/isolated_runner.hxx"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <fmt/format.h>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <unistd.h>

namespace harness::pipeline {

namespace {

/// A one-line progress display: rewritten in place on a terminal, one line per case otherwise.
class Progress {
public:
    explicit Progress(std::size_t total) : total_(total), tty_(isatty(STDERR_FILENO)) {}
    void begin(const CaseResult& c)
    {
        if (tty_) fmt::print(stderr, "\r\033[K[{}/{}] {} {} ...", done_ + 1, total_, c.variant, c.params_text);
    }
    void end(const CaseResult& r)
    {
        ++done_;
        const auto t = r.metric(metric::time_median);
        const std::string what = r.status == CaseStatus::passed
                                     ? (t ? fmt::format("ok {:.2f} us", *t) : std::string("ok"))
                                     : case_status_name(r.status);
        if (tty_)
            fmt::print(stderr, "\r\033[K[{}/{}] {} {} {}", done_, total_, r.variant, r.params_text, what);
        else
            fmt::print(stderr, "[{}/{}] {} {} {}\n", done_, total_, r.variant, r.params_text, what);
        if (tty_ && done_ == total_) fmt::print(stderr, "\r\033[K");
    }

private:
    std::size_t total_;
    std::size_t done_ = 0;
    bool tty_;
};

/// One suite made ready for the GPU: compiled, and its cases sorted into those that run and those
/// that failed already; then, after the run, its results and what its share of the run cost.
struct SuitePlan {
    suite::Suite suite;
    run::RunSettings settings; ///< resolved for the suite
    ShardInfo shard;
    std::vector<suite::Case> cases;
    compile::SuiteModules compiled;
    double compile_seconds = 0;
    std::vector<CaseResult> results;         ///< one per case
    std::vector<suite::Case> runnable;       ///< the cases whose variant and reference compiled
    std::vector<std::size_t> runnable_index; ///< of each runnable case in `cases`
    std::vector<double> costs;               ///< expected seconds of each runnable case
    /// Per point: what a GPU pays to compute its reference outputs without its reference case.
    std::map<std::size_t, double> recompute_s;
    CostSources cost_sources;
    std::optional<CaseCostBook> book;
    SassCodeFile sass_code;         ///< the cases' normalised SASS (changed_only.hxx)
    std::vector<std::string> notes; ///< for the report's notes
};

/// What the run's execution over the GPUs cost, for every suite's notes.
struct ExecutionNotes {
    std::size_t workers = 0;
    double worker_seconds = 0;
    std::map<std::string, double> worker_parts;
    std::vector<std::string> devices; ///< the spread over several GPUs, run-wide; empty on one
};

bool collects_counters(const run::RunSettings& settings)
{
    return settings.profile && !settings.verify_only && !settings.external_profiler;
}

SuitePlan plan_suite(suite::Suite s, const run::RunSettings& settings, const run::DeviceInfo& device,
                     const compile::CompileCache* cache)
{
    run::check_resolved(settings, s);
    SuitePlan plan;
    plan.settings = settings;
    for (auto& c : cases_to_run(s, settings, plan.shard)) {
        const auto& name = s.variants[c.variant].name;
        const auto& only = settings.variants;
        if (!only.empty() && name != s.reference && std::find(only.begin(), only.end(), name) == only.end()) continue;
        const auto& cases_wanted = settings.only_cases;
        if (!cases_wanted.empty() && std::none_of(cases_wanted.begin(), cases_wanted.end(), [&](const auto& w) {
                return w.second == c.params_text && (w.first == name || name == s.reference);
            }))
            continue;
        plan.cases.push_back(std::move(c));
    }
    fmt::print(stderr, "harness: suite {} on {} ({}), compiling...\n", s.name, device.name, device.arch);
    const auto compile_start = std::chrono::steady_clock::now();
    plan.compiled = compile::compile_suite(s, plan.cases, device.arch, cache);
    plan.compile_seconds = seconds_since(compile_start);
    // Before any launch: arguments the kernels' parameters do not take would run with garbage.
    compile::check_kernel_arguments(s, plan.compiled);
    // And blocks the kernels' __launch_bounds__ do not take, which the driver would refuse.
    compile::check_launch_bounds(s, plan.cases, plan.compiled);
    // A scanned axis is timed point by point by the GPU scan after the cases (gpu_scan.hxx): only
    // the scan's two ends stay full cases. Compiled above for every point, so the scan finds every
    // configuration.
    if (scans_on_gpu(s, settings, plan.shard)) plan.cases = scan_end_cases(s, std::move(plan.cases));
    // The cases' normalised SASS, for baseline updates, diffs and --changed-only (changed_only.hxx).
    std::string sass_missing;
    plan.sass_code = gpu_sass_code(s, plan.cases, plan.compiled, device.arch, cache, &sass_missing);
    std::vector<bool> carried(plan.cases.size(), false);
    if (settings.changed_only && !sass_missing.empty()) {
        plan.notes.push_back("--changed-only: every case runs: the SASS cannot be read: " + sass_missing);
    } else if (settings.changed_only) {
        ChangedOnlyPlan changed = plan_changed_only(s, plan.cases, plan.sass_code, settings.baseline_dir);
        carried = std::move(changed.carried);
        plan.notes.insert(plan.notes.end(), changed.notes.begin(), changed.notes.end());
    }

    // Cases that cannot run: their variant (or the reference) did not compile.
    plan.results.resize(plan.cases.size());
    const suite::VariantSpec* reference = s.find_variant(s.reference);
    for (std::size_t i = 0; i < plan.cases.size(); ++i) {
        const auto& variant = s.variants[plan.cases[i].variant];
        if (carried[i]) {
            plan.results[i] = carried_case(s, plan.cases[i], device.arch);
        } else if (const std::string* err = plan.compiled.error(variant, plan.cases[i].params)) {
            plan.results[i] = run::unverifiable_case(s, plan.cases[i], "");
            plan.results[i].status = CaseStatus::compile_error;
            plan.results[i].message = *err;
        } else if (reference && plan.compiled.error(*reference, plan.cases[i].params)) {
            plan.results[i] = run::unverifiable_case(s, plan.cases[i], "the reference variant did not compile");
        } else {
            plan.runnable.push_back(plan.cases[i]);
            plan.runnable_index.push_back(i);
        }
    }
    if (cache) plan.book.emplace(cache->dir(), device.name, s.name);
    const CostConditions conditions{collects_counters(settings),
                                    settings.counter_cache && cache && !settings.fresh_counters};
    plan.costs = expected_case_costs(s, plan.runnable, settings.baseline_dir, plan.book ? &*plan.book : nullptr,
                                     conditions, &plan.cost_sources);
    // Computing a point's reference outputs again is mostly drawing the reference case's buffers.
    for (const auto& c : plan.runnable)
        if (s.variants[c.variant].name == s.reference)
            plan.recompute_s[c.point] =
                plan.book ? plan.book->buffers(s.reference, c.params_text).value_or(typical_recompute_s)
                          : typical_recompute_s;
    plan.suite = std::move(s);
    return plan;
}

/// Every plan's runnable cases as one list for the schedule: each with its suite's work, its
/// expected cost and its point, numbered run-wide (each suite's points after the last suite's).
struct RunWork {
    std::vector<run::SuiteWork> suites;
    std::vector<run::WorkItem> items;
    std::vector<double> costs;
    std::vector<run::CasePoint> points;
};

RunWork collect_work(const std::vector<SuitePlan>& plans)
{
    RunWork run;
    std::size_t point_count = 0;
    for (std::size_t p = 0; p < plans.size(); ++p) {
        const SuitePlan& plan = plans[p];
        const std::size_t first_point = point_count;
        run.suites.push_back({&plan.suite, &plan.runnable, &plan.compiled.modules, &plan.settings});
        for (std::size_t k = 0; k < plan.runnable.size(); ++k) {
            run.items.push_back({p, k});
            run.costs.push_back(plan.costs.size() == plan.runnable.size() ? plan.costs[k] : 1.0);
            const suite::Case& c = plan.runnable[k];
            const auto recompute = plan.recompute_s.find(c.point);
            run.points.push_back({first_point + c.point, plan.suite.variants[c.variant].name == plan.suite.reference,
                                  recompute == plan.recompute_s.end() ? typical_recompute_s : recompute->second});
            point_count = std::max(point_count, first_point + c.point + 1);
        }
    }
    return run;
}

/// The GPUs' workers start one after another, each once the one before it is ready: the driver
/// creates one context at a time across the host, so four started at once were all ready after
/// 2.3 to 2.5 s (four H200s, warm), and one after another at 0.6, 1.5, 2.3 and 3.4 s; with the
/// probe's child holding the driver, at 0.6, 1.3, 2.0 and 2.7 s (four H100s). With the driver held,
/// four started at once were ready at 1.1 to 1.7 s and the runs took as long (four H200s).
class WorkerTurns {
public:
    /// Blocks until GPU `g` may start its worker; a worker slow to start (a hung driver) holds up
    /// the next one 10 s at most.
    void wait(std::size_t g)
    {
        std::unique_lock lock(mutex_);
        turn_.wait_for(lock, std::chrono::seconds(10), [&] { return g < may_start_; });
    }
    /// GPU `g`'s worker is ready, or its share ended however it did: the next GPU may start.
    void pass(std::size_t g)
    {
        {
            const std::lock_guard lock(mutex_);
            may_start_ = std::max(may_start_, g + 2);
        }
        turn_.notify_all();
    }

private:
    std::mutex mutex_;
    std::condition_variable turn_;
    std::size_t may_start_ = 1; // GPUs below this may start their worker
};

/// A point whose reference case failed on one GPU leaves its other cases unverified, as on one
/// GPU, even where another GPU computed the reference's outputs for them.
void unverify_points_of_failed_references(std::vector<SuitePlan>& plans)
{
    for (auto& plan : plans) {
        std::set<std::size_t> failed_points;
        for (std::size_t i = 0; i < plan.cases.size(); ++i)
            if (plan.suite.variants[plan.cases[i].variant].name == plan.suite.reference &&
                case_status_fails(plan.results[i].status))
                failed_points.insert(plan.cases[i].point);
        for (std::size_t i = 0; i < plan.cases.size(); ++i)
            if (plan.suite.variants[plan.cases[i].variant].name != plan.suite.reference &&
                failed_points.contains(plan.cases[i].point) && plan.results[i].status != CaseStatus::compile_error)
                plan.results[i] =
                    run::unverifiable_case(plan.suite, plan.cases[i], "the reference variant failed at this point");
    }
}

/// When each GPU's worker was ready, its last case reported and its last worker gone, in seconds
/// since the cases were handed out.
struct DeviceTimes {
    std::vector<double> ready_s, last_case_s, done_s;
    explicit DeviceTimes(std::size_t devices) : ready_s(devices, 0.0), last_case_s(devices, 0.0), done_s(devices, 0.0)
    {
    }
};

/// The note on a run spread over several GPUs: where the costs came from, and per GPU what it was
/// expected to take and when it was done, with the GPUs that stood idle at the end.
std::string spread_note(const std::vector<SuitePlan>& plans, const std::vector<run::DeviceInfo>& devices,
                        const run::DeviceSchedule& schedule, const DeviceTimes& times)
{
    const double last = *std::max_element(times.done_s.begin(), times.done_s.end());
    std::size_t recorded = 0, modelled = 0;
    for (const auto& plan : plans) {
        recorded += plan.cost_sources.recorded;
        modelled += plan.cost_sources.modelled;
    }
    std::vector<std::string> parts;
    std::string idle;
    for (std::size_t g = 0; g < devices.size(); ++g) {
        parts.push_back(fmt::format("GPU {}: {} cases expected to take {:.1f} s, done at {:.1f} s (worker ready at "
                                    "{:.1f} s, last case at {:.1f} s)",
                                    devices[g].ordinal, schedule.items[g].size(), schedule.expected_s[g],
                                    times.done_s[g], times.ready_s[g], times.last_case_s[g]));
        if (last - times.done_s[g] >= 0.05)
            idle += fmt::format("; GPU {} idle for {:.1f} s at the end", devices[g].ordinal, last - times.done_s[g]);
    }
    return fmt::format("cases spread over {} GPUs case by case, costliest first onto the least-loaded GPU, with {} "
                       "suite(s) at once, each GPU's worker started once the one before it was ready (expected "
                       "costs: {} recorded by earlier runs, {} modelled from the baselines' times): {}{}",
                       devices.size(), plans.size(), recorded, modelled, join(parts, "; "), idle);
}

/// Runs every plan's runnable cases on `devices`: one thread per GPU, each with its own workers
/// serving every suite, so that a fault or a hang on one GPU fails its own case and the others go
/// on. Every plan's cases are measured as `measured` says. Fills the plans' results.
ExecutionNotes execute(std::vector<SuitePlan>& plans, const std::vector<run::DeviceInfo>& devices,
                       const run::RunOptions& measured)
{
    const RunWork run = collect_work(plans);
    ExecutionNotes notes;
    if (run.items.empty()) return notes;

    // Each GPU is expected to start its worker that much later than the one before it, and gets
    // less work.
    std::vector<double> start_s;
    for (std::size_t g = 0; g < devices.size(); ++g) start_s.push_back(static_cast<double>(g) * worker_start_s);
    const auto schedule = run::schedule_on_devices(run.costs, devices.size(), run.points, start_s);
    WorkerTurns turns;
    Progress progress(run.items.size());
    std::mutex mutex;
    DeviceTimes times(devices.size());
    run::RunOptions options = measured;
    options.groups_span_suites = devices.size() > 1;
    const auto started = std::chrono::steady_clock::now();
    // One GPU's share of the cases, run in its workers; the results go to the plans.
    const auto run_share = [&](std::size_t g) {
        std::vector<run::WorkItem> own;
        for (const auto i : schedule.items[g]) own.push_back(run.items[i]);
        run::RunObserver relay;
        relay.on_worker_ready = [&](double seconds, const std::map<std::string, double>& parts) {
            {
                const std::lock_guard lock(mutex);
                if (times.ready_s[g] == 0) times.ready_s[g] = seconds_since(started);
                ++notes.workers;
                notes.worker_seconds += seconds;
                for (const auto& [part, s] : parts) notes.worker_parts[part] += s;
            }
            turns.pass(g);
        };
        relay.on_begin = [&](std::size_t i) {
            CaseResult r;
            const auto& plan = plans[own[i].suite];
            const auto& c = plan.runnable[own[i].index];
            r.variant = plan.suite.variants[c.variant].name;
            r.params_text = c.params_text;
            const std::lock_guard lock(mutex);
            progress.begin(r);
        };
        relay.on_result = [&](std::size_t, const CaseResult& r) {
            const std::lock_guard lock(mutex);
            times.last_case_s[g] = seconds_since(started);
            progress.end(r);
        };
        auto ran =
            own.empty() ? std::vector<CaseResult>{} : run::run_isolated(run.suites, own, devices[g], options, relay);
        const std::lock_guard lock(mutex);
        times.done_s[g] = seconds_since(started);
        for (std::size_t k = 0; k < ran.size(); ++k) {
            if (devices.size() > 1)
                ran[k].message +=
                    fmt::format("{}ran on GPU {}", ran[k].message.empty() ? "" : "; ", devices[g].ordinal);
            SuitePlan& plan = plans[own[k].suite];
            plan.results[plan.runnable_index[own[k].index]] = std::move(ran[k]);
        }
    };
    std::vector<std::exception_ptr> errors(devices.size());
    std::vector<std::thread> threads;
    for (std::size_t g = 0; g < devices.size(); ++g)
        threads.emplace_back([&, g] {
            turns.wait(g);
            try {
                run_share(g);
            } catch (...) {
                errors[g] = std::current_exception();
            }
            turns.pass(g); // however the share ended, the next GPU's worker may start
        });
    for (auto& t : threads) t.join();
    for (const auto& e : errors)
        if (e) std::rethrow_exception(e);

    unverify_points_of_failed_references(plans);
    if (devices.size() > 1) notes.devices.push_back(spread_note(plans, devices, schedule, times));
    return notes;
}

/// What a suite's cases cost, summed, and how many of them were profiled or had their point's
/// reference outputs computed again.
struct CostTotals {
    CaseCost cost;
    std::size_t profiled_cases = 0;
    std::size_t recomputed = 0;
};

CostTotals cost_totals(const std::vector<CaseResult>& results)
{
    CostTotals totals;
    for (const auto& r : results) {
        totals.cost += r.cost;
        if (r.cost.profile.total() > 0) ++totals.profiled_cases;
        if (r.cost.reference > 0) ++totals.recomputed;
    }
    return totals;
}

/// The notes of a GPU run's report, one function each, in the order the report gives them; each
/// is absent where it has nothing to say.
namespace report_notes {

std::optional<std::string> recomputed_references(const CostTotals& totals)
{
    if (totals.recomputed == 0) return std::nullopt;
    return fmt::format("reference outputs computed again, on its own GPU, for {} cases whose point's reference case "
                       "ran on another GPU (or in an earlier worker): {:.2f} s",
                       totals.recomputed, totals.cost.reference);
}

std::optional<std::string> timing(const CostTotals& totals, std::size_t cases)
{
    const CaseCost& cost = totals.cost;
    const TimingCost& t = cost.timing_parts;
    if (t.passes == 0) return std::nullopt;
    return fmt::format("timing: {:.2f} s for {} cases, of which {} profiler passes took {:.2f} s (setup {:.2f} s, "
                       "samples {:.2f} s, reading {:.2f} s; {} passes taken again for a kernel left unrecorded); the "
                       "range profiler was enabled {} times for timing and {} times for counters",
                       cost.timing, cases, t.passes, t.total(), t.setup, t.samples, t.teardown, t.retaken, t.enables,
                       cost.profile.enables);
}

std::optional<std::string> profiling(const CostTotals& totals, const run::RunSettings& settings)
{
    if (totals.profiled_cases == 0) {
        if (settings.external_profiler)
            return "external-profiler mode: each case ran once inside its NVTX range; no timing, no counters";
        if (!settings.profile) return "hardware counters not collected (--no-profile)";
        return std::nullopt;
    }
    const ProfileCost& p = totals.cost.profile;
    return fmt::format(
        "profiling: {:.2f} s for {} cases (setup {:.2f} s, input restore {:.2f} s, L2 emptying {:.2f} s, kernels "
        "{:.2f} s, SASS instrumented runs {:.2f} s, teardown {:.2f} s); the range profiler ran each case {:.3g} times "
        "on average, SASS metrics {} instrumented run(s){}{}",
        p.total(), totals.profiled_cases, p.setup, p.restore, p.l2_flush, p.kernels, p.sass, p.teardown,
        static_cast<double>(p.range_passes) / totals.profiled_cases, p.sass_runs,
        p.batched > 0 ? fmt::format("; the noisy counters of {} cases were measured together, in {} measurement(s), "
                                    "each case's buffers made and freed in its turn",
                                    p.batched, p.batches)
                      : "",
        p.unbatched > 0
            ? fmt::format("; {} cases measured alone after CUPTI recorded their batch only in part", p.unbatched)
            : "");
}

std::optional<std::string> times(const std::vector<CaseResult>& results, const run::RunSettings& settings)
{
    const bool timed = std::any_of(results.begin(), results.end(),
                                   [](const CaseResult& r) { return r.metric(metric::time_median).has_value(); });
    if (!timed) return std::nullopt;
    if (settings.time_source == run::TimeSource::events)
        return "times: CUDA events around each sample's launches (--event-timing), launch latency included";
    return fmt::format("times: the sum of each kernel's own GPU duration, every kernel started {}, as Nsight Compute's "
                       "gpu__time_duration; no launch latency",
                       settings.hot ? "without emptying the L2 (--hot)" : "after the L2 was emptied");
}

std::optional<std::string> workers(const ExecutionNotes& execution)
{
    if (execution.workers == 0) return std::nullopt;
    std::vector<std::string> parts;
    for (const auto& [part, s] : execution.worker_parts) parts.push_back(fmt::format("{} {:.2f} s", part, s));
    return fmt::format("workers: {} started in {:.2f} s ({}), each serving every suite of the run", execution.workers,
                       execution.worker_seconds, join(parts));
}

std::optional<std::string> counter_cache(const std::vector<CaseResult>& results, const CostTotals& totals,
                                         const run::RunSettings& settings, const compile::CompileCache* cache)
{
    if (!settings.counter_cache) return std::nullopt;
    if (!cache) return "counter cache: off, because the kernel cache folder that holds it is off (--no-cache)";
    std::size_t reused_cases = 0, reused_figures = 0;
    for (const auto& r : results)
        if (!r.reused_metrics.empty()) {
            ++reused_cases;
            reused_figures += r.reused_metrics.size();
        }
    return fmt::format("counter cache ({}): {} of {} profiled cases reused {} exact figures and their hotspots; their "
                       "noisy figures were measured{}",
                       (cache->dir() / "counters").string(), reused_cases, totals.profiled_cases, reused_figures,
                       settings.fresh_counters ? "; --fresh-counters measured everything and refreshed the entries"
                                               : "");
}

std::optional<std::string> case_time(const CostTotals& totals)
{
    const CaseCost& cost = totals.cost;
    if (cost.total() <= 0) return std::nullopt;
    return fmt::format("case time: {:.2f} s (buffers and reference {:.2f} s, verification {:.2f} s, timing {:.2f} s, "
                       "profiling {:.2f} s)",
                       cost.total(), cost.prepare, cost.verify, cost.timing, cost.profile.total());
}

} // namespace report_notes

/// A GPU run's report of one suite: the device it ran on, the notes that say where the time went
/// (report_notes::), and its results, whose costs the plan's cost book keeps for the next run.
harness::RunReport report_of(SuitePlan& plan, const run::DeviceInfo& device, const ExecutionNotes& execution,
                             const compile::CompileCache* cache)
{
    const run::RunSettings& settings = plan.settings;
    for (std::size_t i = 0; i < plan.cases.size(); ++i) plan.results[i].point = plan.cases[i].point;

    harness::RunReport rep = report_for(plan.suite);
    rep.mode = RunMode::gpu;
    rep.shard = plan.shard;
    rep.device_name = device.name;
    rep.arch = device.arch;
    rep.sm_count = device.sm_count;
    rep.memory_bandwidth_gbs = device.memory_bandwidth_gbs;
    rep.fp32_peak_gflops = device.fp32_peak_gflops;
    rep.driver_version = fmt::format("{}.{}", device.driver_version / 1000, device.driver_version % 1000 / 10);

    const CostTotals totals = cost_totals(plan.results);
    rep.profiled = totals.profiled_cases > 0;
    for (const auto& note : execution.devices) rep.notes.push_back(note);
    rep.notes.insert(rep.notes.end(), plan.notes.begin(), plan.notes.end());
    if (!plan.sass_code.cases.empty()) rep.sass_code[device.arch] = plan.sass_code;
    for (auto& note :
         {report_notes::recomputed_references(totals), report_notes::timing(totals, plan.results.size()),
          report_notes::profiling(totals, settings), report_notes::times(plan.results, settings),
          std::optional<std::string>(fmt::format("compilation: {:.2f} s", plan.compile_seconds)),
          report_notes::workers(execution), report_notes::counter_cache(plan.results, totals, settings, cache),
          report_notes::case_time(totals)})
        if (note) rep.notes.push_back(*note);

    if (plan.book && settings.record_costs) {
        plan.book->record(plan.results);
        plan.book->save();
    }
    rep.results = std::move(plan.results);
    for (auto& r : rep.results) r.arch = device.arch;
    return rep;
}

} // namespace

run::RunOptions worker_options(const run::RunSettings& settings, const compile::CompileCache* cache)
{
    run::RunOptions options;
    options.profile = settings.profile && !settings.verify_only;
    options.external_profiler = settings.external_profiler;
    options.hot = settings.hot;
    options.time_source = settings.time_source;
    options.verify_only = settings.verify_only;
    if (settings.counter_cache && cache) options.counter_cache_dir = cache->dir() / "counters";
    options.fresh_counters = settings.fresh_counters;
    return options;
}

std::vector<std::vector<std::size_t>> worker_groups(const std::vector<run::RunSettings>& settings,
                                                    const compile::CompileCache* cache)
{
    std::vector<run::RunOptions> options_of_group;
    std::vector<std::vector<std::size_t>> groups;
    for (std::size_t i = 0; i < settings.size(); ++i) {
        const run::RunOptions options = worker_options(settings[i], cache);
        const auto same = std::find(options_of_group.begin(), options_of_group.end(), options);
        if (same != options_of_group.end()) {
            groups[static_cast<std::size_t>(same - options_of_group.begin())].push_back(i);
            continue;
        }
        options_of_group.push_back(options);
        groups.push_back({i});
    }
    return groups;
}

std::vector<harness::RunReport> run_suites_gpu(const std::vector<SuiteRunRequest>& requests,
                                               const run::DeviceInfo& device, const compile::CompileCache* cache)
{
    if (requests.empty()) return {};
    // The GPUs are the run's: every suite of a run has the command line's --devices.
    const auto devices = choose_devices(requests.front().settings, device);
    std::vector<SuitePlan> plans;
    std::vector<run::RunSettings> settings;
    for (const auto& request : requests) {
        plans.push_back(plan_suite(request.suite, request.settings, device, cache));
        settings.push_back(plans.back().settings);
    }
    // Each suite's cases are measured as its own settings say: suites that ask for other
    // measurements than the first one's run in workers of their own.
    std::vector<ExecutionNotes> execution(plans.size());
    for (const auto& group : worker_groups(settings, cache)) {
        std::vector<SuitePlan> together;
        for (const auto p : group) together.push_back(std::move(plans[p]));
        const ExecutionNotes notes = execute(together, devices, worker_options(settings[group.front()], cache));
        for (std::size_t k = 0; k < group.size(); ++k) {
            plans[group[k]] = std::move(together[k]);
            execution[group[k]] = notes;
        }
    }
    std::vector<harness::RunReport> reports;
    for (std::size_t p = 0; p < plans.size(); ++p) {
        SuitePlan& plan = plans[p];
        harness::RunReport rep = report_of(plan, device, execution[p], cache);
        // The cliff maps of a scanned axis, timed in a worker of their own (gpu_scan.hxx).
        if (scans_on_gpu(plan.suite, plan.settings, plan.shard))
            add_gpu_cliff_maps(rep, plan.suite, plan.compiled, device, plan.settings, cache);
        reports.push_back(std::move(rep));
    }
    return reports;
}

harness::RunReport run_suite_gpu(suite::Suite s, const run::DeviceInfo& device, const run::RunSettings& settings,
                                 const compile::CompileCache* cache)
{
    return std::move(run_suites_gpu({{std::move(s), settings}}, device, cache).front());
}

} // namespace harness::pipeline
