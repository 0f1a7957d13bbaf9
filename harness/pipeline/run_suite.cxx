#include "harness/pipeline/run_suite.hxx"

#include "harness/compile/compile_suite.hxx"
#include "harness/compile/kernel_arguments.hxx"
#include "harness/compile/static_tier.hxx"
#include "harness/core/error.hxx"
#include "harness/core/metrics.hxx"
#include "harness/core/stopwatch.hxx"
#include "harness/core/text.hxx"
#include "harness/history/recent_values.hxx"
#include "harness/pipeline/shard.hxx"
#include "harness/run/device_schedule.hxx"
#include "harness/run/isolated_runner.hxx"
#include "harness/run/timing_stats.hxx"
#include "harness/suite/sweep.hxx"

#include <chrono>
#include <cstdio>
#include <exception>
#include <fmt/format.h>
#include <fmt/ostream.h>
#include <limits>
#include <mutex>
#include <thread>
#include <unistd.h>

namespace harness::pipeline {

namespace fs = std::filesystem;

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

harness::RunReport report_for(const suite::Suite& s)
{
    harness::RunReport rep;
    rep.suite = s.name;
    rep.suite_file = s.file.string();
    rep.harness_version = HARNESS_VERSION;
    rep.cuda_version = compile::nvrtc_version();
    rep.git_revision = git_revision(s.file);
    rep.timestamp = utc_timestamp();
    return rep;
}

/// The cases this run covers: all of them, or its shard's (recorded in `shard`).
std::vector<suite::Case> cases_to_run(const suite::Suite& s, const SuiteRunOptions& options, ShardInfo& shard)
{
    if (!options.shard) return suite::expand_cases(s);
    const ShardRequest& request = *options.shard;
    if (request.index < 1 || request.index > request.count)
        throw Error(ErrorKind::bad_input, fmt::format("--shard {}/{}: the index must lie between 1 and the count",
                                                      request.index, request.count));
    const ShardSplit split = split_points(s, request.baseline_dir, request.count);
    auto cases = shard_cases(s, split, request.index);
    double mine = 0, all = 0;
    std::size_t points = 0;
    for (std::size_t p = 0; p < split.shard_of_point.size(); ++p) {
        all += split.point_costs[p];
        if (split.shard_of_point[p] == request.index) {
            mine += split.point_costs[p];
            ++points;
        }
    }
    fmt::print(stderr,
               "harness: suite {}, shard {}/{}: {} of {} points, {} cases (expected {:.0f} of {:.0f} s on a GPU)\n",
               s.name, request.index, request.count, points, split.shard_of_point.size(), cases.size(), mine, all);
    shard = {request.count, {request.index}, split.fingerprint};
    return cases;
}

} // namespace

std::string utc_timestamp()
{
    return utc_now("%Y-%m-%dT%H:%M:%SZ");
}

std::string git_revision(const fs::path& file)
{
    std::error_code ec;
    const fs::path dir = fs::absolute(file, ec).parent_path();
    if (ec) return "";
    const std::string command = fmt::format("git -C '{}' rev-parse --short=12 HEAD 2>/dev/null", dir.string());
    if (dir.string().find('\'') != std::string::npos) return "";
    FILE* pipe = popen(command.c_str(), "r");
    if (!pipe) return "";
    char buffer[64] = {};
    std::string out;
    while (std::fgets(buffer, sizeof buffer, pipe)) out += buffer;
    if (pclose(pipe) != 0) return "";
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    return out;
}

std::optional<run::DeviceInfo> choose_device(const SuiteRunOptions& options)
{
    std::string why = "--static given";
    int first = options.device;
    if (!options.devices.empty() && trim(options.devices) != "all")
        first = run::parse_devices(options.devices, std::numeric_limits<int>::max()).front();
    else if (!options.devices.empty())
        first = 0;
    auto device = options.static_only ? std::nullopt : run::probe_device(first, &why);
    if (!device && options.require_gpu && !options.static_only)
        throw Error(ErrorKind::environment,
                    fmt::format("no usable GPU ({}), and {} requires one; pass --static to run the static tier "
                                "only",
                                why, options.require_gpu_because));
    if (!device)
        fmt::print(stderr,
                   "harness: no usable GPU ({}): running the static tier only. Every variant is compiled for each "
                   "architecture and its registers, spills, shared memory and theoretical occupancy are read and "
                   "compared with the baselines; nothing is verified or timed.\n",
                   why);
    return device;
}

