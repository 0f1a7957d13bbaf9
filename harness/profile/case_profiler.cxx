#include "harness/profile/case_profiler.hxx"

#include "harness/core/error.hxx"
#include "harness/core/metrics.hxx"
#include "harness/core/stopwatch.hxx"
#include "harness/core/text.hxx"
#include "harness/profile/cupti_error.hxx"
#include "harness/profile/derived_metrics.hxx"
#include "harness/profile/hotspots.hxx"
#include "harness/profile/source_lines.hxx"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cupti_profiler_target.h>
#include <fmt/format.h>
#include <set>

namespace harness::profile {

namespace {

constexpr const char* duration_metric = "gpu__time_duration.sum";
constexpr std::size_t hotspots_per_metric = 5;
constexpr int snippet_context = 2;

std::vector<std::string> all_metric_names()
{
    std::vector<std::string> names;
    for (const auto& m : metric_table()) names.emplace_back(m.name);
    return names;
}

} // namespace

std::vector<std::string> range_counters(const std::vector<std::string>& names)
{
    std::vector<std::string> cupti_names;
    for (const auto& name : names) cupti_names.emplace_back(find_metric(name)->source);
    cupti_names.emplace_back(duration_metric); // weights per-launch ratios of multi-kernel cases
    return cupti_names;
}

ProfilePlan plan_profile(const std::vector<std::string>& requested)
{
    std::set<std::string> wanted;
    if (requested.empty()) {
        for (const auto& m : metric_table())
            if (m.in_default_set) wanted.insert(std::string(m.name));
    } else {
        for (const auto& name : requested) {
            if (!find_metric(name))
                throw Error(ErrorKind::bad_input,
                            fmt::format("unknown metric '{}'{}", name, did_you_mean(name, all_metric_names())));
            wanted.insert(name);
        }
    }
    for (const auto& name : std::set<std::string>(wanted))
        for (const auto& input : inputs_of(name)) wanted.insert(input);

    ProfilePlan plan;
    for (const auto& m : metric_table()) {
        if (!wanted.contains(std::string(m.name))) continue;
        if (m.collector == Collector::range_profiler) plan.range_metrics.emplace_back(m.name);
        if (m.collector == Collector::sass_metrics) plan.sass = true;
    }
    return plan;
}

CaseProfiler::CaseProfiler(CUcontext context, int device_ordinal, ProfilePlan plan) : plan_(std::move(plan))
{
    for (const auto& name : plan_.range_metrics)
        if (find_metric(name)->stability == Stability::noisy) noisy_metrics_.push_back(name);
    if (!plan_.range_metrics.empty())
        range_ = std::make_unique<RangeProfiler>(context, device_ordinal, range_counters(plan_.range_metrics));
    // Configured now: reading the counter availability fails once a range profiler is enabled.
    if (!noisy_metrics_.empty())
        noisy_range_ = std::make_unique<RangeProfiler>(context, device_ordinal, range_counters(noisy_metrics_));
    if (plan_.sass) sass_ = std::make_unique<SassProfiler>(context, device_ordinal, hotspot_sass_metrics());
}

CaseProfiler::~CaseProfiler() = default;

std::size_t CaseProfiler::range_passes() const
{
    return range_ ? range_->passes() : 0;
}

void set_range_metrics(const std::vector<std::string>& names, const std::vector<std::vector<double>>& rows,
                       CaseResult& r)
{
    const std::size_t duration_column = names.size();
    double total_duration = 0;
    for (const auto& row : rows) total_duration += row[duration_column];
    for (std::size_t m = 0; m < names.size(); ++m) {
        const auto info = *find_metric(names[m]);
        const CounterReading& reading = info.roles.counter;
        double value = 0;
        if (reading.launches == LaunchCombine::sum) {
            for (const auto& row : rows) value += row[m];
        } else {
            // A ratio (e.g. achieved occupancy): weight each launch by its duration, as a
            // per-kernel profiler's figures would be combined.
            for (const auto& row : rows)
                value += row[m] * (total_duration > 0 ? row[duration_column] / total_duration : 1.0 / rows.size());
        }
        const double scale = reading.percent ? 0.01 : 1.0;
        r.set_metric(names[m], value * scale);
        // Each launch's own figure, where the variant has several (CaseLaunch::label).
        if (rows.size() > 1 && rows.size() == r.launches.size())
            for (std::size_t i = 0; i < rows.size(); ++i)
                if (!r.launches[i].label.empty())
                    r.set_metric(launch_metric_name(names[m], r.launches[i].label), rows[i][m] * scale);
    }
}

void CaseProfiler::record_range(RangeProfiler& profiler, const std::vector<std::string>& names,
                                const std::function<void()>& prepare,
                                const std::vector<std::function<void()>>& launches, CaseResult& r,
                                const std::function<void(std::size_t)>& between)
{
    RangeTimings t;
    const auto rows = profiler.measure(prepare, launches, &t, between);
    r.cost.profile.setup += t.setup;
    r.cost.profile.kernels += t.launches;
    r.cost.profile.teardown += t.teardown;
    r.cost.profile.range_passes += profiler.passes();
    r.cost.profile.enables += t.enabled ? 1 : 0;
    r.cost.profile.remeasured += t.remeasured;
    set_range_metrics(names, rows, r);
}

bool CaseProfiler::batches_noisy() const
{
    return !noisy_range_ || noisy_range_->passes() == 1;
}

bool CaseProfiler::profile_noisy_batch(const std::vector<NoisyCase>& cases)
{
    if (noisy_range_ && !cases.empty()) {
        std::vector<BatchCase> steps;
        for (const auto& c : cases) steps.push_back(c.steps);
        RangeTimings t;
        const auto rows = noisy_range_->measure_batch(steps, &t);
        if (!rows) return false;
        const double share = 1.0 / static_cast<double>(cases.size());
        for (std::size_t k = 0; k < cases.size(); ++k) {
            CaseResult& r = *cases[k].result;
            r.cost.profile.setup += t.setup * share;
            r.cost.profile.kernels += t.launches * share;
            r.cost.profile.teardown += t.teardown * share;
            r.cost.profile.range_passes += 1;
            if (k == 0) {
                r.cost.profile.enables += t.enabled ? 1 : 0;
                r.cost.profile.batches += 1;
            }
            r.cost.profile.batched += 1;
            set_range_metrics(noisy_metrics_, (*rows)[k], r);
        }
    }
    for (const auto& c : cases) add_derived_metrics(*c.result);
    return true;
}

void CaseProfiler::profile_noisy(const std::function<void()>& prepare,
                                 const std::vector<std::function<void()>>& launches, CaseResult& r,
                                 const std::function<void(std::size_t)>& between)
{
    if (noisy_range_) record_range(*noisy_range_, noisy_metrics_, prepare, launches, r, between);
    add_derived_metrics(r);
}

void CaseProfiler::profile(const std::function<void()>& prepare, const std::vector<std::function<void()>>& launches,
                           const CaseSource& source, CaseResult& r, const std::function<void(std::size_t)>& between)
{
    if (range_) record_range(*range_, plan_.range_metrics, prepare, launches, r, between);

    if (sass_ && source.cubin) {
        SassTimings t;
        const auto records = sass_->measure(
            prepare,
            [&] {
                for (const auto& launch : launches) launch();
            },
            &t);
        r.cost.profile.setup += t.setup;
        r.cost.profile.sass += t.run;
        r.cost.profile.teardown += t.teardown;
        r.cost.profile.sass_runs = 1;
        const auto attribution_start = std::chrono::steady_clock::now();
        const auto& names = sass_->metrics();
        std::optional<SourceMap> lines;
        lines.emplace(*source.cubin);
        std::vector<AttributedInstruction> instructions;
        std::map<std::string, double> totals;
        for (const auto& rec : records) {
            AttributedInstruction i;
            i.kernel = rec.function;
            for (std::size_t m = 0; m < names.size(); ++m) {
                i.values[names[m]] = static_cast<double>(rec.values[m]);
                totals[names[m]] += static_cast<double>(rec.values[m]);
            }
            if (lines)
                if (const auto pos = lines->find(rec.function, rec.pc_offset)) {
                    // Line tables keep the folder apart from the file name. nvcc's folder is the
                    // source's; NVRTC's is the compiling process's working folder, so a folder is
                    // used only where the file is found in it.
                    i.file = pos->file;
                    if (!pos->directory.empty() && !std::filesystem::path(pos->file).is_absolute()) {
                        std::error_code ec;
                        const auto joined = std::filesystem::path(pos->directory) / pos->file;
                        if (source.recorded_folders || std::filesystem::is_regular_file(joined, ec))
                            i.file = joined.string();
                    }
                    i.line = pos->line;
                }
            instructions.push_back(std::move(i));
        }
        for (const auto& m : metric_table())
            if (m.collector == Collector::sass_metrics)
                r.set_metric(std::string(m.name), totals[std::string(m.source)]);
        // A launch's own SASS figures, from the instructions of its kernel, where no other launch
        // of the variant runs the same kernel.
        for (const auto& l : r.launches) {
            if (l.label.empty() || l.repeated) continue;
            std::map<std::string, double> own;
            for (const auto& i : instructions)
                if (names_kernel(i.kernel, l.entry))
                    for (const auto& [name, value] : i.values) own[name] += value;
            for (const auto& m : metric_table())
                if (m.collector == Collector::sass_metrics)
                    r.set_metric(launch_metric_name(m.name, l.label), own[std::string(m.source)]);
        }

        r.hotspots = rank_hotspots(instructions, hotspots_per_metric);
        quote_hotspot_lines(r.hotspots, source);
        r.cost.profile.teardown += seconds_since(attribution_start);
    }
    add_derived_metrics(r);
}

void quote_hotspot_lines(std::vector<Hotspot>& hotspots, const CaseSource& source)
{
    for (auto& h : hotspots) {
        if (h.file.empty() || !source.resolve) continue;
        const auto path = source.resolve(h.file);
        if (source.may_quote && source.may_quote(path)) attach_snippet(h, path, snippet_context);
        if (source.display) h.file = source.display(path);
    }
}

std::optional<std::string> profiling_problem(CUcontext context, int device_ordinal)
{
    if (const char* injection = std::getenv("CUDA_INJECTION64_PATH"); injection && *injection)
        return fmt::format("an external profiler is attached (CUDA_INJECTION64_PATH={}): use --external-profiler "
                           "to run each case once for it, or --no-profile",
                           injection);
    try {
        (void)counter_availability(context);
        (void)chip_name(device_ordinal);
    } catch (const CuptiError& e) {
        return std::string(e.what());
    }
    return std::nullopt;
}

} // namespace harness::profile
