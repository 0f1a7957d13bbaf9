#include "harness/run/scan_runner.hxx"

#include "harness/compile/cubin_info.hxx"
#include "harness/compile/occupancy.hxx"
#include "harness/core/stats.hxx"
#include "harness/run/buffer_data.hxx"
#include "harness/run/launch_setup.hxx"
#include "harness/suite/compile_params.hxx"
#include "harness/suite/sweep.hxx"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>

// How a point is timed, and why so.
//
// A scan wants the shape of a series over thousands of points, not each point's absolute time to
// a fraction of a percent: so each point gets a few batches of back-to-back runs between two CUDA
// events, each after a warm-up run, taken in rounds over the axis, and the batch means' median and
// robust spread. Per-kernel GPU
// durations (the case runner's CUPTI timer) would drop the launch gaps but cost a profiler pass
// per batch, about as long as the whole point takes here.
//
// The L2 is not emptied between runs (times are warm, as with `--hot`): an emptying inside a
// batch would be timed with it, and one before each batch would make only the batch's first run
// cold, a share that would change with the batch size. Every point is measured the same way, which
// is what a step along the axis needs; a working set that outgrows the L2 along the axis shows as a
// step of its own, which the launch model leaves unexplained.
//
// Inout buffers are restored before each batch (outside the events), not between the runs of a
// batch: a copy there would be timed too. A kernel whose time depends on the values it overwrote
// is timed on its own outputs after the first run of a batch.

namespace harness::run {

std::pair<double, double> summarize_batches(std::vector<double> means, std::size_t runs_per_batch)
{
    const double floor = event_resolution_us / static_cast<double>(std::max<std::size_t>(runs_per_batch, 1));
    if (means.empty()) return {0.0, floor}; // a point not timed (no rounds)
    const double middle = median(means);
    std::vector<double> deviations;
    for (const double m : means) deviations.push_back(std::abs(m - middle));
    return {middle, std::max(1.4826 * median(deviations), floor)};
}

namespace {

/// Calls `visit(name, field)` for each field of a point (ScanPoint, const or not) that travels from
/// the scan worker as it is: one list for writing and reading. The shape's `x` is the point's, and
/// its optional pitch goes alone.
template <typename Point, typename Visit> void each_field(Point& p, const Visit& visit)
{
    visit("x", p.x);
    visit("ok", p.ok);
    visit("error", p.error);
    visit("time_us", p.time_us);
    visit("noise_us", p.noise_us);
    visit("runs_per_batch", p.runs_per_batch);
    visit("grid", p.shape.grid);
    visit("block", p.shape.block);
    visit("blocks_per_sm", p.shape.blocks_per_sm);
    visit("limiter", p.shape.limiter);
    visit("registers_per_thread", p.shape.registers_per_thread);
    visit("shared_bytes", p.shape.shared_bytes);
}

} // namespace

void to_json(nlohmann::json& j, const ScanPoint& p)
{
    j = nlohmann::json::object();
    each_field(p, [&](const char* name, const auto& field) { j[name] = field; });
    if (p.shape.pitch_bytes) j["pitch_bytes"] = *p.shape.pitch_bytes;
}

void from_json(const nlohmann::json& j, ScanPoint& p)
{
    each_field(p, [&](const char* name, auto& field) { j.at(name).get_to(field); });
    p.shape.x = static_cast<double>(p.x);
    if (j.contains("pitch_bytes")) p.shape.pitch_bytes = j.at("pitch_bytes").get<std::uint64_t>();
}

/// The variant's buffers, allocated once for the largest point.
struct ScanRunner::Buffers {
    struct Buffer {
        suite::BufferSpec spec;
        DeviceMemory device;
        DeviceMemory pristine; ///< initial contents of an inout buffer, restored before each batch
    };
    std::vector<std::unique_ptr<Buffer>> list;