harness::RunReport run_suite_static(const suite::Suite& s, const SuiteRunOptions& options,
                                    const compile::CompileCache* cache)
{
    const auto& archs = options.archs.empty() ? s.archs : options.archs;
    harness::RunReport rep = report_for(s);
    rep.mode = "static";
    rep.arch = join(archs, ",");
    const auto cases = cases_to_run(s, options, rep.shard);
    rep.results = compile::run_static_tier(s, cases, archs, cache);
    if (!options.only_variants.empty())
        std::erase_if(rep.results, [&](const CaseResult& r) {
            return std::find(options.only_variants.begin(), options.only_variants.end(), r.variant) ==
                   options.only_variants.end();
        });
    return rep;
}

std::vector<run::DeviceInfo> choose_devices(const SuiteRunOptions& options, const run::DeviceInfo& first)
{
    if (options.devices.empty()) return {first};
    std::vector<run::DeviceInfo> devices;
    for (const int ordinal : run::parse_devices(options.devices, first.device_count)) {
        if (ordinal == first.ordinal) {
            devices.push_back(first);
            continue;
        }
        std::string why;
        auto info = run::probe_device(ordinal, &why);
        if (!info)
            throw Error(ErrorKind::environment, fmt::format("--devices: GPU {} is not usable: {}", ordinal, why));
        if (info->name != first.name || info->arch != first.arch)
            throw Error(ErrorKind::environment,
                        fmt::format("--devices: GPU {} is a {} and GPU {} a {}; time baselines are kept per GPU "
                                    "model, so run GPUs of different models separately",
                                    first.ordinal, first.name, ordinal, info->name));
        devices.push_back(*info);
    }
    return devices;
}

