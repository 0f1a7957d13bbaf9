#include "harness/profile/range_profiler.hxx"

#include "harness/core/stopwatch.hxx"
#include "harness/profile/cupti_error.hxx"

#include <bit>
#include <chrono>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <fmt/format.h>
#include <map>
#include <mutex>

namespace harness::profile {

std::string chip_name(int device_ordinal)
{
    auto p = cupti_params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
    p.deviceIndex = static_cast<std::size_t>(device_ordinal);
    CUPTI_CHECK(cuptiDeviceGetChipName(&p));
    return p.pChipName;
}

void initialize_profiler()
{
    static std::once_flag once;
    std::call_once(once, [] {
        auto p = cupti_params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
        CUPTI_CHECK(cuptiProfilerInitialize(&p));
    });
}

const std::vector<std::uint8_t>& counter_availability(CUcontext context)
{
    // Read once per context: each read costs a round trip to the driver, and once a range
    // profiler is enabled on the context the read fails.
    static std::mutex mutex;
    static std::map<CUcontext, std::vector<std::uint8_t>> images;
    const std::lock_guard lock(mutex);
    auto& image = images[context];
    if (image.empty()) {
        initialize_profiler();
        auto a = cupti_params<CUpti_Profiler_GetCounterAvailability_Params>(
            CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
        a.ctx = context;
        CUPTI_CHECK(cuptiProfilerGetCounterAvailability(&a));
        std::vector<std::uint8_t> read(a.counterAvailabilityImageSize);
        a.pCounterAvailabilityImage = read.data();
        CUPTI_CHECK(cuptiProfilerGetCounterAvailability(&a));
        image = std::move(read);
    }
    return image;
}

/// The host-side metric evaluator for one chip; freed with the profiler.
struct RangeProfiler::HostObject {
    CUpti_Profiler_Host_Object* object = nullptr;
    std::vector<std::uint8_t> availability;
    ~HostObject()
    {
        if (!object) return;
        auto p =
            cupti_params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
        p.pHostObject = object;
        cuptiProfilerHostDeinitialize(&p);
    }
};

/// An enabled range profiler on a context, disabled on every path out.
class RangeProfiler::Enabled {
public:
    explicit Enabled(CUcontext context)
    {
        auto p = cupti_params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
        p.ctx = context;
        CUPTI_CHECK(cuptiRangeProfilerEnable(&p));
        object_ = p.pRangeProfilerObject;
    }
    ~Enabled()
    {
        auto p = cupti_params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
        p.pRangeProfilerObject = object_;
        cuptiRangeProfilerDisable(&p);
    }
    Enabled(const Enabled&) = delete;
    Enabled& operator=(const Enabled&) = delete;
    CUpti_RangeProfiler_Object* get() const { return object_; }

private:
    CUpti_RangeProfiler_Object* object_ = nullptr;
};

/// The enabled range profiler of a context and the profiler whose configuration it holds.
struct RangeProfiler::SharedEnable {
    std::unique_ptr<Enabled> enabled;
    const RangeProfiler* owner = nullptr;
};

RangeProfiler::RangeProfiler(CUcontext context, int device_ordinal, std::vector<std::string> metrics, RangeMode mode)
    : context_(context), mode_(mode), metrics_(std::move(metrics)), host_(std::make_unique<HostObject>())
{
    initialize_profiler();
    for (const auto& m : metrics_) metric_names_.push_back(m.c_str());
    const std::string chip = chip_name(device_ordinal);

    // Which counters this context can read (another profiler or a permission problem shows up
    // here, before any case runs).
    host_->availability = counter_availability(context_);

    auto init = cupti_params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
    init.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    init.pChipName = chip.c_str();
    init.pCounterAvailabilityImage = host_->availability.data();
    CUPTI_CHECK(cuptiProfilerHostInitialize(&init));
    host_->object = init.pHostObject;

    auto add = cupti_params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
        CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
    add.pHostObject = host_->object;
    add.ppMetricNames = metric_names_.data();
    add.numMetrics = metric_names_.size();
    CUPTI_CHECK(cuptiProfilerHostConfigAddMetrics(&add));

    auto size = cupti_params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
        CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
    size.pHostObject = host_->object;
    CUPTI_CHECK(cuptiProfilerHostGetConfigImageSize(&size));
    config_image_.resize(size.configImageSize);
    auto image =
        cupti_params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
    image.pHostObject = host_->object;
    image.configImageSize = config_image_.size();
    image.pConfigImage = config_image_.data();
    CUPTI_CHECK(cuptiProfilerHostGetConfigImage(&image));

    auto passes =
        cupti_params<CUpti_Profiler_Host_GetNumOfPasses_Params>(CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
    passes.configImageSize = config_image_.size();
    passes.pConfigImage = config_image_.data();
    CUPTI_CHECK(cuptiProfilerHostGetNumOfPasses(&passes));
    passes_ = passes.numOfPasses;
}

RangeProfiler::~RangeProfiler()
{
    if (shared_ && shared_->owner == this) {
        shared_->enabled.reset();
        shared_->owner = nullptr;
    }
}

RangeProfiler::Enabled& RangeProfiler::acquire(bool* enabled)
{
    if (enabled) *enabled = false;
    // Enabled once for the profiler's life: enabling costs about 0.1 s per case on an H100, and an
    // enabled profiler that is not started changes neither the timed samples nor the counters.
    if (!shared_) {
        static std::mutex mutex;
        static std::map<CUcontext, std::weak_ptr<SharedEnable>> by_context;
        const std::lock_guard lock(mutex);
        shared_ = by_context[context_].lock();
        if (!shared_) {
            shared_ = std::make_shared<SharedEnable>();
            by_context[context_] = shared_;
        }
    }
    // The enabled profiler keeps the configuration it was first given: another profiler's
    // configuration needs it enabled afresh.
    if (shared_->owner != this) {
        shared_->enabled.reset();
        shared_->enabled = std::make_unique<Enabled>(context_);
        shared_->owner = this;
        blank_counter_data_.clear(); // initialised for the profiler object just disabled
        if (enabled) *enabled = true;
    }
    return *shared_->enabled;
}

std::vector<std::uint8_t> RangeProfiler::configure(Enabled& profiler, std::size_t ranges)
{
    // CUPTI wants an image sized and initialised for every SetConfig; the initialised image is
    // the same each time, so it is made once per number of ranges and copied.
    auto& blank = blank_counter_data_[ranges];
    if (blank.empty()) {
        auto size = cupti_params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
            CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
        size.pRangeProfilerObject = profiler.get();
        size.pMetricNames = metric_names_.data();
        size.numMetrics = metric_names_.size();
        size.maxNumOfRanges = ranges;
        size.maxNumRangeTreeNodes = static_cast<std::uint32_t>(ranges);
        CUPTI_CHECK(cuptiRangeProfilerGetCounterDataSize(&size));
        std::vector<std::uint8_t> image(size.counterDataSize);
        auto init = cupti_params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
            CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
        init.pRangeProfilerObject = profiler.get();
        init.counterDataSize = image.size();
        init.pCounterData = image.data();
        CUPTI_CHECK(cuptiRangeProfilerCounterDataImageInitialize(&init));
        blank = std::move(image);
    }
    std::vector<std::uint8_t> counter_data = blank;

    auto config = cupti_params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
    config.pRangeProfilerObject = profiler.get();
    config.configSize = config_image_.size();
    config.pConfig = config_image_.data();
    config.counterDataImageSize = counter_data.size();
    config.pCounterDataImage = counter_data.data();
    config.range = mode_ == RangeMode::per_kernel ? CUPTI_AutoRange : CUPTI_UserRange;
    config.replayMode = CUPTI_UserReplay;
    // CUPTI keeps fewer ranges in a pass than asked for unless the count is a power of two:
    // measured on an H200 (CUDA 13.0, driver 580), a pass of 3 user ranges came back with 2, for
    // any kernels, while 1, 2 and 4 came back whole, and 3 did with room for 11.
    config.maxRangesPerPass = std::bit_ceil(ranges);
    config.numNestingLevels = 1;
    config.minNestingLevel = 1;
    config.passIndex = 0;
    config.targetNestingLevel = 1;
    CUPTI_CHECK(cuptiRangeProfilerSetConfig(&config));
    return counter_data;
}

std::size_t RangeProfiler::decode(Enabled& profiler, const std::vector<std::uint8_t>& counter_data)
{
    auto decode =
        cupti_params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
    decode.pRangeProfilerObject = profiler.get();
    CUPTI_CHECK(cuptiRangeProfilerDecodeData(&decode));
    if (decode.numOfRangeDropped > 0)
        throw Error(ErrorKind::internal, fmt::format("CUPTI dropped {} profiling range(s)", decode.numOfRangeDropped));

    auto info = cupti_params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
        CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
    info.pCounterDataImage = counter_data.data();
    info.counterDataImageSize = counter_data.size();
    CUPTI_CHECK(cuptiRangeProfilerGetCounterDataInfo(&info));
    return info.numTotalRanges;
}

std::vector<double> RangeProfiler::evaluate(const std::vector<std::uint8_t>& counter_data, std::size_t range)
{
    std::vector<double> values(metric_names_.size());
    auto eval = cupti_params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
        CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
    eval.pHostObject = host_->object;
    eval.pCounterDataImage = counter_data.data();
    eval.counterDataImageSize = counter_data.size();
    eval.rangeIndex = range;
    eval.ppMetricNames = metric_names_.data();
    eval.numMetrics = metric_names_.size();
    eval.pMetricValues = values.data();
    CUPTI_CHECK(cuptiProfilerHostEvaluateToGpuValues(&eval));
    return values;
}

namespace {

/// Runs `launch` inside a user range of its own, named for the launch's index in the measurement:
/// ranges of the same name are accumulated into one.
void in_range(CUpti_RangeProfiler_Object* profiler, std::size_t index, const std::function<void()>& launch)
{
    const std::string name = fmt::format("launch {}", index);
    auto push = cupti_params<CUpti_RangeProfiler_PushRange_Params>(CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE);
    push.pRangeProfilerObject = profiler;
    push.pRangeName = name.c_str();
    CUPTI_CHECK(cuptiRangeProfilerPushRange(&push));
    launch();
    auto pop = cupti_params<CUpti_RangeProfiler_PopRange_Params>(CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
    pop.pRangeProfilerObject = profiler;
    CUPTI_CHECK(cuptiRangeProfilerPopRange(&pop));
}

void start_pass(CUpti_RangeProfiler_Object* profiler)
{
    auto start = cupti_params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
    start.pRangeProfilerObject = profiler;
    CUPTI_CHECK(cuptiRangeProfilerStart(&start));
}

/// What ends a pass (cuptiRangeProfilerStop), which says whether CUPTI has every pass it needs.
CUpti_RangeProfiler_Stop_Params stop_params(CUpti_RangeProfiler_Object* profiler)
{
    auto stop = cupti_params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    stop.pRangeProfilerObject = profiler;
    return stop;
}

} // namespace

std::size_t RangeProfiler::run_passes(Enabled& profiler, const std::function<void()>& prepare,
                                      const std::vector<std::function<void()>>& launches,
                                      const std::function<void(std::size_t)>& between, std::size_t first,
                                      std::size_t count, const std::vector<std::uint8_t>& counter_data, RangeTimings& t)
{
    // Prepare runs after Start, outside the range: Start itself leaves dirty lines in the L2 (about
    // 11.6 MB on an H100), which a kernel evicting them would otherwise count as its own DRAM
    // writes. Kernel replay is not used: CUPTI's restore of memory between its passes leaves the
    // L2 warm and dirty for every pass but the first, which shows in achieved occupancy and DRAM.
    // The launches before `first` run outside any range, so that the measured ones see the
    // buffers they would see in the case.
    bool all_submitted = false;
    for (std::size_t pass = 0; pass < passes_ && !all_submitted; ++pass) {
        auto mark = std::chrono::steady_clock::now();
        start_pass(profiler.get());
        t.setup += seconds_since(mark);
        auto stop = stop_params(profiler.get());
        try {
            prepare();
            const auto before = [&](std::size_t i) {
                if (i > 0 && between) between(i);
            };
            for (std::size_t i = 0; i < first; ++i) {
                before(i);
                launches[i]();
            }
            for (std::size_t i = first; i < first + count; ++i) {
                before(i);
                mark = std::chrono::steady_clock::now();
                in_range(profiler.get(), i, launches[i]);
                t.launches += seconds_since(mark);
            }
        } catch (...) {
            cuptiRangeProfilerStop(&stop);
            throw;
        }
        mark = std::chrono::steady_clock::now();
        CUPTI_CHECK(cuptiRangeProfilerStop(&stop));
        t.teardown += seconds_since(mark);
        all_submitted = stop.isAllPassSubmitted != 0;
    }
    if (!all_submitted)
        throw Error(ErrorKind::internal, fmt::format("CUPTI did not submit every pass in {} replay pass(es)", passes_));
    const auto mark = std::chrono::steady_clock::now();
    const std::size_t recorded = decode(profiler, counter_data);
    t.teardown += seconds_since(mark);
    return recorded;
}

std::vector<std::vector<double>> RangeProfiler::measure(const std::function<void()>& prepare,
                                                        const std::vector<std::function<void()>>& launches,
                                                        RangeTimings* timings,
                                                        const std::function<void(std::size_t)>& between)
{
    const std::size_t ranges = launches.size();
    if (ranges == 0) throw Error(ErrorKind::internal, "the range profiler was given a case with no launch");
    if (mode_ != RangeMode::per_launch)
        throw Error(ErrorKind::internal, "measure() needs a range profiler with a range per launch");
    RangeTimings t;
    auto mark = std::chrono::steady_clock::now();
    Enabled& profiler = acquire(&t.enabled);
    std::vector<std::uint8_t> counter_data = configure(profiler, ranges);
    t.setup = seconds_since(mark);

    std::vector<std::vector<double>> rows;
    if (run_passes(profiler, prepare, launches, between, 0, ranges, counter_data, t) == ranges) {
        mark = std::chrono::steady_clock::now();
        for (std::size_t i = 0; i < ranges; ++i) rows.push_back(evaluate(counter_data, i));
        t.teardown += seconds_since(mark);
    } else {
        // A pass that came back short is measured again one launch at a time, each in a pass of
        // one range after the launches before it: slower, never a failed case.
        ++t.remeasured;
        for (std::size_t i = 0; i < ranges; ++i) {
            mark = std::chrono::steady_clock::now();
            counter_data = configure(profiler, 1);
            t.setup += seconds_since(mark);
            const std::size_t recorded = run_passes(profiler, prepare, launches, between, i, 1, counter_data, t);
            if (recorded != 1)
                throw Error(ErrorKind::internal,
                            fmt::format("the range profiler recorded {} ranges for launch {} of {}, measured alone",
                                        recorded, i + 1, ranges));
            mark = std::chrono::steady_clock::now();
            rows.push_back(evaluate(counter_data, 0));
            t.teardown += seconds_since(mark);
        }
    }
    if (timings) *timings = t;
    return rows;
}

std::optional<std::vector<std::vector<std::vector<double>>>>
RangeProfiler::measure_batch(const std::vector<BatchCase>& cases, RangeTimings* timings)
{
    std::size_t ranges = 0;
    for (const auto& c : cases) {
        if (c.launches == 0) throw Error(ErrorKind::internal, "the range profiler was given a case with no launch");
        ranges += c.launches;
    }
    if (mode_ != RangeMode::per_launch || passes_ != 1)
        throw Error(ErrorKind::internal, "measure_batch() needs a one-pass range profiler with a range per launch");
    if (cases.empty()) return {};
    RangeTimings t;
    auto mark = std::chrono::steady_clock::now();
    Enabled& profiler = acquire(&t.enabled);
    const std::vector<std::uint8_t> counter_data = configure(profiler, ranges);
    start_pass(profiler.get());
    t.setup = seconds_since(mark);
    auto stop = stop_params(profiler.get());
    // As in measure(), each case's prepare runs after Start and outside any range; its buffers are
    // freed before the next case's are made.
    try {
        std::size_t index = 0;
        for (const auto& c : cases) {
            c.prepare();
            mark = std::chrono::steady_clock::now();
            for (std::size_t i = 0; i < c.launches; ++i) {
                if (i > 0 && c.between) c.between(i);
                in_range(profiler.get(), index++, [&] { c.launch(i); });
            }
            t.launches += seconds_since(mark);
            c.done();
        }
    } catch (...) {
        cuptiRangeProfilerStop(&stop);
        throw;
    }
    mark = std::chrono::steady_clock::now();
    CUPTI_CHECK(cuptiRangeProfilerStop(&stop));
    if (!stop.isAllPassSubmitted)
        throw Error(ErrorKind::internal, "CUPTI wants more than one pass for a batch of cases");
    const std::size_t recorded = decode(profiler, counter_data);
    if (recorded != ranges) {
        t.teardown = seconds_since(mark);
        if (timings) *timings = t;
        return std::nullopt;
    }
    std::vector<std::vector<std::vector<double>>> rows(cases.size());
    std::size_t range = 0;
    for (std::size_t k = 0; k < cases.size(); ++k)
        for (std::size_t i = 0; i < cases[k].launches; ++i) rows[k].push_back(evaluate(counter_data, range++));
    t.teardown = seconds_since(mark);
    if (timings) *timings = t;
    return rows;
}

std::vector<KernelValues> RangeProfiler::measure_kernels(const std::function<void()>& body, std::size_t max_kernels,
                                                         RangeTimings* timings)
{
    if (mode_ != RangeMode::per_kernel || passes_ != 1)
        throw Error(ErrorKind::internal, "measure_kernels() needs a one-pass range profiler with a range per kernel");
    RangeTimings t;
    auto mark = std::chrono::steady_clock::now();
    Enabled& profiler = acquire(&t.enabled);
    const std::vector<std::uint8_t> counter_data = configure(profiler, std::max<std::size_t>(max_kernels, 1));
    start_pass(profiler.get());
    t.setup = seconds_since(mark);
    auto stop = stop_params(profiler.get());
    mark = std::chrono::steady_clock::now();
    try {
        body();
    } catch (...) {
        cuptiRangeProfilerStop(&stop);
        throw;
    }
    t.launches = seconds_since(mark);
    mark = std::chrono::steady_clock::now();
    CUPTI_CHECK(cuptiRangeProfilerStop(&stop));
    if (!stop.isAllPassSubmitted)
        throw Error(ErrorKind::internal, "CUPTI wants more than one pass for kernel durations");
    const std::size_t recorded = decode(profiler, counter_data);
    std::vector<KernelValues> kernels;
    for (std::size_t i = 0; i < recorded; ++i) {
        KernelValues k;
        auto info = cupti_params<CUpti_RangeProfiler_CounterData_GetRangeInfo_Params>(
            CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE);
        info.pCounterDataImage = counter_data.data();
        info.counterDataImageSize = counter_data.size();
        info.rangeIndex = i;
        info.rangeDelimiter = "/";
        if (cuptiRangeProfilerCounterDataGetRangeInfo(&info) == CUPTI_SUCCESS && info.rangeName)
            k.name = info.rangeName;
        k.values = evaluate(counter_data, i);
        kernels.push_back(std::move(k));
    }
    t.teardown = seconds_since(mark);
    if (timings) *timings = t;
    return kernels;
}

} // namespace harness::profile