    CUdeviceptr pointer(const std::string& name) const
    {
        for (const auto& b : list)
            if (b->spec.name == name) return b->device.ptr;
        throw LaunchProblem("no buffer " + name);
    }
};

ScanRunner::ScanRunner(GpuSession& session, const suite::Suite& suite,
                       const std::map<std::string, compile::CompiledModule>& modules)
    : session_(session), suite_(suite), modules_(modules)
{
}

ScanRunner::~ScanRunner()
{
    for (auto& [key, module] : loaded_) driver().cuModuleUnload(module);
}

CUmodule ScanRunner::module_for(const std::string& key)
{
    if (auto it = loaded_.find(key); it != loaded_.end()) return it->second;
    const auto found = modules_.find(key);
    if (found == modules_.end()) throw LaunchProblem(fmt::format("no compiled module for {}", key));
    CUmodule module = nullptr;
    CU_CHECK(driver().cuModuleLoadData(&module, found->second.cubin.data()));
    loaded_[key] = module;
    return module;
}

/// One scan of a variant along the axis: its buffers, its points' launches, and how they are timed.
class ScanRunner::Scan {
public:
    Scan(ScanRunner& runner, const suite::VariantSpec& variant, const std::vector<suite::Bindings>& points,
         const ScanTiming& timing)
        : runner_(runner), variant_(variant), points_(points), timing_(timing), d_(driver()),
          arch_(runner.session_.info().arch), axis_(*runner.suite_.scanned_param()),
          limits_(compile::find_arch_limits(arch_))
    {
    }

    void run(const std::function<void(const ScanPoint&)>& on_point);

private:
    /// One point's launches, and its launch shape.
    struct Setup {
        std::vector<KernelLaunch> launches;
        cliff::LaunchShape shape;
    };

    std::string where(const suite::Bindings& point) const
    {
        return fmt::format("{} {}", variant_.name, suite::params_text(runner_.suite_, point));
    }
    void make_buffers();
    Setup set_up(const suite::Bindings& point);
    void read_resources(Setup& s, const compile::CubinInfo& cubin) const;
    void run_once(const Setup& s) const;
    void restore() const;
    double time_batch(const Setup& s, std::size_t runs) const;
    template <typename Body> std::optional<std::string> guarded(const suite::Bindings& point, const Body& body) const;
    void calibrate();
    void time_points(std::vector<ScanPoint>& results);