harness::RunReport run_suite_gpu(suite::Suite s, const run::DeviceInfo& device, const SuiteRunOptions& options,
                                 const compile::CompileCache* cache)
{
    if (options.budget_s > 0) s.timing.budget_s = options.budget_s;
    ShardInfo shard;
    std::vector<suite::Case> cases;
    for (auto& c : cases_to_run(s, options, shard)) {
        const auto& name = s.variants[c.variant].name;
        const auto& only = options.only_variants;
        if (!only.empty() && name != s.reference && std::find(only.begin(), only.end(), name) == only.end()) continue;
        const auto& cases_wanted = options.only_cases;
        if (!cases_wanted.empty() && std::none_of(cases_wanted.begin(), cases_wanted.end(), [&](const auto& w) {
                return w.second == c.params_text && (w.first == name || name == s.reference);
            }))
            continue;
        cases.push_back(std::move(c));
    }
    fmt::print(stderr, "harness: suite {} on {} ({}), compiling...\n", s.name, device.name, device.arch);
    const auto compile_start = std::chrono::steady_clock::now();
    const auto compiled = compile::compile_suite(s, cases, device.arch, cache);
    const double compile_seconds = seconds_since(compile_start);
    // Before any launch: arguments the kernels' parameters do not take would run with garbage.
    compile::check_kernel_arguments(s, compiled);

    // Cases that cannot run: their variant (or the reference) did not compile.
    std::vector<CaseResult> results(cases.size());
    std::vector<suite::Case> runnable;
    std::vector<std::size_t> runnable_index;
    const suite::VariantSpec* reference = s.find_variant(s.reference);
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const auto& variant = s.variants[cases[i].variant];
        if (const std::string* err = compiled.error(variant, cases[i].params)) {
            results[i] = run::unverifiable_case(s, cases[i], "");
            results[i].status = CaseStatus::compile_error;
            results[i].message = *err;
        } else if (reference && compiled.error(*reference, cases[i].params)) {
            results[i] = run::unverifiable_case(s, cases[i], "the reference variant did not compile");
        } else {
            runnable.push_back(cases[i]);
            runnable_index.push_back(i);
        }
    }

    Progress progress(runnable.size());
    run::RunObserver observer;
    observer.on_begin = [&](std::size_t i) {
        CaseResult r;
        r.variant = s.variants[runnable[i].variant].name;
        r.params_text = runnable[i].params_text;
        progress.begin(r);
    };
    observer.on_result = [&](std::size_t, const CaseResult& r) { progress.end(r); };
    std::size_t workers = 0;
    double worker_seconds = 0;
    std::map<std::string, double> worker_parts;
    observer.on_worker_ready = [&](double seconds, const std::map<std::string, double>& parts) {
        ++workers;
        worker_seconds += seconds;
        for (const auto& [part, s] : parts) worker_parts[part] += s;
    };
    std::string rep_devices_note;
    run::IsolatedRunConfig config;
    config.options.profile = options.profile && !options.verify_only;
    config.options.external_profiler = options.external_profiler;
    config.options.metrics = s.metrics;
    config.device = options.device;
    config.options.hot_cache = options.hot;
    config.options.time_source = options.event_timing ? run::TimeSource::events : run::TimeSource::kernels;
    config.options.verify_only = options.verify_only;
    if (options.counter_cache && cache) config.options.counter_cache_dir = cache->dir() / "counters";
    config.options.fresh_counters = options.fresh_counters;
    config.case_timeout_s = options.timeout_s > 0 ? options.timeout_s : s.timing.timeout_s;
    const auto devices = choose_devices(options, device);
    if (!runnable.empty() && devices.size() == 1) {
        config.device = devices.front().ordinal;
        auto ran = run::run_isolated(s, runnable, compiled.modules, config, observer);
        for (std::size_t k = 0; k < ran.size(); ++k) results[runnable_index[k]] = std::move(ran[k]);
    } else if (!runnable.empty()) {
        // One thread per GPU, each with its own workers: a fault or a hang on one GPU fails its own
        // case, and the other GPUs go on.
        // Balanced by the points' expected cost, as shards are: a large point costs far more than
        // a small one with as many cases.
        const auto schedule = run::schedule_on_devices(
            runnable, devices.size(),
            options.baseline_dir.empty() ? std::vector<double>{} : point_costs(s, options.baseline_dir));
        std::mutex mutex;
        std::vector<std::exception_ptr> errors(devices.size());
        std::vector<std::thread> threads;
        for (std::size_t g = 0; g < devices.size(); ++g)
            threads.emplace_back([&, g] {
                try {
                    const auto& mine = schedule[g];
                    if (mine.empty()) return;
                    std::vector<suite::Case> cases;
                    for (const auto k : mine) cases.push_back(runnable[k]);
                    run::IsolatedRunConfig on_device = config;
                    on_device.device = devices[g].ordinal;
                    run::RunObserver relay;
                    relay.on_worker_ready = [&](double seconds, const std::map<std::string, double>& parts) {
                        const std::lock_guard lock(mutex);
                        observer.on_worker_ready(seconds, parts);
                    };
                    relay.on_begin = [&](std::size_t i) {
                        const std::lock_guard lock(mutex);
                        observer.on_begin(mine[i]);
                    };
                    relay.on_result = [&](std::size_t i, const CaseResult& r) {
                        const std::lock_guard lock(mutex);
                        observer.on_result(mine[i], r);
                    };
                    auto ran = run::run_isolated(s, cases, compiled.modules, on_device, relay);
                    const std::lock_guard lock(mutex);
                    for (std::size_t k = 0; k < ran.size(); ++k) {
                        ran[k].message +=
                            fmt::format("{}ran on GPU {}", ran[k].message.empty() ? "" : "; ", devices[g].ordinal);
                        results[runnable_index[mine[k]]] = std::move(ran[k]);
                    }
                } catch (...) {
                    errors[g] = std::current_exception();
                }
            });
        for (auto& t : threads) t.join();
        for (const auto& e : errors)
            if (e) std::rethrow_exception(e);
        rep_devices_note = fmt::format("cases spread over {} GPUs ({}), one worker each", devices.size(), [&] {
            std::vector<std::string> parts;
            for (std::size_t g = 0; g < devices.size(); ++g)
                parts.push_back(fmt::format("GPU {}: {} cases", devices[g].ordinal, schedule[g].size()));
            return join(parts, ", ");
        }());
    }

    for (std::size_t i = 0; i < cases.size(); ++i) results[i].point = cases[i].point;

    harness::RunReport rep = report_for(s);
    if (!rep_devices_note.empty()) rep.notes.push_back(rep_devices_note);
    rep.mode = "gpu";
    rep.shard = shard;
    rep.device_name = device.name;
    rep.arch = device.arch;
    rep.sm_count = device.sm_count;
    rep.memory_bandwidth_gbs = device.memory_bandwidth_gbs;
    rep.fp32_peak_gflops = device.fp32_peak_gflops;
    CaseCost cost;
    std::size_t profiled_cases = 0;
    for (const auto& r : results) {
        cost += r.cost;
        if (r.cost.profile.total() > 0) ++profiled_cases;
    }
    rep.profiled = profiled_cases > 0;
    if (const TimingCost& t = cost.timing_parts; t.passes > 0)
        rep.notes.push_back(fmt::format("timing: {:.2f} s for {} cases, of which {} profiler passes took {:.2f} s "
                                        "(setup {:.2f} s, samples {:.2f} s, reading {:.2f} s; {} passes taken again "
                                        "for a kernel left unrecorded); the range profiler was enabled {} times for "
                                        "timing and {} times for counters",
                                        cost.timing, results.size(), t.passes, t.total(), t.setup, t.samples,
                                        t.teardown, t.retaken, t.enables, cost.profile.enables));
    if (profiled_cases > 0) {
        const ProfileCost& p = cost.profile;
        rep.notes.push_back(fmt::format(
            "profiling: {:.2f} s for {} cases (setup {:.2f} s, input restore {:.2f} s, L2 emptying {:.2f} s, "
            "kernels {:.2f} s, SASS instrumented runs {:.2f} s, teardown {:.2f} s); the range profiler ran each case "
            "{:.3g} times on average, SASS metrics {} instrumented run(s)",
            p.total(), profiled_cases, p.setup, p.restore, p.l2_flush, p.kernels, p.sass, p.teardown,
            static_cast<double>(p.range_passes) / profiled_cases, p.sass_runs));
    } else if (options.external_profiler)
        rep.notes.push_back("external-profiler mode: each case ran once inside its NVTX range; no timing, no counters");
    else if (!options.profile)
        rep.notes.push_back("hardware counters not collected (--no-profile)");
    const bool timed = std::any_of(results.begin(), results.end(),
                                   [](const CaseResult& r) { return r.metric(metric::time_median).has_value(); });
    if (timed)
        rep.notes.push_back(
            options.event_timing
                ? "times: CUDA events around each sample's launches (--event-timing), launch latency included"
                : fmt::format("times: the sum of each kernel's own GPU duration, every kernel started {}, as Nsight "
                              "Compute's gpu__time_duration; no launch latency",
                              options.hot ? "without emptying the L2 (--hot)" : "after the L2 was emptied"));
    rep.notes.push_back(fmt::format("compilation: {:.2f} s", compile_seconds));
    if (workers > 0) {
        std::vector<std::string> parts;
        for (const auto& [part, s] : worker_parts) parts.push_back(fmt::format("{} {:.2f} s", part, s));
        rep.notes.push_back(fmt::format("workers: {} started in {:.2f} s ({})", workers, worker_seconds, join(parts)));
    }
    if (options.counter_cache && !cache)
        rep.notes.push_back("counter cache: off, because the kernel cache folder that holds it is off (--no-cache)");
    else if (options.counter_cache) {
        std::size_t reused_cases = 0, reused_figures = 0;
        for (const auto& r : results)
            if (!r.reused_metrics.empty()) {
                ++reused_cases;
                reused_figures += r.reused_metrics.size();
            }
        rep.notes.push_back(fmt::format(
            "counter cache ({}): {} of {} profiled cases reused {} exact figures and their hotspots; their noisy "
            "figures were measured{}",
            (cache->dir() / "counters").string(), reused_cases, profiled_cases, reused_figures,
            options.fresh_counters ? "; --fresh-counters measured everything and refreshed the entries" : ""));
    }
    if (cost.total() > 0)
        rep.notes.push_back(fmt::format("case time: {:.2f} s (buffers and reference {:.2f} s, verification {:.2f} s, "
                                        "timing {:.2f} s, profiling {:.2f} s)",
                                        cost.total(), cost.prepare, cost.verify, cost.timing, cost.profile.total()));
    rep.driver_version = fmt::format("{}.{}", device.driver_version / 1000, device.driver_version % 1000 / 10);
    rep.results = std::move(results);
    for (auto& r : rep.results) r.arch = device.arch;
    return rep;
}

