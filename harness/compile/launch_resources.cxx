#include "harness/compile/launch_resources.hxx"

#include "harness/core/metrics.hxx"

#include <algorithm>

namespace harness::compile {

namespace {

void keep_max(std::optional<int>& total, const std::optional<int>& value, bool first)
{
    if (first)
        total = value;
    else if (total && value)
        total = std::max(*total, *value);
    else
        total.reset();
}

} // namespace

void ResourceTotals::add(const LaunchResources& launch, const std::string& label)
{
    if (!label.empty()) labelled_.emplace_back(label, launch);
    const bool first = !least_;
    max_.registers = std::max(max_.registers, launch.registers);
    max_.static_shared_bytes = std::max(max_.static_shared_bytes, launch.static_shared_bytes);
    max_.dynamic_shared_bytes = std::max(max_.dynamic_shared_bytes, launch.dynamic_shared_bytes);
    max_.local_bytes = std::max(max_.local_bytes, launch.local_bytes);
    keep_max(max_.barriers, launch.barriers, first);
    keep_max(max_.spill_store_bytes, launch.spill_store_bytes, first);
    keep_max(max_.spill_load_bytes, launch.spill_load_bytes, first);
    if (first || launch.occupancy < least_->occupancy) least_ = launch;
}

namespace {

/// Sets the figures of `resources`, each named by `name(metric)`.
template <typename Name> void set_resources(CaseResult& r, const LaunchResources& resources, Name name)
{
    r.set_metric(name(metric::registers), resources.registers);
    if (resources.spill_store_bytes) r.set_metric(name(metric::spill_store_bytes), *resources.spill_store_bytes);
    if (resources.spill_load_bytes) r.set_metric(name(metric::spill_load_bytes), *resources.spill_load_bytes);
    r.set_metric(name(metric::static_shared_bytes), resources.static_shared_bytes);
    r.set_metric(name(metric::dynamic_shared_bytes), resources.dynamic_shared_bytes);
    r.set_metric(name(metric::local_bytes), resources.local_bytes);
    if (resources.barriers) r.set_metric(name(metric::barriers), *resources.barriers);
    r.set_metric(name(metric::blocks_per_sm), resources.blocks_per_sm);
    r.set_metric(name(metric::theoretical_occupancy), resources.occupancy);
}

} // namespace

void ResourceTotals::write(CaseResult& r) const
{
    if (!least_) return;
    LaunchResources totals = max_;
    totals.blocks_per_sm = least_->blocks_per_sm;
    totals.occupancy = least_->occupancy;
    set_resources(r, totals, [](const char* m) { return std::string(m); });
    if (least_->limiter) r.occupancy_limiter = least_->limiter;
    for (const auto& [label, launch] : labelled_) {
        set_resources(r, launch, [&](const char* m) { return launch_metric_name(m, label); });
        for (auto& l : r.launches)
            if (l.label == label) l.occupancy_limiter = launch.limiter;
    }
}

} // namespace harness::compile
