#include "harness/history/recent_values.hxx"

#include "harness/core/git.hxx"
#include "harness/core/metrics.hxx"
#include "harness/core/stats.hxx"
#include "harness/history/history_store.hxx"

#include <algorithm>
#include <map>
#include <tuple>

namespace harness::history {

namespace {

/// Whether two spellings of a commit (a full hash, a short one) name the same one.
bool same_commit(std::string_view a, std::string_view b)
{
    if (a.size() < 7 || b.size() < 7) return false;
    return a.size() <= b.size() ? b.starts_with(a) : a.starts_with(b);
}

bool is_noisy(const std::string& metric)
{
    const auto info = find_metric(metric);
    return info && info->stability == Stability::noisy;
}

bool wants_history(Verdict v)
{
    return v == Verdict::regressed || v == Verdict::expect_failed || v == Verdict::not_measured;
}

} // namespace

std::vector<double> recent_values(const std::vector<RunRecord>& runs, const CommitOrder& order,
                                  const SeriesSelector& selector, std::size_t count, std::string_view exclude_commit)
{
    const bool noisy = is_noisy(selector.metric);
    // By (position on the branch, commit date, commit): the values of each run at that commit.
    std::map<std::tuple<std::size_t, std::string, std::string>, std::vector<double>> by_commit;
    for (const auto& run : runs) {
        if (noisy && run.machine() != selector.machine) continue;
        if (!exclude_commit.empty() && same_commit(run.commit, exclude_commit)) continue;
        std::size_t at = 0;
        if (!order.empty()) {
            const auto position = order.position(run.commit);
            if (!position) continue; // not on the default branch
            at = *position;
        }
        for (const auto& c : run.cases) {
            if (c.status != CaseStatus::passed || c.variant != selector.variant || c.params != selector.params ||
                c.arch != selector.arch)
                continue;
            if (const auto value = c.figure(selector.metric))
                by_commit[{at, order.empty() ? run.commit_date : std::string(), run.commit}].push_back(*value);
        }
    }
    std::vector<double> values;
    values.reserve(std::min(count, by_commit.size()));
    auto it = by_commit.begin();
    if (by_commit.size() > count) std::advance(it, by_commit.size() - count);
    for (; it != by_commit.end(); ++it) values.push_back(median(it->second));
    return values;
}

RecentHistoryResult attach_recent_history(RunReport& report, const std::filesystem::path& store,
                                          const std::filesystem::path& repo, std::size_t count)
{
    RecentHistoryResult result;
    const bool wanted = std::any_of(report.results.begin(), report.results.end(), [](const CaseResult& r) {
        return std::any_of(r.verdicts.begin(), r.verdicts.end(),
                           [](const MetricVerdict& v) { return wants_history(v.verdict); });
    });
    std::error_code ec;
    if (!wanted || count == 0 || !std::filesystem::is_directory(store / "runs", ec)) return result;

    const HistoryStore history_store(store);
    result.problems = history_store.refresh_index().problems;
    const std::vector<RunRecord> runs = history_store.load_runs(report.suite);
    if (runs.empty()) return result;
    const CommitOrder order(first_parent_order(repo));
    // A run of a commit with changes is not that commit: its recorded runs stay in the line.
    const std::string own_commit = report.git_revision.ends_with(dirty_mark) ? std::string() : report.git_revision;
    const std::string machine = report.device_name.empty() ? std::string("static") : report.device_name;
    for (auto& r : report.results)
        for (auto& v : r.verdicts) {
            if (!wants_history(v.verdict)) continue;
            v.recent =
                recent_values(runs, order, {r.variant, r.params_text, r.arch, v.metric, machine}, count, own_commit);
            if (!v.recent.empty()) ++result.verdicts;
        }
    return result;
}

} // namespace harness::history
