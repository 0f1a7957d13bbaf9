#include "harness/pipeline/gpu_scan.hxx"

#include "harness/cliff/combs.hxx"
#include "harness/cliff/steps.hxx"
#include "harness/core/error.hxx"
#include "harness/core/metrics.hxx"
#include "harness/core/stopwatch.hxx"
#include "harness/pipeline/gpu_run.hxx"
#include "harness/run/scan_worker.hxx"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <map>

namespace harness::pipeline {

namespace {

using Clock = std::chrono::steady_clock;

/// One map to scan: a variant and its points along the axis.
struct PlannedMap {
    const suite::VariantSpec* variant = nullptr;
    ScanSeries series;
};

/// Whether a GPU scan times `variant` along the axis: its own kernels are, a library call is not
/// (its cases at the axis' ends run as every case does).
bool is_scanned(const suite::VariantSpec& variant)
{
    switch (variant.kind) {
    case suite::VariantKind::source:
    case suite::VariantKind::module:
    case suite::VariantKind::triton:
    case suite::VariantKind::cutile: return true;
    case suite::VariantKind::builtin: return false;
    }
    return false;
}

/// The maps to scan: every wanted kernel variant (`wanted` empty: every one) at each combination
/// of the other parameters, its points in axis order; points whose configuration did not compile
/// are left out. Notes say what is left out and why.
std::vector<PlannedMap> plan_maps(const suite::Suite& suite, const compile::SuiteModules& modules,
                                  const std::vector<std::string>& wanted, std::vector<std::string>& notes)
{
    const suite::ParamSpec* axis = suite.scanned_param();
    std::vector<PlannedMap> planned;
    std::map<std::pair<std::string, std::string>, std::size_t> index; // (variant, others)
    std::map<std::string, std::size_t> uncompiled;
    for (const auto& point : suite::sweep_points(suite))
        for (const auto& v : suite.variants) {
            if (!is_scanned(v)) continue;
            if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), v.name) == wanted.end()) continue;
            if (modules.error(v, point) || !modules.find(v, point)) {
                ++uncompiled[v.name];
                continue;
            }
            const std::string others = suite::others_text(suite, point, axis->name);
            const auto [it, fresh] = index.emplace(std::pair{v.name, others}, planned.size());
            if (fresh) planned.push_back({&v, {v.name, others, {}, {}}});
            planned[it->second].series.points.push_back(point);
        }
    for (const auto& v : suite.variants)
        if (!is_scanned(v) && (wanted.empty() || std::find(wanted.begin(), wanted.end(), v.name) != wanted.end()))
            notes.push_back(fmt::format("GPU scan: {} is a library call ({}), not scanned; its cases at the ends of {} "
                                        "ran as every case does",
                                        v.name, v.builtin, axis->name));
    for (const auto& [name, count] : uncompiled)
        notes.push_back(fmt::format(
            "GPU scan: {} points of {} left out of its maps: their configuration did not compile", count, name));
    for (auto& map : planned)
        std::stable_sort(
            map.series.points.begin(), map.series.points.end(),
            [&](const suite::Bindings& a, const suite::Bindings& b) { return a.at(axis->name) < b.at(axis->name); });
    return planned;
}

/// The cliff maps of the scanned series (`failures[j]` non-empty: series j failed, with a note),
/// and the notes on what they hold and what the scan cost since `started`.
std::vector<CliffMap> draw_maps(const suite::Suite& suite, const std::vector<PlannedMap>& planned,
                                const std::vector<std::string>& failures, const run::DeviceInfo& device,
                                std::size_t workers, Clock::time_point started, std::vector<std::string>& notes)
{
    const suite::ParamSpec* axis = suite.scanned_param();
    std::vector<CliffMap> maps;
    std::size_t measured = 0, failed_points = 0;
    std::vector<std::string> point_errors;
    const cliff::GpuShape gpu{device.sm_count};
    for (std::size_t j = 0; j < planned.size(); ++j) {
        const ScanSeries& series = planned[j].series;
        const std::string name =
            fmt::format("{} {}{}", series.variant, axis->name, series.others.empty() ? "" : " " + series.others);
        if (!failures[j].empty()) {
            notes.push_back(fmt::format("GPU scan: the map {} failed: {}", name, failures[j]));
            continue;
        }
        for (const auto& p : series.measured) {
            if (p.ok) {
                ++measured;
            } else {
                ++failed_points;
                if (point_errors.size() < 3) point_errors.push_back(p.error);
            }
        }
        if (series.measured.size() < series.points.size())
            notes.push_back(fmt::format("GPU scan: the map {} has {} of its {} points", name, series.measured.size(),
                                        series.points.size()));
        maps.push_back(gpu_cliff_map(suite, series, device.arch, gpu));
    }
    if (failed_points > 0)
        notes.push_back(fmt::format("GPU scan: {} points did not run and are left out of their maps ({}{})",
                                    failed_points, fmt::join(point_errors, "; "),
                                    failed_points > point_errors.size() ? "; ..." : ""));
    const double seconds = seconds_since(started);
    std::size_t runs_per_batch = 0;
    for (const auto& map : planned)
        for (const auto& p : map.series.measured) runs_per_batch = std::max(runs_per_batch, p.runs_per_batch);
    notes.push_back(fmt::format(
        "GPU scan of {}: {} points in {} maps in {:.2f} s ({:.0f} points/s, {} worker(s)); each point timed with CUDA "
        "events around {} batches of up to {} back-to-back runs, taken in rounds over the axis (median of the batch "
        "means, noise 1.4826 x MAD), the "
        "L2 not emptied between runs; unverified and unprofiled: only the scan's ends ran as full cases",
        axis->name, measured, maps.size(), seconds, seconds > 0 ? static_cast<double>(measured) / seconds : 0.0,
        workers, run::ScanTiming{}.batches, runs_per_batch));
    return maps;
}

} // namespace