harness::RunReport run_suite(const suite::Suite& suite, const std::optional<run::DeviceInfo>& device,
                             const SuiteRunOptions& options, const compile::CompileCache* cache)
{
    return device ? run_suite_gpu(suite, *device, options, cache) : run_suite_static(suite, options, cache);
}

harness::RunReport run_and_report(const suite::Suite& suite, const std::optional<run::DeviceInfo>& device,
                                  const SuiteRunOptions& options, const compile::CompileCache* cache,
                                  const compare::CompareOptions& gate, const ReportOptions& reports,
                                  std::ostream& console)
{
    harness::RunReport rep = run_suite(suite, device, options, cache);
    if (device && rep.mode == "gpu" && !options.verify_only && !options.external_profiler) {
        resample_unsure(rep, suite, *device, options, cache, gate);
        confirm_time_regressions(rep, suite, *device, options, cache, gate);
    }
    gate_and_report(rep, suite, gate, reports, console);
    return rep;
}

void add_time_samples(CaseResult& r, const std::vector<double>& more)
{
    if (more.empty()) return;
    const std::optional<double> before = r.metric(metric::time_median);
    r.time_samples_us.insert(r.time_samples_us.end(), more.begin(), more.end());
    const run::TimingSummary t = run::summarize(r.time_samples_us);
    run::set_time_figures(r, t);
    // Rates are a fixed amount of work over the median.
    for (const auto name : {metric::gflops, metric::bandwidth})
        if (const auto rate = r.metric(name); rate && before && *before > 0 && t.median_us > 0)
            r.set_metric(name, *rate * *before / t.median_us);
}

