#include "harness/profile/sass_profiler.hxx"

#include "harness/core/stopwatch.hxx"
#include "harness/profile/cupti_error.hxx"
#include "harness/profile/range_profiler.hxx"

#include <chrono>
#include <cupti_sass_metrics.h>
#include <fmt/format.h>
#include <map>
#include <memory>

namespace harness::profile {

namespace {

/// SASS metric collection enabled on a context, disabled on every path out.
class EnabledSassMetrics {
public:
    explicit EnabledSassMetrics(CUcontext context) : context_(context)
    {
        auto p = cupti_params<CUpti_SassMetricsEnable_Params>(CUpti_SassMetricsEnable_Params_STRUCT_SIZE);
        p.ctx = context_;
        p.enableLazyPatching = 1; // patch a function when it first runs, not every function of every module
        CUPTI_CHECK(cuptiSassMetricsEnable(&p));
    }
    ~EnabledSassMetrics()
    {
        auto p = cupti_params<CUpti_SassMetricsDisable_Params>(CUpti_SassMetricsDisable_Params_STRUCT_SIZE);
        p.ctx = context_;
        cuptiSassMetricsDisable(&p);
    }
    EnabledSassMetrics(const EnabledSassMetrics&) = delete;
    EnabledSassMetrics& operator=(const EnabledSassMetrics&) = delete;

private:
    CUcontext context_;
};

} // namespace

SassProfiler::SassProfiler(CUcontext context, int device_ordinal, std::vector<std::string> metrics)
    : context_(context), device_ordinal_(device_ordinal), metrics_(std::move(metrics))
{
    initialize_profiler();
    const std::string chip = chip_name(device_ordinal);
    std::vector<CUpti_SassMetrics_Config> configs;
    for (const auto& name : metrics_) {
        auto p =
            cupti_params<CUpti_SassMetrics_GetProperties_Params>(CUpti_SassMetrics_GetProperties_Params_STRUCT_SIZE);
        p.pChipName = chip.c_str();
        p.pMetricName = name.c_str();
        CUPTI_CHECK(cuptiSassMetricsGetProperties(&p));
        metric_ids_.push_back(p.metric.metricId);
        // Per-SM or per-SMSP output halves the instrumented run's time, but on an H100 (CUDA 13.0,
        // driver 580) its summed instances did not equal the GPU-wide figures: exact figures come first.
        configs.push_back({p.metric.metricId, CUPTI_SASS_METRICS_OUTPUT_GRANULARITY_GPU});
    }
    auto set = cupti_params<CUpti_SassMetricsSetConfig_Params>(CUpti_SassMetricsSetConfig_Params_STRUCT_SIZE);
    set.numOfMetricConfig = configs.size();
    set.pConfigs = configs.data();
    set.deviceIndex = static_cast<std::uint32_t>(device_ordinal_);
    CUPTI_CHECK(cuptiSassMetricsSetConfig(&set));
}

SassProfiler::~SassProfiler()
{
    auto p = cupti_params<CUpti_SassMetricsUnsetConfig_Params>(CUpti_SassMetricsUnsetConfig_Params_STRUCT_SIZE);
    p.deviceIndex = static_cast<std::uint32_t>(device_ordinal_);
    cuptiSassMetricsUnsetConfig(&p);
}

std::vector<SassRecord> SassProfiler::measure(const std::function<void()>& prepare, const std::function<void()>& launch,
                                              SassTimings* timings)
{
    SassTimings t;
    prepare();
    auto mark = std::chrono::steady_clock::now();
    auto enabled = std::make_unique<EnabledSassMetrics>(context_);
    t.setup = seconds_since(mark);
    mark = std::chrono::steady_clock::now();
    launch();
    t.run = seconds_since(mark);
    mark = std::chrono::steady_clock::now();
    const auto finish = [&] {
        enabled.reset();
        t.teardown = seconds_since(mark);
        if (timings) *timings = t;
    };

    auto props =
        cupti_params<CUpti_SassMetricsGetDataProperties_Params>(CUpti_SassMetricsGetDataProperties_Params_STRUCT_SIZE);
    props.ctx = context_;
    CUPTI_CHECK(cuptiSassMetricsGetDataProperties(&props));
    const std::size_t records = props.numOfPatchedInstructionRecords;
    const std::size_t instances = props.numOfInstances;
    if (records == 0) {
        finish();
        return {};
    }

    // Room for every metric's instances in each record; unused slots stay zero and add nothing.
    const std::size_t slots = std::max<std::size_t>(instances, 1) * metrics_.size();
    std::vector<CUpti_SassMetrics_InstanceValue> values(records * slots, CUpti_SassMetrics_InstanceValue{});
    std::vector<CUpti_SassMetrics_Data> data(records, CUpti_SassMetrics_Data{});
    for (std::size_t i = 0; i < records; ++i) {
        data[i].structSize = sizeof(CUpti_SassMetrics_Data);
        data[i].pInstanceValues = values.data() + i * slots;
    }
    auto flush = cupti_params<CUpti_SassMetricsFlushData_Params>(CUpti_SassMetricsFlushData_Params_STRUCT_SIZE);
    flush.ctx = context_;
    flush.numOfPatchedInstructionRecords = records;
    flush.numOfInstances = instances;
    flush.pMetricsData = data.data();
    CUPTI_CHECK(cuptiSassMetricsFlushData(&flush));

    std::map<std::uint64_t, std::size_t> column;
    for (std::size_t m = 0; m < metric_ids_.size(); ++m) column[metric_ids_[m]] = m;
    // One record per (function, PC); merge duplicates so callers see each instruction once.
    std::map<std::pair<std::string, std::uint32_t>, SassRecord> by_pc;
    for (std::size_t i = 0; i < records; ++i) {
        const auto& d = data[i];
        const std::string function = d.functionName ? d.functionName : "";
        auto& rec = by_pc[{function, d.pcOffset}];
        if (rec.values.empty()) {
            rec.function = function;
            rec.pc_offset = d.pcOffset;
            rec.values.assign(metrics_.size(), 0);
        }
        for (std::size_t k = 0; k < slots; ++k) {
            const auto& v = d.pInstanceValues[k];
            if (auto it = column.find(v.metricId); it != column.end()) rec.values[it->second] += v.value;
        }
    }
    std::vector<SassRecord> out;
    out.reserve(by_pc.size());
    for (auto& [key, rec] : by_pc) out.push_back(std::move(rec));
    finish();
    return out;
}

} // namespace harness::profile
