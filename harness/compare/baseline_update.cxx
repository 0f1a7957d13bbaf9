#include "harness/compare/baseline_update.hxx"

#include "harness/compare/access_baseline.hxx"
#include "harness/compare/baseline_file.hxx"
#include "harness/compare/cliff_baseline.hxx"
#include "harness/compare/sass_baseline.hxx"
#include "harness/core/arch_limits.hxx"
#include "harness/core/error.hxx"
#include "harness/core/file_transaction.hxx"
#include "harness/core/input_files.hxx"
#include "harness/core/metrics.hxx"
#include "harness/suite/sweep.hxx"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <set>
#include <tuple>

namespace harness::compare {

namespace {

using CaseKey = std::pair<std::string, std::string>; // variant, params

/// Where a figure's row goes among its case's: the variant's own figures in table order, then each
/// launch's (by label), in table order, so that every update writes the same rows in the same order.
std::pair<std::string, std::size_t> metric_order(const std::string& name)
{
    const auto [metric, label] = split_launch_metric(name);
    const auto table = metric_table();
    std::size_t i = 0;
    while (i < table.size() && table[i].name != metric) ++i;
    return {std::string(label), i};
}

} // namespace

/// Refuses results that do not belong to `suite` before anything is written: another suite's
/// name, a case the suite does not have, an architecture the harness does not know (it names a
/// file), or a case given twice for one architecture.
void check_results(const suite::Suite& suite, const harness::RunReport& report,
                   const std::map<CaseKey, std::size_t>& case_order)
{
    const std::string from = report.suite_file.empty() ? std::string("the results") : report.suite_file;
    if (report.suite != suite.name)
        throw Error(ErrorKind::bad_input,
                    fmt::format("the results are of suite '{}', not '{}' ({})", report.suite.substr(0, max_name_length),
                                suite.name, suite.file.string()));
    std::set<std::tuple<std::string, std::string, std::string>> seen;
    for (const auto& r : report.results) {
        const std::string what =
            fmt::format("case '{} {}'", r.variant.substr(0, max_name_length), r.params_text.substr(0, 200));
        if (!case_order.contains({r.variant, r.params_text}))
            throw Error(ErrorKind::bad_input, fmt::format("{} is not a case of suite '{}' ({}); nothing was recorded",
                                                          what, suite.name, suite.file.string()));
        if (r.status == CaseStatus::skipped) continue;
        if (r.status == CaseStatus::passed && (!find_arch_limits(r.arch) || !name_problem(r.arch).empty()))
            throw Error(ErrorKind::bad_input,
                        fmt::format("{} has architecture '{}', which is not one the harness knows; nothing was "
                                    "recorded",
                                    what, r.arch.substr(0, 40)));
        if (!seen.emplace(r.variant, r.params_text, r.arch).second)
            throw Error(ErrorKind::bad_input,
                        fmt::format("{} appears twice for {} in {}; nothing was recorded", what, r.arch, from));
    }
}

std::vector<double> baseline_samples(std::vector<double> samples, std::size_t most)
{
    std::sort(samples.begin(), samples.end());
    if (samples.size() <= most) return samples;
    // Evenly spaced quantiles (linear interpolation between order statistics): the same shape in
    // a bounded number of values, so a long timing budget does not grow the file.
    std::vector<double> out(most);
    const double last = static_cast<double>(samples.size() - 1);
    for (std::size_t k = 0; k < most; ++k) {
        const double at = last * (static_cast<double>(k) + 0.5) / static_cast<double>(most);
        const auto below = static_cast<std::size_t>(at);
        const double frac = at - static_cast<double>(below);
        const double next = samples[std::min(below + 1, samples.size() - 1)];
        out[k] = samples[below] + frac * (next - samples[below]);
    }
    return out;
}

BaselineUpdate update_baselines(const suite::Suite& suite, const harness::RunReport& report,
                                const std::filesystem::path& dir, const TransactionStep& before_step)
{
    BaselineUpdate out;
    std::map<CaseKey, std::size_t> case_order;
    for (const auto& c : suite::expand_cases(suite))
        case_order.emplace(CaseKey{suite.variants[c.variant].name, c.params_text}, case_order.size());
    check_results(suite, report, case_order);
    const std::filesystem::path suite_dir = child_path(dir, suite.name, "suite name");
    // Updates of one suite's files take turns: each reads what the one before it wrote (and
    // completes what a killed one committed).
    const FolderLock lock(suite_dir);

    const bool gpu = report.mode != RunMode::static_tier;
    const std::string source = gpu ? "gpu" : "static";
    std::map<std::string, std::vector<BaselineRow>> fresh; // by file key
    std::map<std::string, std::string> file_arch;          // by file key: the architecture, or "" for noisy
    std::size_t skipped = 0;
    for (const auto& r : report.results) {
        if (r.status == CaseStatus::skipped) {
            ++skipped;
            continue;
        }
        if (r.status != CaseStatus::passed) {
            out.notes.push_back(
                fmt::format("not recorded: {} {} {} is {}{}; its earlier baseline rows are kept", r.variant,
                            r.params_text, r.arch, case_status_name(r.status),
                            r.message.empty() ? "" : " (" + r.message.substr(0, r.message.find('\n')) + ")"));
            continue;
        }
        for (const auto& m : r.metrics) {
            const auto info = find_metric(m.name);
            if (!info) continue;
            const bool exact = info->stability == Stability::exact;
            if (!exact && !gpu) continue;
            const std::string key = exact ? exact_baseline_key(r.arch) : noisy_baseline_key(report.device_name);
            file_arch[key] = exact ? r.arch : "";
            BaselineRow row{r.variant, r.params_text, m.name, m.value, {}, source};
            if (m.name == metric::time_median) row.samples = baseline_samples(r.time_samples_us);
            fresh[key].push_back(std::move(row));
        }
    }

    if (skipped > 0)
        out.notes.push_back(
            fmt::format("not recorded: {} skipped cases (e.g. built-in library calls in the static tier)", skipped));

    std::vector<std::pair<std::filesystem::path, std::string>> files;
    for (auto& [key, rows] : fresh) {
        const auto path = baseline_path(dir, suite.name, key);
        BaselineFile file;
        if (std::filesystem::exists(path)) {
            file = read_baseline(path);
            check_baseline_identity(file, path.string(), suite.name, key);
        }
        const std::vector<BaselineRow> before = file.rows;
        // A figure that did not change keeps its row as it was (where it was recorded, too), so a
        // no-op update leaves the file byte-identical.
        for (auto& r : rows)
            if (const BaselineRow* old = file.find(r.variant, r.params, r.metric);
                old && old->value == r.value && old->samples == r.samples)
                r = *old;
        std::set<std::tuple<std::string, std::string, std::string>> replaced;
        for (const auto& r : rows) replaced.emplace(r.variant, r.params, r.metric);
        std::size_t dropped = 0;
        std::erase_if(file.rows, [&](const BaselineRow& r) {
            if (!case_order.contains({r.variant, r.params})) {
                ++dropped;
                return true;
            }
            return replaced.contains({r.variant, r.params, r.metric});
        });
        if (dropped > 0)
            out.notes.push_back(fmt::format("{}: dropped {} rows of variants or points no longer in the suite",
                                            path.string(), dropped));
        file.rows.insert(file.rows.end(), std::make_move_iterator(rows.begin()), std::make_move_iterator(rows.end()));
        std::stable_sort(file.rows.begin(), file.rows.end(), [&](const BaselineRow& a, const BaselineRow& b) {
            return std::tuple(case_order.at({a.variant, a.params}), metric_order(a.metric)) <
                   std::tuple(case_order.at({b.variant, b.params}), metric_order(b.metric));
        });
        const auto same = [](const BaselineRow& a, const BaselineRow& b) {
            return a.variant == b.variant && a.params == b.params && a.metric == b.metric && a.value == b.value &&
                   a.samples == b.samples && a.source == b.source;
        };
        if (std::filesystem::exists(path) &&
            std::equal(before.begin(), before.end(), file.rows.begin(), file.rows.end(), same)) {
            out.unchanged.push_back(path.string());
            continue;
        }
        const bool exact = !file_arch[key].empty();
        file.set_identity(suite.name, key);
        file.set_meta("figures",
                      exact ? "exact (gates every GPU of this architecture)" : "noisy (gates only this GPU model)");
        // A static update of a file that holds GPU counters keeps naming the GPU they came from.
        if (gpu || file.meta("gpu").empty()) {
            file.set_meta("gpu", gpu ? report.device_name : "none (static tier)");
            file.set_meta("driver", gpu ? report.driver_version : "none");
        }
        file.set_meta("arch", exact ? file_arch[key] : report.arch);
        file.set_writer(report.cuda_version, report.harness_version, report.git_revision, report.timestamp);
        files.emplace_back(path, baseline_text(file));
        out.written.push_back(path.string());
    }
    // The cliffs of the run's maps change with the figures (docs/cliffs.md).
    CliffBaselineChanges cliffs = cliff_baseline_changes(suite, report, dir);
    for (auto& file : cliffs.files) {
        out.written.push_back(file.first.string());
        files.push_back(std::move(file));
    }
    out.unchanged.insert(out.unchanged.end(), cliffs.unchanged.begin(), cliffs.unchanged.end());
    out.notes.insert(out.notes.end(), cliffs.notes.begin(), cliffs.notes.end());
    // The SASS lines of the static tier's cases (docs/sass.md).
    for (auto& file : sass_baseline_changes(suite, report, dir, out.unchanged)) {
        out.written.push_back(file.first.string());
        files.push_back(std::move(file));
    }
    // The predicted accesses of the static tier's cases (docs/static-analysis.md).
    for (auto& file : access_baseline_changes(suite, report, dir, out.unchanged)) {
        out.written.push_back(file.first.string());
        files.push_back(std::move(file));
    }
    // The normalised SASS those figures were recorded from, for diffs and --changed-only.
    for (auto& file : sass_code_changes(suite, report, dir, out.unchanged)) {
        out.written.push_back(file.first.string());
        files.push_back(std::move(file));
    }
    // Every file is read, merged and checked above; now all of them change, or none does.
    replace_files_together(files, before_step);
    return out;
}

} // namespace harness::compare