    ScanRunner& runner_;
    const suite::VariantSpec& variant_;
    const std::vector<suite::Bindings>& points_;
    const ScanTiming& timing_;
    const Driver& d_;
    const std::string& arch_;
    const suite::ParamSpec& axis_;
    const compile::ArchLimits* limits_;
    Buffers buffers_;
    std::map<std::string, compile::CubinInfo> cubins_; // by compile key, for the kernels' barriers
    std::size_t runs_per_batch_ = 0;
};

void ScanRunner::scan(const suite::VariantSpec& variant, const std::vector<suite::Bindings>& points,
                      const ScanTiming& timing, const std::function<void(const ScanPoint&)>& on_point)
{
    if (!suite_.scanned_param() || points.empty()) return;
    Scan(*this, variant, points, timing).run(on_point);
}

void ScanRunner::Scan::run(const std::function<void(const ScanPoint&)>& on_point)
{
    make_buffers();
    calibrate();
    std::vector<ScanPoint> results(points_.size());
    time_points(results);
    for (ScanPoint& result : results) {
        result.shape.x = static_cast<double>(result.x);
        on_point(result);
    }
}

/// Each buffer at its largest count over the points, drawn at the point that needs it.
void ScanRunner::Scan::make_buffers()
{
    std::size_t total_bytes = 0;
    for (const auto& spec : runner_.suite_.buffers_of(variant_)) {
        if (!suite::uses_buffer(variant_, spec.name)) continue;
        check_type_on_gpu(spec.type, arch_, "buffer " + spec.name);
        std::int64_t count = 0;
        const suite::Bindings* largest = nullptr;
        for (const auto& point : points_) {
            try {
                const std::int64_t c = spec.count.evaluate(point);
                if (c > count) count = c, largest = &point;
            } catch (const suite::ExpressionError&) {
                // That point fails when its launch is set up.
            }
        }
        if (!largest) throw LaunchProblem(fmt::format("buffer {} has no positive count at any point", spec.name));
        auto b = std::make_unique<Buffers::Buffer>();
        b->spec = spec;
        b->device.bytes = static_cast<std::size_t>(count) * suite::element_size(spec.type);
        Bytes host(b->device.bytes);
        draw_contents(spec, static_cast<std::size_t>(count), *largest, host.data());
        total_bytes += b->device.bytes * (spec.role == suite::BufferRole::inout ? 2 : 1);
        std::size_t free_bytes = 0, all_bytes = 0;
        CU_CHECK(d_.cuMemGetInfo(&free_bytes, &all_bytes));
        if (b->device.bytes > free_bytes)
            throw LaunchProblem(fmt::format("{}: buffers need {:.1f} MiB at the largest point, the GPU has {:.1f} MiB "
                                            "free",
                                            where(*largest), total_bytes / 1048576.0, free_bytes / 1048576.0));
        CU_CHECK(d_.cuMemAlloc(&b->device.ptr, b->device.bytes));
        CU_CHECK(d_.cuMemcpyHtoD(b->device.ptr, host.data(), host.size()));
        if (spec.role == suite::BufferRole::inout) {
            b->pristine.bytes = b->device.bytes;
            CU_CHECK(d_.cuMemAlloc(&b->pristine.ptr, b->pristine.bytes));
            CU_CHECK(d_.cuMemcpyDtoDAsync(b->pristine.ptr, b->device.ptr, b->device.bytes, runner_.session_.stream()));
        }
        buffers_.list.push_back(std::move(b));
    }
    CU_CHECK(d_.cuStreamSynchronize(runner_.session_.stream()));
}

ScanRunner::Scan::Setup ScanRunner::Scan::set_up(const suite::Bindings& point)
{
    Setup s;
    const std::string key = suite::compile_key(variant_, point);
    const CUmodule module = runner_.module_for(key);
    const compile::CompiledModule& compiled = runner_.modules_.at(key);
    auto info = cubins_.find(key);
    if (info == cubins_.end()) info = cubins_.emplace(key, compile::read_cubin_info(compiled.cubin)).first;
    for (std::size_t li = 0; li < variant_.launches.size(); ++li)
        s.launches.push_back(set_up_kernel_launch(
            variant_, li, module, compiled, point, [&](const std::string& name) { return buffers_.pointer(name); },
            arch_));
    // The first launch's geometry; the resources of the launch with the fewest resident blocks,
    // as the case runner reports a variant of several launches.
    auto& shape = s.shape;
    shape.x = static_cast<double>(point.at(axis_.name));
    for (std::size_t k = 0; k < 3; ++k) {
        shape.grid[k] = s.launches.front().grid[k];
        shape.block[k] = s.launches.front().block[k];
    }
    read_resources(s, info->second);
    if (axis_.pitch) {
        const std::int64_t pitch = evaluate_at(*axis_.pitch, point, "pitch");
        if (pitch < 0) throw LaunchProblem(fmt::format("pitch = {} is negative", pitch));
        shape.pitch_bytes = static_cast<std::uint64_t>(pitch);
    }
    return s;
}

/// The shape's resources: those of the launch of `s` with the fewest resident blocks per SM
/// (`cubin`: its module's, for the kernels' barriers).
void ScanRunner::Scan::read_resources(Setup& s, const compile::CubinInfo& cubin) const
{
    auto& shape = s.shape;
    int fewest = std::numeric_limits<int>::max();
    for (const auto& l : s.launches) {
        int regs = 0, smem = 0, active = 0;
        CU_CHECK(d_.cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, l.function));
        CU_CHECK(d_.cuFuncGetAttribute(&smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, l.function));
        const int threads = static_cast<int>(l.block[0] * l.block[1] * l.block[2]);
        CU_CHECK(d_.cuOccupancyMaxActiveBlocksPerMultiprocessor(&active, l.function, threads, l.shared_bytes));
        if (active >= fewest) continue;
        fewest = active;
        shape.blocks_per_sm = active;
        shape.registers_per_thread = regs;
        shape.shared_bytes = static_cast<std::uint64_t>(smem) + l.shared_bytes;
        shape.limiter.clear();
        if (limits_) {
            // The driver gives the blocks, the calculator what limits them (as the static tier).
            compile::OccupancyOptions o;
            for (const auto& k : cubin.kernels)
                if (k.name == l.symbol) o.barriers_per_block = k.barriers;
            o.shared_opt_in = l.shared_bytes > 48 * 1024;
            shape.limiter = std::string(compile::to_string(
                compile::theoretical_occupancy(*limits_, threads, regs, smem + static_cast<int>(l.shared_bytes), o)
                    .limiter));
        }
    }
}

void ScanRunner::Scan::run_once(const Setup& s) const
{
    for (const auto& l : s.launches) enqueue(l, runner_.session_.stream());
}

void ScanRunner::Scan::restore() const
{
    for (const auto& b : buffers_.list)
        if (b->pristine.ptr)
            CU_CHECK(d_.cuMemcpyDtoDAsync(b->device.ptr, b->pristine.ptr, b->device.bytes, runner_.session_.stream()));
}