bool scans_on_gpu(const suite::Suite& suite, const run::RunSettings& settings, const ShardInfo& shard)
{
    if (!suite.scanned_param() || shard.sharded() || !settings.only_cases.empty() || settings.verify_only ||
        settings.external_profiler)
        return false;
    return std::any_of(suite.variants.begin(), suite.variants.end(),
                       [](const suite::VariantSpec& v) { return is_scanned(v); });
}

std::vector<suite::Case> scan_end_cases(const suite::Suite& suite, std::vector<suite::Case> cases)
{
    const suite::ParamSpec* axis = suite.scanned_param();
    if (!axis || axis->values.empty()) return cases;
    const std::int64_t first = axis->values.front(), last = axis->values.back();
    std::erase_if(cases, [&](const suite::Case& c) {
        const std::int64_t x = c.params.at(axis->name);
        return x != first && x != last;
    });
    return cases;
}

CliffMap gpu_cliff_map(const suite::Suite& suite, const ScanSeries& series, const std::string& arch,
                       const cliff::GpuShape& gpu)
{
    const suite::ParamSpec* axis = suite.scanned_param();
    const suite::VariantSpec* variant = suite.find_variant(series.variant);
    if (!axis || !variant)
        throw Error(ErrorKind::internal, fmt::format("{}: no scanned axis or no variant '{}' for a GPU cliff map",
                                                     suite.file.string(), series.variant));
    CliffMap map;
    map.variant = series.variant;
    map.axis = axis->name;
    map.others = series.others;
    if (!series.points.empty()) map.other_params = suite::other_params(series.points.front(), axis->name);
    map.arch = arch;
    // Time per unit of work, where the suite says what the work is: a step is then a change in
    // how efficiently the GPU works, not the work growing along the axis.
    const suite::Expression* work = variant->flops ? &*variant->flops : variant->bytes ? &*variant->bytes : nullptr;
    map.figure = work ? "time_per_work" : "time";
    map.unit = work ? (variant->flops ? "us/GFLOP" : "us/GB") : "us";

    std::vector<cliff::LaunchShape> shapes;
    for (std::size_t i = 0; i < series.measured.size() && i < series.points.size(); ++i) {
        const run::ScanPoint& p = series.measured[i];
        if (!p.ok || !(p.time_us > 0)) continue; // a point that did not run is left out, as a failed case is
        double scale = 1.0;
        if (work) {
            double amount = 0;
            try {
                amount = static_cast<double>(work->evaluate(series.points[i])) * 1e-9;
            } catch (const suite::ExpressionError&) {
                continue;
            }
            if (!(amount > 0)) continue;
            scale = 1.0 / amount;
        }
        map.x.push_back(static_cast<double>(p.x));
        map.values.push_back(p.time_us * scale);
        // Never 0: a noisy map is told from an exact one by its noise.
        map.noise.push_back(std::max(p.noise_us, run::event_resolution_us * 1e-3) * scale);
        shapes.push_back(p.shape);
    }
    if (map.x.size() < 2) return map;
    cliff::StepOptions steps;
    steps.min_depth = suite.cliffs.min_depth;
    steps.worse_only = true; // time: higher is worse, and where it falls again is the next level
    map.cliffs = cliff::find_steps(map.x, map.values, map.noise, steps);
    for (auto& c : map.cliffs) cliff::explain_cliff(c, shapes, gpu, axis->name);
    // Where a pitch grows along the axis, a level that turns into a comb of alignments is a step
    // that the whole series' scatter hides; each residue of the comb shows it.
    cliff::add_comb_steps(map.cliffs, map.x, map.values, map.noise, shapes, gpu, axis->name, steps);
    return map;
}

