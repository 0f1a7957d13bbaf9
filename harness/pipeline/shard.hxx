#pragma once
// Sharding a suite between CI jobs (`harness run --shard i/N`): the sweep points are split by
// expected cost, so that the jobs finish at about the same time, and `harness merge` puts their
// results together as one run's.

#include "harness/core/run_report.hxx"
#include "harness/run/run_settings.hxx"
#include "harness/suite/suite.hxx"
#include "harness/suite/sweep.hxx"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace harness::pipeline {

/// Seconds a case costs beyond its kernel's own time: the worker, buffers, the reference's run
/// and the verification, the profiler's passes, and the timing budget that a short kernel fills
/// (a full GPU check took about 1.5 s per case, most of it this).
inline constexpr double case_overhead_s = 1.0;
/// Launches of a case's kernel in a GPU run (warm-up, timed samples, profiling passes,
/// verification): what its time median is multiplied by.
inline constexpr double launches_per_case = 100.0;

/// The kernel times the GPU models' baselines of a suite record: each case's time median (us),
/// the mean over the models' files that hold it, and the median of those as the typical one.
struct BaselineTimes {
    std::map<std::pair<std::string, std::string>, double> median_us; ///< by (variant, params text)
    double typical_us = 0;                                           ///< 0 when none is recorded
    /// The case's median, else the typical one.
    double of(const std::string& variant, const std::string& params_text) const
    {
        const auto it = median_us.find({variant, params_text});
        return it == median_us.end() ? typical_us : it->second;
    }
};
BaselineTimes baseline_times(const suite::Suite& suite, const std::filesystem::path& baseline_dir);

/// The expected seconds of each sweep point (by index into suite::sweep_points): the sum over its
/// cases of case_overhead_s + launches_per_case x the case's time median, the mean of those the
/// GPU models' baselines in `baseline_dir` record. A case with none counts the median of the
/// recorded ones (nothing when the suite has none, so that the split then balances case counts).
/// Reads only committed files: the same suite and baselines give the same costs on any machine.
std::vector<double> point_costs(const suite::Suite& suite, const std::filesystem::path& baseline_dir);

/// A suite's sweep points split into shards.
struct ShardSplit {
    std::size_t count = 0;
    std::vector<std::size_t> shard_of_point; ///< 1-based, by point index
    std::vector<double> point_costs;         ///< expected seconds, by point index
    std::string fingerprint;                 ///< of the points and their shards: equal splits, equal text
};

/// Splits the points of `suite` into `count` shards by expected cost (partition_by_cost in
/// core/partition.hxx): all variants at one point stay together, since the reference's output at a
/// point verifies the others there. Throws Error (bad input) for a count outside 1 to max_shards.
ShardSplit split_points(const suite::Suite& suite, const std::filesystem::path& baseline_dir, std::size_t count);

/// The cases of shard `index` (1-based), in the order of suite::expand_cases.
std::vector<suite::Case> shard_cases(const suite::Suite& suite, const ShardSplit& split, std::size_t index);

/// The cases a run of `s` covers: all of them, or the share `settings.shard` names, split by the
/// times in `settings.baseline_dir` (recorded in `shard`, and said on stderr).
std::vector<suite::Case> cases_to_run(const suite::Suite& s, const run::RunSettings& settings, ShardInfo& shard);

} // namespace harness::pipeline