/// Microseconds of `runs` back-to-back runs, between two events.
double ScanRunner::Scan::time_batch(const Setup& s, std::size_t runs) const
{
    GpuSession& session = runner_.session_;
    restore();
    CU_CHECK(d_.cuEventRecord(session.start_event(), session.stream()));
    for (std::size_t r = 0; r < runs; ++r) run_once(s);
    CU_CHECK(d_.cuEventRecord(session.stop_event(), session.stream()));
    CU_CHECK(d_.cuEventSynchronize(session.stop_event()));
    float ms = 0;
    CU_CHECK(d_.cuEventElapsedTime(&ms, session.start_event(), session.stop_event()));
    return static_cast<double>(ms) * 1e3;
}

/// A point that cannot launch as specified, or whose launch the driver refuses without harm to the
/// context, fails alone (the message says why); a fault propagates.
template <typename Body>
std::optional<std::string> ScanRunner::Scan::guarded(const suite::Bindings& point, const Body& body) const
{
    try {
        body();
        return std::nullopt;
    } catch (const LaunchProblem& e) {
        return fmt::format("{}: {}", where(point), e.what());
    } catch (const CudaError& e) {
        if (e.poisons_context()) throw;
        return fmt::format("{}: {}", where(point), e.what());
    }
}

/// One batch size for the axis, from a single run at each end (after a warm-up).
void ScanRunner::Scan::calibrate()
{
    double fastest = std::numeric_limits<double>::infinity(), slowest = 0;
    for (const auto* point : {&points_.front(), &points_.back()}) {
        guarded(*point, [&] {
            const Setup s = set_up(*point);
            run_once(s);
            const double us = std::max(time_batch(s, 1), event_resolution_us);
            fastest = std::min(fastest, us);
            slowest = std::max(slowest, us);
        });
    }
    if (slowest > 0) {
        runs_per_batch_ = static_cast<std::size_t>(std::ceil(timing_.batch_target_us / fastest));
        if (static_cast<double>(runs_per_batch_) * slowest > timing_.batch_limit_us)
            runs_per_batch_ = static_cast<std::size_t>(std::floor(timing_.batch_limit_us / slowest));
        runs_per_batch_ = std::clamp<std::size_t>(runs_per_batch_, 1, timing_.max_runs_per_batch);
    }
}

/// The batches of every point are taken in rounds over the whole axis, forwards then backwards,
/// not one point's batches back to back: a change of the GPU's pace during the scan (its clock,
/// another process) then touches every point's median alike, where point by point it would shift
/// a stretch of the axis and pass for a step (an H100 showed one of 13 % on a kernel that does
/// not depend on the axis at all).
void ScanRunner::Scan::time_points(std::vector<ScanPoint>& results)
{
    std::vector<std::optional<Setup>> setups(points_.size());
    std::vector<std::vector<double>> means(points_.size());
    const auto fail = [&](std::size_t i, std::optional<std::string> problem) {
        if (!problem) return;
        results[i].ok = false;
        results[i].error = *problem;
        setups[i].reset();
    };
    for (std::size_t i = 0; i < points_.size(); ++i) {
        results[i].x = points_[i].at(axis_.name);
        results[i].ok = true;
        fail(i, guarded(points_[i], [&] {
                 setups[i] = set_up(points_[i]);
                 results[i].shape = setups[i]->shape;
             }));
    }
    const int rounds = std::max(timing_.batches, 1);
    for (int round = 0; round < rounds; ++round)
        for (std::size_t k = 0; k < points_.size(); ++k) {
            const std::size_t i = round % 2 == 0 ? k : points_.size() - 1 - k;
            if (!setups[i]) continue;
            fail(i, guarded(points_[i], [&] {
                     const Setup& s = *setups[i];
                     run_once(s); // warm-up: a launch at another size ran just before
                     CU_CHECK(d_.cuStreamSynchronize(runner_.session_.stream()));
                     if (runs_per_batch_ == 0) // neither end ran: this point sets the batch size
                         runs_per_batch_ = std::clamp<std::size_t>(
                             static_cast<std::size_t>(
                                 std::ceil(timing_.batch_target_us / std::max(time_batch(s, 1), event_resolution_us))),
                             1, timing_.max_runs_per_batch);
                     means[i].push_back(time_batch(s, runs_per_batch_) / static_cast<double>(runs_per_batch_));
                 }));
        }
    for (std::size_t i = 0; i < points_.size(); ++i) {
        if (!results[i].ok) continue;
        std::tie(results[i].time_us, results[i].noise_us) = summarize_batches(means[i], runs_per_batch_);
        results[i].runs_per_batch = runs_per_batch_;
    }
}

} // namespace harness::run
