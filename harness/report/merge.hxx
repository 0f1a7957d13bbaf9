#pragma once
// Combining the results of several runs of one suite (shards, or a split between machines).

#include "harness/report/reporters.hxx"

#include <string>
#include <vector>

namespace harness::report {

/// How strictly shards must add up.
struct MergeOptions {
    bool allow_missing_shards = false; ///< merge what is there; the result records the shards it holds
};

/// One report holding every case of `reports`. Refuses (Error, bad input, naming the files)
/// reports of different suites, modes or GPUs, and a case that appears twice. Shards
/// (`harness run --shard i/N`) must all be shards of one split: the same count and split, other
/// architectures refused, no index twice, and none missing unless allowed; their cases are put
/// back in the order one run would have given them, and a complete set is recorded as a whole
/// run. `names` labels the reports in messages (their files).
RunReport merge_reports(const std::vector<RunReport>& reports, const std::vector<std::string>& names,
                        const MergeOptions& options = {});

} // namespace harness::report