int resample_count(std::size_t most_samples, double slowest_median_us, const suite::TimingSpec& timing)
{
    // As many samples again as the most any of them has, so the evidence doubles each round; but
    // no more than ten timing budgets of the slowest kernel, and never fewer than min_samples.
    double count = static_cast<double>(most_samples);
    if (slowest_median_us > 0) count = std::min(count, 10.0 * timing.budget_s / (slowest_median_us * 1e-6));
    return static_cast<int>(std::clamp(count, static_cast<double>(std::max(timing.min_samples, 1)), 100000.0));
}

std::vector<std::size_t> unsure_time_cases(const harness::RunReport& rep)
{
    std::vector<std::size_t> unsure;
    for (std::size_t i = 0; i < rep.results.size(); ++i) {
        const auto& r = rep.results[i];
        if (r.status != CaseStatus::passed) continue;
        if (std::any_of(r.verdicts.begin(), r.verdicts.end(),
                        [](const MetricVerdict& v) { return v.metric == metric::time_median && v.unsure; }))
            unsure.push_back(i);
    }
    return unsure;
}

const CaseResult* find_case(const harness::RunReport& run, const CaseResult& r)
{
    const auto it = std::find_if(run.results.begin(), run.results.end(), [&](const CaseResult& x) {
        return x.variant == r.variant && x.params_text == r.params_text && x.arch == r.arch;
    });
    return it == run.results.end() ? nullptr : &*it;
}

