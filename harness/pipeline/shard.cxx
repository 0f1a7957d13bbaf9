#include "harness/pipeline/shard.hxx"

#include "harness/compare/baseline_file.hxx"
#include "harness/core/error.hxx"
#include "harness/core/file_transaction.hxx"
#include "harness/core/metrics.hxx"
#include "harness/core/partition.hxx"
#include "harness/core/run_report.hxx"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fmt/format.h>
#include <map>
#include <xxhash.h>

namespace harness::pipeline {

namespace fs = std::filesystem;

namespace {

/// The noisy baseline files of a suite (one per GPU model; the others are named for an
/// architecture), by name, so that their figures are summed in the same order everywhere.
std::vector<fs::path> gpu_model_baselines(const fs::path& suite_dir)
{
    std::vector<fs::path> files;
    std::error_code ec;
    if (!fs::is_directory(suite_dir, ec)) return files;
    for (const auto& entry : fs::directory_iterator(suite_dir, ec))
        if (compare::is_gpu_model_baseline(entry.path())) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    return files;
}

} // namespace

BaselineTimes baseline_times(const suite::Suite& suite, const fs::path& baseline_dir)
{
    std::vector<compare::BaselineFile> files;
    {
        // Under one shared lock: an update lands before the reads or after them, never between.
        const FolderReadLock lock(baseline_dir / suite.name);
        if (lock.found())
            for (const auto& path : gpu_model_baselines(baseline_dir / suite.name))
                files.push_back(compare::read_baseline(path));
    }
    BaselineTimes times;
    std::vector<double> recorded;
    for (const auto& c : suite::expand_cases(suite)) {
        const std::string& variant = suite.variants[c.variant].name;
        double sum = 0;
        int n = 0;
        for (const auto& file : files)
            if (const auto* row = file.find(variant, c.params_text, metric::time_median);
                row && std::isfinite(row->value) && row->value >= 0) {
                sum += row->value;
                ++n;
            }
        if (n > 0) {
            times.median_us[{variant, c.params_text}] = sum / n;
            recorded.push_back(sum / n);
        }
    }
    if (!recorded.empty()) {
        std::sort(recorded.begin(), recorded.end());
        times.typical_us = recorded[recorded.size() / 2];
    }
    return times;
}

std::vector<double> point_costs(const suite::Suite& suite, const fs::path& baseline_dir)
{
    const BaselineTimes times = baseline_times(suite, baseline_dir);
    std::vector<double> costs(suite::sweep_points(suite).size(), 0.0);
    for (const auto& c : suite::expand_cases(suite))
        costs[c.point] +=
            case_overhead_s + launches_per_case * times.of(suite.variants[c.variant].name, c.params_text) * 1e-6;
    return costs;
}

ShardSplit split_points(const suite::Suite& suite, const fs::path& baseline_dir, std::size_t count)
{
    if (count < 1 || count > max_shards)
        throw Error(ErrorKind::bad_input, fmt::format("{} shards: a suite splits into 1 to {}", count, max_shards));
    ShardSplit split;
    split.count = count;
    split.point_costs = point_costs(suite, baseline_dir);
    const auto bins = partition_by_cost(split.point_costs, count);
    std::string identity = std::to_string(count);
    const auto points = suite::sweep_points(suite);
    for (std::size_t p = 0; p < bins.size(); ++p) {
        split.shard_of_point.push_back(bins[p] + 1);
        identity += fmt::format("\n{} {}", suite::params_text(suite, points[p]), bins[p] + 1);
    }
    split.fingerprint = fmt::format("{:016x}", XXH3_64bits(identity.data(), identity.size()));
    return split;
}

std::vector<suite::Case> shard_cases(const suite::Suite& suite, const ShardSplit& split, std::size_t index)
{
    std::vector<suite::Case> cases;
    for (auto& c : suite::expand_cases(suite))
        if (split.shard_of_point.at(c.point) == index) cases.push_back(std::move(c));
    return cases;
}

std::vector<suite::Case> cases_to_run(const suite::Suite& s, const run::RunSettings& settings, ShardInfo& shard)
{
    if (!settings.shard) return suite::expand_cases(s);
    const run::ShardRequest& request = *settings.shard;
    if (request.index < 1 || request.index > request.count)
        throw Error(ErrorKind::bad_input, fmt::format("--shard {}/{}: the index must lie between 1 and the count",
                                                      request.index, request.count));
    const ShardSplit split = split_points(s, settings.baseline_dir, request.count);
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

} // namespace harness::pipeline