std::vector<CliffMap> scan_suite_gpu(const suite::Suite& suite, const compile::SuiteModules& modules,
                                     const run::DeviceInfo& device, const run::RunSettings& settings,
                                     std::vector<std::string>& notes)
{
    if (!suite.scanned_param()) return {};
    const auto started = Clock::now();
    std::vector<PlannedMap> planned = plan_maps(suite, modules, settings.variants, notes);
    if (planned.empty()) return {};

    // One worker scans the maps in order; one that faults or hangs fails its map, and a fresh
    // worker takes the next.
    std::vector<run::ScanJob> jobs;
    for (const auto& map : planned) jobs.push_back({map.variant, map.series.points});
    run::ScanOutcome outcome = run::scan_isolated(suite, modules.modules, jobs, device, settings);
    if (!outcome.not_run.empty()) {
        notes.push_back(fmt::format("GPU scan: not run: {}", outcome.not_run));
        return {};
    }
    if (outcome.stopped)
        notes.push_back("GPU scan: a worker ended before scanning anything; the maps left are not drawn");
    std::vector<std::string> failures;
    for (std::size_t j = 0; j < planned.size(); ++j) {
        planned[j].series.measured = std::move(outcome.jobs[j].measured);
        failures.push_back(std::move(outcome.jobs[j].failure));
    }
    return draw_maps(suite, planned, failures, device, outcome.workers, started, notes);
}

namespace {

/// Profiles the points either side of every cliff of `maps` explained as alignment, as full cases
/// of a run of their own, and adds their global load sectors per request to the explanation: a
/// measured change turns the model's "probably" into a fact. Returns a note, or "" when no cliff
/// needed it.
std::string confirm_alignment(std::vector<CliffMap>& maps, const suite::Suite& suite, const run::DeviceInfo& device,
                              const run::RunSettings& settings, const compile::CompileCache* cache)
{
    run::RunSettings sides = settings;
    sides.only_cases.clear();
    sides.variants.clear();
    sides.shard.reset();
    sides.profile = true;
    sides.verify_only = false;
    sides.external_profiler = false;
    sides.resample_rounds = 0;
    std::size_t cliffs = 0;
    for (const auto& m : maps)
        for (const auto& c : m.cliffs)
            if (c.cause == CliffCause::alignment) {
                ++cliffs;
                for (const double x : {c.x_before, c.x_after})
                    sides.only_cases.emplace_back(
                        m.variant, suite::point_text(suite, m.axis, static_cast<std::int64_t>(x), m.other_params));
            }
    if (cliffs == 0) return "";
    const auto started = std::chrono::steady_clock::now();
    harness::RunReport run;
    try {
        run = run_suite_gpu(suite, device, sides, cache);
    } catch (const std::exception& e) {
        return fmt::format("alignment cliffs not confirmed with counters: {}", e.what());
    }
    const auto sectors = [&](const std::string& variant, const std::string& params) -> std::optional<double> {
        for (const auto& r : run.results)
            if (r.variant == variant && r.params_text == params && r.status == CaseStatus::passed)
                return r.metric(metric::global_ld_sectors_per_request);
        return std::nullopt;
    };
    std::size_t confirmed = 0;
    for (auto& m : maps)
        for (auto& c : m.cliffs) {
            if (c.cause != CliffCause::alignment) continue;
            const auto before = sectors(
                m.variant, suite::point_text(suite, m.axis, static_cast<std::int64_t>(c.x_before), m.other_params));
            const auto after = sectors(
                m.variant, suite::point_text(suite, m.axis, static_cast<std::int64_t>(c.x_after), m.other_params));
            if (!before || !after) continue;
            // A map of time: a step up is slower, so more sectors per request bear it out.
            const bool rise_expected = c.depth > 0;
            c.explanation += cliff::alignment_confirmation(*before, *after, rise_expected);
            if (cliff::alignment_confirmed(*before, *after, rise_expected)) ++confirmed;
        }
    return fmt::format("alignment cliffs confirmed with counters: {} of {} (the points either side profiled as full "
                       "cases in {:.2f} s)",
                       confirmed, cliffs, seconds_since(started));
}

} // namespace

void add_gpu_cliff_maps(harness::RunReport& report, const suite::Suite& suite, const compile::SuiteModules& modules,
                        const run::DeviceInfo& device, const run::RunSettings& settings,
                        const compile::CompileCache* cache)
{
    std::vector<std::string> notes;
    auto maps = scan_suite_gpu(suite, modules, device, settings, notes);
    if (const std::string note = confirm_alignment(maps, suite, device, settings, cache); !note.empty())
        notes.push_back(note);
    for (auto& m : maps) report.cliff_maps.push_back(std::move(m));
    for (auto& n : notes) report.notes.push_back(std::move(n));
}

} // namespace harness::pipeline
