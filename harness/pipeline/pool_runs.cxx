#include "harness/pipeline/pool_runs.hxx"

#include "harness/compare/baseline_update.hxx"
#include "harness/core/error.hxx"
#include "harness/core/metrics.hxx"
#include "harness/core/stats.hxx"
#include "harness/pipeline/second_looks.hxx"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>

namespace harness::pipeline {

namespace {

std::string case_name(const CaseResult& c)
{
    return fmt::format("{} {}{}", c.variant, c.params_text, c.arch.empty() ? "" : " [" + c.arch + "]");
}

/// The first exact figure of `c` that another run gives otherwise, as a note; empty if none. Such
/// a figure that `suite` does not gate is dropped from `c` instead, with a note in `dropped`.
std::string exact_difference(CaseResult& c, const std::vector<const CaseResult*>& others,
                             const std::vector<std::string>& names, const suite::Suite* suite,
                             std::vector<std::string>& dropped)
{
    const suite::VariantSpec* variant = suite ? suite->find_variant(c.variant) : nullptr;
    for (auto m = c.metrics.begin(); m != c.metrics.end();) {
        const auto info = find_metric(m->name);
        std::optional<std::size_t> differs;
        for (std::size_t i = 0; info && info->stability == Stability::exact && i < others.size() && !differs; ++i)
            if (const auto theirs = others[i]->metric(m->name); !theirs || *theirs != m->value) differs = i;
        if (!differs) {
            ++m;
            continue;
        }
        const auto theirs = others[*differs]->metric(m->name);
        const std::string values = fmt::format("{} in {}, {} in {}", m->value, names[0],
                                               theirs ? fmt::format("{}", *theirs) : "none", names[*differs + 1]);
        if (!variant || suite->rule_for(*variant, m->name).kind != suite::RuleKind::ignore)
            return fmt::format("not recorded: {}: exact figure {} differs between runs ({}); its earlier baseline "
                               "rows are kept",
                               case_name(c), m->name, values);
        dropped.push_back(fmt::format("{}: exact figure {} differs between runs ({}); it is not gated, so it is left "
                                      "out of the baseline and the case is recorded",
                                      case_name(c), m->name, values));
        m = c.metrics.erase(m);
    }
    return {};
}

/// A noisy map's levels pooled over the runs: at each point the median of the runs' values, and a
/// noise that is the larger of the points' own and the spread between runs. A map from one
/// process holds one placement's levels, and a stretch of the axis can sit 1-2 % apart in
/// another process (one tread of row_staircase on an H100); the baseline's levels are what later
/// runs are compared with, so they are the runs' middle, with that spread as their noise. The
/// first run's cliffs are kept (they carry the launch model's explanations). A map some run lacks,
/// or a point some run lacks, keeps the first run's.
void pool_cliff_levels(std::vector<CliffMap>& maps, const std::vector<harness::RunReport>& runs)
{
    for (auto& map : maps) {
        if (map.noise.empty()) continue;
        std::vector<const CliffMap*> same;
        for (std::size_t r = 1; r < runs.size(); ++r)
            for (const auto& other : runs[r].cliff_maps)
                if (other.variant == map.variant && other.axis == map.axis && other.others == map.others &&
                    other.figure == map.figure && other.arch == map.arch && !other.noise.empty())
                    same.push_back(&other);
        if (same.size() + 1 != runs.size()) continue;
        for (std::size_t i = 0; i < map.x.size(); ++i) {
            std::vector<double> values{map.values[i]};
            double noise = map.noise[i];
            for (const CliffMap* other : same) {
                const auto at = std::find(other->x.begin(), other->x.end(), map.x[i]);
                if (at == other->x.end()) break;
                const auto k = static_cast<std::size_t>(at - other->x.begin());
                values.push_back(other->values[k]);
                noise = std::max(noise, other->noise[k]);
            }
            if (values.size() != runs.size()) continue;
            const double middle = median(values);
            double squares = 0;
            for (const double v : values) squares += (v - middle) * (v - middle);
            const double spread = std::sqrt(squares / static_cast<double>(values.size() - 1));
            map.values[i] = middle;
            map.noise[i] = std::max(noise, spread);
        }
    }
}

} // namespace

PooledRuns pool_runs(const std::vector<harness::RunReport>& runs, const std::vector<std::string>& names,
                     const suite::Suite* suite)
{
    if (runs.empty()) throw Error(ErrorKind::internal, "pool_runs was given no run");
    if (names.size() != runs.size()) throw Error(ErrorKind::internal, "pool_runs needs a name for each run");
    const auto& first = runs.front();
    for (std::size_t i = 1; i < runs.size(); ++i) {
        const auto& run = runs[i];
        const auto differ = [&](const char* what, const std::string& mine, const std::string& theirs) {
            if (mine != theirs)
                throw Error(ErrorKind::bad_input,
                            fmt::format("{} and {} are not runs of the same {}: '{}' and '{}'", names[0], names[i],
                                        what, mine.substr(0, 100), theirs.substr(0, 100)));
        };
        differ("suite", first.suite, run.suite);
        differ("mode", mode_name(first.mode), mode_name(run.mode));
        differ("GPU model", first.device_name, run.device_name);
    }

    PooledRuns out;
    out.report = first;
    out.report.results.clear();
    for (const auto& c : first.results) {
        std::vector<const CaseResult*> others;
        const CaseResult* failed = c.status == CaseStatus::passed ? nullptr : &c;
        std::string absent_from;
        for (std::size_t i = 1; i < runs.size(); ++i) {
            const CaseResult* o = find_case(runs[i], c);
            if (!o) {
                absent_from = names[i];
                break;
            }
            if (!failed && o->status != CaseStatus::passed) failed = o;
            others.push_back(o);
        }
        if (!absent_from.empty()) {
            out.notes.push_back(fmt::format("not recorded: {}: absent from {}; its earlier baseline rows are kept",
                                            case_name(c), absent_from));
            continue;
        }
        if (failed) {
            out.report.results.push_back(*failed);
            continue;
        }
        CaseResult pooled = c;
        if (auto note = exact_difference(pooled, others, names, suite, out.notes); !note.empty()) {
            out.notes.push_back(std::move(note));
            continue;
        }
        if (!pooled.time_samples_us.empty()) {
            // Each process one draw of where buffers land: as many samples from each (quantiles of
            // its own), so that a noisy process that took more samples does not outweigh the others.
            std::size_t fewest = pooled.time_samples_us.size();
            for (const auto* o : others) fewest = std::min(fewest, o->time_samples_us.size());
            pooled.time_samples_us = compare::baseline_samples(pooled.time_samples_us, fewest);
            std::vector<double> more;
            for (const auto* o : others) {
                const auto share = compare::baseline_samples(o->time_samples_us, fewest);
                more.insert(more.end(), share.begin(), share.end());
            }
            add_time_samples(pooled, more);
        }
        out.report.results.push_back(std::move(pooled));
    }
    if (runs.size() > 1) {
        pool_cliff_levels(out.report.cliff_maps, runs);
        out.notes.push_back(fmt::format("time samples pooled from {} runs: {}", runs.size(), fmt::join(names, ", ")));
    }
    return out;
}

} // namespace harness::pipeline
