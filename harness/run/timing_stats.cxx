#include "harness/run/timing_stats.hxx"

#include "harness/core/metrics.hxx"
#include "harness/core/stats.hxx"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace harness::run {

TimingSummary summarize(const std::vector<double>& samples_us)
{
    TimingSummary s;
    s.samples = samples_us.size();
    if (samples_us.empty()) return s;
    std::vector<double> sorted = samples_us;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    s.median_us = median(sorted);
    s.min_us = sorted.front();
    s.mean_us = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(n);
    if (n > 1 && s.mean_us > 0) {
        double sq = 0;
        for (double x : sorted) sq += (x - s.mean_us) * (x - s.mean_us);
        s.relative_noise = std::sqrt(sq / static_cast<double>(n - 1)) / s.mean_us;
    }
    return s;
}

void set_time_figures(CaseResult& r, const TimingSummary& t)
{
    r.set_metric(metric::time_median, t.median_us);
    r.set_metric(metric::time_min, t.min_us);
    r.set_metric(metric::time_noise, t.relative_noise * 100.0);
    r.set_metric(metric::time_samples, static_cast<double>(t.samples));
}

bool enough_samples(const std::vector<double>& samples_us, double elapsed_s, const suite::TimingSpec& policy)
{
    constexpr std::size_t max_samples = 100000;
    if (samples_us.size() >= max_samples) return true;
    if (samples_us.size() < static_cast<std::size_t>(policy.min_samples)) return false;
    if (samples_us.size() >= static_cast<std::size_t>(policy.max_samples)) return true;
    if (elapsed_s >= policy.budget_s) return true;
    return summarize(samples_us).relative_noise < policy.max_noise;
}

std::size_t next_batch_size(std::size_t taken, double elapsed_s, const suite::TimingSpec& policy, std::size_t most)
{
    const double seconds_per_sample = elapsed_s / static_cast<double>(taken);
    const double left_s = policy.budget_s - elapsed_s;
    const auto wanted = static_cast<std::size_t>(std::max(policy.max_samples, 1));
    auto batch = static_cast<std::size_t>(
        std::clamp(seconds_per_sample > 0 ? left_s / seconds_per_sample : 1.0, 1.0, static_cast<double>(most)));
    if (taken < wanted) batch = std::min(batch, wanted - taken);
    return batch;
}

void TimeSamples::keep_only(const std::vector<bool>& keep)
{
    std::vector<double> kept;
    for (std::size_t i = 0; i < total.size(); ++i)
        if (keep[i]) kept.push_back(total[i]);
    for (auto& step : steps) {
        std::vector<double> kept_step;
        for (std::size_t i = 0; i < step.size() && i < keep.size(); ++i)
            if (keep[i]) kept_step.push_back(step[i]);
        step = std::move(kept_step);
    }
    total = std::move(kept);
}

} // namespace harness::run
