#include "harness/report/merge.hxx"

#include "harness/core/error.hxx"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <functional>
#include <map>
#include <set>
#include <tuple>

namespace harness::report {

namespace {

/// The architectures of a run: one, or a static run's list "sm_80,sm_90", in order.
std::vector<std::string> arch_list(const std::string& archs)
{
    std::vector<std::string> out;
    for (std::size_t p = 0, q; p <= archs.size(); p = q + 1) {
        q = std::min(archs.find(',', p), archs.size());
        if (q > p) out.push_back(archs.substr(p, q - p));
    }
    return out;
}

/// Checks that `reports` are shards of one split, each index once; returns the indices they hold.
std::set<std::size_t> check_shards(const std::vector<RunReport>& reports,
                                   const std::function<std::string(std::size_t)>& name)
{
    const ShardInfo& first = reports.front().shard;
    std::map<std::size_t, std::size_t> holder; // shard index -> report
    for (std::size_t i = 0; i < reports.size(); ++i) {
        const ShardInfo& s = reports[i].shard;
        if (!s.sharded() || !first.sharded())
            throw Error(ErrorKind::bad_input,
                        fmt::format("cannot merge {} ({}) with {} ({}): shards merge only with shards of the same run",
                                    name(0), first.sharded() ? "shard " + first.text() : "a whole run", name(i),
                                    s.sharded() ? "shard " + s.text() : "a whole run"));
        if (s.count != first.count)
            throw Error(ErrorKind::bad_input,
                        fmt::format("cannot merge {} (shard {}) with {} (shard {}): different shard counts", name(0),
                                    first.text(), name(i), s.text()));
        if (s.split != first.split)
            throw Error(
                ErrorKind::bad_input,
                fmt::format("cannot merge {} with {}: their suites' points were split differently (the suite or "
                            "its baselines changed between the shards' runs)",
                            name(0), name(i)));
        if (reports[i].arch != reports.front().arch)
            throw Error(ErrorKind::bad_input,
                        fmt::format("cannot merge {} (arch '{}') with {} (arch '{}'): shards of one run share their "
                                    "architectures",
                                    name(0), reports.front().arch, name(i), reports[i].arch));
        for (const std::size_t index : s.indices)
            if (auto [it, fresh] = holder.emplace(index, i); !fresh)
                throw Error(ErrorKind::bad_input,
                            fmt::format("shard {}/{} is in both {} and {}", index, s.count, name(it->second), name(i)));
    }
    std::set<std::size_t> held;
    for (const auto& [index, report] : holder) held.insert(index);
    return held;
}

} // namespace

RunReport merge_reports(const std::vector<RunReport>& reports, const std::vector<std::string>& names,
                        const MergeOptions& options)
{
    if (reports.empty()) throw Error(ErrorKind::bad_input, "nothing to merge");
    const auto name = [&](std::size_t i) { return i < names.size() ? names[i] : fmt::format("report {}", i + 1); };
    RunReport merged = reports.front();
    merged.results.clear();
    std::map<std::tuple<std::string, std::string, std::string>, std::size_t> seen; // case -> report index
    std::set<std::string> archs;
    for (std::size_t i = 0; i < reports.size(); ++i) {
        const RunReport& r = reports[i];
        const auto refuse = [&](const char* what, const std::string& a, const std::string& b) {
            throw Error(ErrorKind::bad_input, fmt::format("cannot merge {} ({} '{}') with {} ({} '{}'): results of one "
                                                          "suite on one kind of machine only",
                                                          name(0), what, a, name(i), what, b));
        };
        if (r.suite != merged.suite) refuse("suite", merged.suite, r.suite);
        if (r.mode != merged.mode) refuse("mode", mode_name(merged.mode), mode_name(r.mode));
        if (r.device_name != merged.device_name) refuse("GPU", merged.device_name, r.device_name);
        if (r.mode != RunMode::static_tier && r.arch != merged.arch) refuse("architecture", merged.arch, r.arch);
    }
    const bool sharded =
        std::any_of(reports.begin(), reports.end(), [](const RunReport& r) { return r.shard.sharded(); });
    if (sharded) {
        const std::set<std::size_t> held = check_shards(reports, name);
        std::vector<std::size_t> missing;
        for (std::size_t index = 1; index <= merged.shard.count; ++index)
            if (!held.contains(index)) missing.push_back(index);
        if (!missing.empty() && !options.allow_missing_shards)
            throw Error(ErrorKind::bad_input,
                        fmt::format("{} {} of {} {} missing from {}: give their results too, or --allow-missing to "
                                    "merge what is there",
                                    missing.size() == 1 ? "shard" : "shards", fmt::join(missing, ", "),
                                    merged.shard.count, missing.size() == 1 ? "is" : "are", fmt::join(names, ", ")));
        if (missing.empty())
            merged.shard = {}; // every shard: the whole run
        else
            merged.shard.indices.assign(held.begin(), held.end());
    }

    for (std::size_t i = 0; i < reports.size(); ++i) {
        const RunReport& r = reports[i];
        for (const auto& c : r.results) {
            const auto key = std::make_tuple(c.variant, c.params_text, c.arch);
            if (auto [it, fresh] = seen.emplace(key, i); !fresh)
                throw Error(ErrorKind::bad_input, fmt::format("{} {} ({}) is in both {} and {}", c.variant,
                                                              c.params_text, c.arch, name(it->second), name(i)));
            merged.results.push_back(c);
        }
        const auto add_new = [](std::vector<std::string>& to, const std::vector<std::string>& from) {
            for (const auto& item : from)
                if (std::find(to.begin(), to.end(), item) == to.end()) to.push_back(item);
        };
        add_new(merged.baseline_files, r.baseline_files);
        add_new(merged.notes, r.notes);
        add_new(merged.comparison_notes, r.comparison_notes);
        for (const auto& removed : r.removed)
            if (std::find(merged.removed.begin(), merged.removed.end(), removed) == merged.removed.end())
                merged.removed.push_back(removed);
        merged.timestamp = std::min(merged.timestamp, r.timestamp);
        merged.profiled = merged.profiled && r.profiled;
        merged.fail_on_improvement = merged.fail_on_improvement || r.fail_on_improvement;
        for (const auto& arch : arch_list(r.arch)) archs.insert(arch);
    }
    if (sharded) {
        // Each shard holds whole points, in one run's order: ordering the points (within each
        // architecture of a static run) restores that order across shards.
        const std::vector<std::string> order = arch_list(merged.arch);
        const auto arch_rank = [&](const std::string& arch) {
            return std::find(order.begin(), order.end(), arch) - order.begin();
        };
        std::stable_sort(merged.results.begin(), merged.results.end(), [&](const CaseResult& a, const CaseResult& b) {
            return std::make_pair(arch_rank(a.arch), a.point) < std::make_pair(arch_rank(b.arch), b.point);
        });
    } else if (merged.mode == RunMode::static_tier) {
        merged.arch = fmt::format("{}", fmt::join(archs, ","));
    }
    return merged;
}

} // namespace harness::report
