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

void ResourceTotals::add(const LaunchResources& launch)
{
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

void ResourceTotals::write(CaseResult& r) const
{
    if (!least_) return;
    r.set_metric(metric::registers, max_.registers);
    if (max_.spill_store_bytes) r.set_metric(metric::spill_store_bytes, *max_.spill_store_bytes);
    if (max_.spill_load_bytes) r.set_metric(metric::spill_load_bytes, *max_.spill_load_bytes);
    r.set_metric(metric::static_shared_bytes, max_.static_shared_bytes);
    r.set_metric(metric::dynamic_shared_bytes, max_.dynamic_shared_bytes);
    r.set_metric(metric::local_bytes, max_.local_bytes);
    if (max_.barriers) r.set_metric(metric::barriers, *max_.barriers);
    r.set_metric(metric::blocks_per_sm, least_->blocks_per_sm);
    r.set_metric(metric::theoretical_occupancy, least_->occupancy);
    if (!least_->limiter.empty()) r.occupancy_limiter = least_->limiter;
}

} // namespace harness::compile