namespace {

/// Runs the cases `indices` of `rep` again (with their points' references) in a run of their own,
/// in a fresh worker process, unprofiled: as many time samples each as the most any of them has,
/// within resample_count's bounds. Throws what run_suite_gpu throws.
harness::RunReport run_cases_again(const harness::RunReport& rep, const std::vector<std::size_t>& indices,
                                   const suite::Suite& suite, const run::DeviceInfo& device,
                                   const SuiteRunOptions& options, const compile::CompileCache* cache, int& samples)
{
    SuiteRunOptions again = options;
    again.profile = false;
    again.counter_cache = false;
    again.fresh_counters = false;
    again.shard.reset();
    again.only_variants.clear();
    again.only_cases.clear();
    again.resample_rounds = 0;
    std::size_t most = 0;
    double slowest_us = 0;
    for (const auto i : indices) {
        again.only_cases.emplace_back(rep.results[i].variant, rep.results[i].params_text);
        most = std::max(most, rep.results[i].time_samples_us.size());
        slowest_us = std::max(slowest_us, rep.results[i].metric(metric::time_median).value_or(0.0));
    }
    suite::Suite more = suite;
    if (options.budget_s > 0) more.timing.budget_s = options.budget_s;
    samples = resample_count(most, slowest_us, more.timing);
    more.timing.min_samples = samples;
    more.timing.max_samples = samples;
    return run_suite_gpu(more, device, again, cache);
}

/// Why a second run gave a case no samples, or empty when it did.
std::string no_second_samples(const CaseResult* second)
{
    if (!second) return "the case did not run";
    if (second->status != CaseStatus::passed)
        return std::string(case_status_name(second->status)) + " " + second->message;
    if (second->time_samples_us.empty()) return "it took no time samples";
    return "";
}

void append_message(CaseResult& r, const std::string& text)
{
    r.message += (r.message.empty() ? "" : "; ") + text;
}

/// `r` as measured again in `extra`, its timing cost added to r's; null, with `failed` and the
/// reason appended to r's message, when that run gave it no samples.
const CaseResult* measured_again(const harness::RunReport& extra, CaseResult& r, const std::string& failed)
{
    const CaseResult* again = find_case(extra, r);
    if (const auto problem = no_second_samples(again); !problem.empty()) {
        append_message(r, failed + ": " + problem);
        return nullptr;
    }
    r.cost.timing += again->cost.timing;
    r.cost.timing_parts += again->cost.timing_parts;
    return again;
}

const MetricVerdict* time_verdict(const CaseResult& r)
{
    const auto it = std::find_if(r.verdicts.begin(), r.verdicts.end(),
                                 [](const MetricVerdict& v) { return v.metric == metric::time_median; });
    return it == r.verdicts.end() ? nullptr : &*it;
}

} // namespace

void resample_unsure(harness::RunReport& rep, const suite::Suite& suite, const run::DeviceInfo& device,
                     const SuiteRunOptions& options, const compile::CompileCache* cache,
                     const compare::CompareOptions& gate)
{
    for (int round = 1; round <= options.resample_rounds; ++round) {
        compare::compare_run(rep, suite, gate);
        const auto unsure = unsure_time_cases(rep);
        if (unsure.empty()) return;
        fmt::print(stderr, "harness: suite {}: {} time verdict(s) unsure, taking more samples (round {} of {})\n",
                   suite.name, unsure.size(), round, options.resample_rounds);
        harness::RunReport extra;
        int wanted = 0;
        try {
            extra = run_cases_again(rep, unsure, suite, device, options, cache, wanted);
        } catch (const std::exception& e) {
            // The first verdicts stand: a failed second look loses nothing the run had.
            rep.notes.push_back(
                fmt::format("time: taking more samples for {} unsure verdict(s) failed: {}", unsure.size(), e.what()));
            return;
        }
        std::size_t added = 0;
        for (const auto i : unsure) {
            auto& r = rep.results[i];
            const CaseResult* second =
                measured_again(extra, r, "taking more time samples after an unsure verdict failed");
            if (!second) continue;
            add_time_samples(r, second->time_samples_us);
            append_message(r, fmt::format("{} more time samples after an unsure time verdict (round {})",
                                          second->time_samples_us.size(), round));
            ++added;
        }
        rep.notes.push_back(fmt::format("time: {} unsure verdict(s) given {} more samples each in round {} ({} "
                                        "took them)",
                                        unsure.size(), wanted, round, added));
    }
}

std::vector<std::size_t> regressed_time_cases(const harness::RunReport& rep)
{
    std::vector<std::size_t> regressed;
    for (std::size_t i = 0; i < rep.results.size(); ++i) {
        const auto* v = time_verdict(rep.results[i]);
        if (rep.results[i].status == CaseStatus::passed && v && v->verdict == Verdict::regressed)
            regressed.push_back(i);
    }
    return regressed;
}

