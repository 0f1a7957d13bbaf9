#include "harness/pipeline/pool_runs.hxx"

#include "harness/compare/baseline_update.hxx"
#include "harness/core/error.hxx"
#include "harness/core/metrics.hxx"
#include "harness/pipeline/run_suite.hxx"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace harness::pipeline {

namespace {

std::string case_name(const CaseResult& c)
{
    return fmt::format("{} {}{}", c.variant, c.params_text, c.arch.empty() ? "" : " [" + c.arch + "]");
}

/// The first exact figure of `c` that another run gives otherwise, as a note; empty if none.
std::string exact_difference(const CaseResult& c, const std::vector<const CaseResult*>& others,
                             const std::vector<std::string>& names)
{
    for (const auto& m : c.metrics) {
        const auto info = find_metric(m.name);
        if (!info || info->stability != Stability::exact) continue;
        for (std::size_t i = 0; i < others.size(); ++i) {
            const auto theirs = others[i]->metric(m.name);
            if (theirs && *theirs == m.value) continue;
            return fmt::format("not recorded: {}: exact figure {} differs between runs ({} in {}, {} in {}); its "
                               "earlier baseline rows are kept",
                               case_name(c), m.name, m.value, names[0], theirs ? fmt::format("{}", *theirs) : "none",
                               names[i + 1]);
        }
    }
    return {};
}

} // namespace

PooledRuns pool_runs(const std::vector<harness::RunReport>& runs, const std::vector<std::string>& names)
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
        if (auto note = exact_difference(c, others, names); !note.empty()) {
            out.notes.push_back(std::move(note));
            continue;
        }
        CaseResult pooled = c;
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
    if (runs.size() > 1)
        out.notes.push_back(fmt::format("time samples pooled from {} runs: {}", runs.size(), fmt::join(names, ", ")));
    return out;
}

} // namespace harness::pipeline
