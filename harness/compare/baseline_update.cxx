#include "harness/compare/baseline_update.hxx"

#include "harness/compare/baseline_file.hxx"
#include "harness/core/metrics.hxx"
#include "harness/suite/sweep.hxx"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <set>
#include <tuple>

namespace harness::compare {

namespace {

using CaseKey = std::pair<std::string, std::string>;  // variant, params

std::size_t metric_order(const std::string& name)
{
    const auto table = metric_table();
    for (std::size_t i = 0; i < table.size(); ++i)
        if (table[i].name == name) return i;
    return table.size();
}

} // namespace

BaselineUpdate update_baselines(const suite::Suite& suite, const report::RunReport& report,
                                const std::filesystem::path& dir)
{
    BaselineUpdate out;
    std::map<CaseKey, std::size_t> case_order;
    for (const auto& c : suite::expand_cases(suite))
        case_order.emplace(CaseKey{suite.variants[c.variant].name, c.params_text}, case_order.size());

    const bool gpu = report.mode != "static";
    const std::string source = gpu ? "gpu" : "static";
    std::map<std::string, std::vector<BaselineRow>> fresh;  // by file key
    std::map<std::string, std::string> file_arch;           // by file key: the architecture, or "" for noisy
    std::size_t skipped = 0;
    for (const auto& r : report.results) {
        if (r.status == CaseStatus::skipped) {
            ++skipped;
            continue;
        }
        if (r.status != CaseStatus::passed) {
            out.notes.push_back(fmt::format("not recorded: {} {} {} is {}{}; its earlier baseline rows are kept",
                                            r.variant, r.params_text, r.arch, case_status_name(r.status),
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
            if (m.name == "time_median") row.samples = r.time_samples_us;
            fresh[key].push_back(std::move(row));
        }
    }

    if (skipped > 0)
        out.notes.push_back(fmt::format("not recorded: {} skipped cases (e.g. built-in library calls in the static tier)",
                                        skipped));

    for (auto& [key, rows] : fresh) {
        const auto path = baseline_path(dir, suite.name, key);
        BaselineFile file;
        if (std::filesystem::exists(path)) file = read_baseline(path);
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
            return std::make_pair(case_order.at({a.variant, a.params}), metric_order(a.metric)) <
                   std::make_pair(case_order.at({b.variant, b.params}), metric_order(b.metric));
        });
        const bool exact = !file_arch[key].empty();
        file.set_meta("schema_version", std::to_string(baseline_schema_version));
        file.set_meta("suite", suite.name);
        file.set_meta("key", key);
        file.set_meta("figures", exact ? "exact (gates every GPU of this architecture)"
                                       : "noisy (gates only this GPU model)");
        // A static update of a file that holds GPU counters keeps naming the GPU they came from.
        if (gpu || file.meta("gpu").empty()) {
            file.set_meta("gpu", gpu ? report.device_name : "none (static tier)");
            file.set_meta("driver", gpu ? report.driver_version : "none");
        }
        file.set_meta("arch", exact ? file_arch[key] : report.arch);
        file.set_meta("cuda", report.cuda_version);
        file.set_meta("harness", report.harness_version);
        file.set_meta("git_revision", report.git_revision);
        file.set_meta("date", report.timestamp);
        write_baseline(path, file);
        out.written.push_back(path.string());
    }
    return out;
}

} // namespace harness::compare