bool confirm_time_regression(harness::RunReport& rep, std::size_t i, const std::vector<double>& second,
                             const suite::Suite& suite, const compare::CompareOptions& gate, int earlier_processes)
{
    CaseResult& r = rep.results[i];
    const double first_median = r.metric(metric::time_median).value_or(0.0);
    // The new process's samples alone, judged against the same baseline.
    harness::RunReport trial = rep;
    trial.results = {r};
    CaseResult& t = trial.results.front();
    t.time_samples_us.clear();
    add_time_samples(t, second);
    compare::compare_run(trial, suite, gate);
    const auto* v = time_verdict(t);
    const double second_median = t.metric(metric::time_median).value_or(0.0);
    const bool one_before = earlier_processes <= 1;
    const char* next = one_before ? "second" : "third";
    if (!v || v->verdict == Verdict::regressed || v->unsure) {
        add_time_samples(r, second);
        append_message(r, fmt::format("time slower again in a {} process (median {:.4g} us there, {:.4g} us in the "
                                      "first{}): judged on the samples of {}",
                                      next, second_median, first_median, one_before ? "" : " two",
                                      one_before ? "both" : "all three"));
        return true;
    }
    // Not slower in a fresh process: the earlier processes' samples shifted as a whole, as a
    // kernel's times do with where its buffers land in GPU memory, which no test within one
    // process sees.
    r.time_samples_us.clear();
    add_time_samples(r, second);
    append_message(r, fmt::format("time slower in its first {} only (median {:.4g} us there, {:.4g} us in a {}): "
                                  "judged on the {} process's {} samples",
                                  one_before ? "process" : "two processes", first_median, second_median, next, next,
                                  second.size()));
    return false;
}

void confirm_time_regressions(harness::RunReport& rep, const suite::Suite& suite, const run::DeviceInfo& device,
                              const SuiteRunOptions& options, const compile::CompileCache* cache,
                              const compare::CompareOptions& gate)
{
    if (options.resample_rounds <= 0) return;
    compare::compare_run(rep, suite, gate);
    const auto regressed = regressed_time_cases(rep);
    if (regressed.empty()) return;
    fmt::print(stderr, "harness: suite {}: {} time regression(s), measuring them again in fresh processes\n",
               suite.name, regressed.size());
    // Up to two more processes: a regression stands only when each one is slower too. A kernel
    // whose buffers land slowly in some processes (gemm blocktiled_1d N=1001 on an H100: 182 us in
    // some, 177 us in most) is then a false alarm only when three processes in a row land so.
    constexpr int fresh_processes = 2;
    std::vector<std::size_t> pending = regressed;
    std::size_t not_reproduced = 0;
    int wanted = 0;
    for (int round = 1; round <= fresh_processes && !pending.empty(); ++round) {
        harness::RunReport extra;
        try {
            extra = run_cases_again(rep, pending, suite, device, options, cache, wanted);
        } catch (const std::exception& e) {
            rep.notes.push_back(fmt::format("time: measuring {} regression(s) again in a fresh process failed: {}; "
                                            "they stand as measured",
                                            pending.size(), e.what()));
            return;
        }
        std::vector<std::size_t> still;
        for (const auto i : pending) {
            auto& r = rep.results[i];
            const CaseResult* again =
                measured_again(extra, r, "measuring the time regression again in a fresh process failed");
            if (!again) continue;
            if (confirm_time_regression(rep, i, again->time_samples_us, suite, gate, round))
                still.push_back(i);
            else
                ++not_reproduced;
        }
        pending = std::move(still);
    }
    rep.notes.push_back(fmt::format("time: {} regression(s) measured again in up to {} fresh processes ({} samples "
                                    "each): {} slower in every one, {} not (judged on the last)",
                                    regressed.size(), fresh_processes, wanted, pending.size(), not_reproduced));
}

void add_recent_history(harness::RunReport& rep, const fs::path& store, const fs::path& repo, std::ostream& console)
{
    try {
        const auto added = history::attach_recent_history(rep, store, repo);
        for (const auto& problem : added.problems)
            fmt::print(console, "history {}: left out: {}\n", store.string(), problem);
    } catch (const Error& e) {
        // The history only explains a verdict; a store that cannot be read must not change one.
        rep.notes.push_back(fmt::format("no recent history shown: {}", e.what()));
    }
}

void gate_and_report(harness::RunReport& rep, const suite::Suite& suite, const compare::CompareOptions& gate,
                     const ReportOptions& reports, std::ostream& console)
{
    compare::compare_run(rep, suite, gate);
    rep.fail_on_improvement = reports.fail_on_improvement;
    if (!reports.history_store.empty())
        add_recent_history(rep, reports.history_store, fs::absolute(suite.file).parent_path(), console);
    for (const auto& reporter : report::reporter_table()) reporter.write(rep, reports.out_dir, console);
}

} // namespace harness::pipeline
