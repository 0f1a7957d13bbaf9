#include "harness/history/suite_history.hxx"

#include "harness/core/rule_syntax.hxx"
#include "harness/core/stats.hxx"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace harness::history {

namespace {

/// Noisy figures worth a series: those a rule gates by default (time, DRAM bytes, achieved
/// occupancy); the rest (time_min, throughput) follow from them.
bool tracked(const MetricInfo& m)
{
    return m.stability == Stability::exact || m.default_rule != "ignore";
}

/// Whether a move from `before` to `after` reaches the gate's rule for the figure: a change the
/// gate would never call one is no change point, however significant against a tiny noise (a
/// DRAM figure moving by 1,536 bytes, 5.7 noises, where the rule asks 5 % and 2 MiB).
bool beyond_floor(const Rule& rule, double before, double after)
{
    const double moved = std::abs(after - before);
    if (moved < rule.minimum) return false;
    switch (rule.kind) {
    case RuleKind::relative:
    case RuleKind::samples: return moved > rule.tolerance * std::abs(before);
    case RuleKind::absolute: return moved > rule.tolerance;
    case RuleKind::exact:
    case RuleKind::report:
    case RuleKind::ignore: return moved > 0;
    }
    return true;
}

/// Keeps a noisy series' change points and creep only where they reach the metric's default rule.
void apply_practical_floor(SeriesAnalysis& analysis, std::string_view metric)
{
    const std::optional<MetricInfo> info = find_metric(metric);
    if (!info) return;
    Rule rule;
    try {
        rule = parse_rule(info->default_rule);
    } catch (const std::invalid_argument&) {
        return;
    }
    std::erase_if(analysis.change_points, [&](const ChangePoint& c) { return !beyond_floor(rule, c.before, c.after); });
    if (analysis.creep &&
        !beyond_floor(rule, analysis.creep->start_level, analysis.creep->start_level + analysis.creep->total))
        analysis.creep.reset();
}

/// A series while it is gathered: case (by first appearance), metric (by table order), machine.
using SeriesKey = std::tuple<std::size_t, std::size_t, std::string>;

struct Gathered {
    std::string variant, params, arch, metric;
    Stability stability = Stability::exact;
    // by commit index: values of each run, the measured noise of each, the latest results path
    std::map<std::size_t, std::vector<double>> values, noise;
    std::map<std::size_t, std::string> results;
};

} // namespace

SuiteHistory build_suite_history(const std::string& suite, const std::vector<RunRecord>& runs, const CommitOrder& order,
                                 const ChangePointOptions& options)
{
    SuiteHistory h;
    h.suite = suite;
    h.runs = runs.size();

    // Commits: those on the branch by position, then the others by date; commits of one date (a
    // rebase, a script's commits within a second) in the order their first runs ran, which follows
    // the order CI met them, and only then by hash.
    std::map<std::string, CommitEntry> seen;
    std::map<std::string, std::string> first_run; // by commit: the earliest timestamp of its runs
    for (const auto& r : runs) {
        auto [it, fresh] = seen.try_emplace(r.commit, CommitEntry{r.commit, r.commit_date, false});
        if (!fresh && r.commit_date < it->second.date) it->second.date = r.commit_date;
        auto [ran, first] = first_run.try_emplace(r.commit, r.timestamp);
        if (!first && r.timestamp < ran->second) ran->second = r.timestamp;
    }
    std::vector<std::pair<std::tuple<int, std::size_t, std::string, std::string, std::string>, CommitEntry>> keyed;
    for (auto& [commit, entry] : seen) {
        const auto at = order.position(commit);
        entry.on_branch = at.has_value();
        keyed.push_back({{at ? 0 : 1, at.value_or(0), entry.date, first_run.at(commit), commit}, entry});
    }
    std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::map<std::string, std::size_t> commit_index;
    for (auto& [key, entry] : keyed) {
        commit_index[entry.commit] = h.commits.size();
        h.commits.push_back(std::move(entry));
    }

    std::map<std::string, std::pair<std::size_t, Stability>, std::less<>> metric_order;
    for (const auto& m : metric_table())
        if (tracked(m)) metric_order.emplace(std::string(m.name), std::pair{metric_order.size(), m.stability});
    std::map<std::tuple<std::string, std::string, std::string>, std::size_t> case_order;
    const std::string exact_machine;
    std::map<SeriesKey, Gathered> gathered;
    for (const auto& r : runs) {
        const std::size_t at = commit_index.at(r.commit);
        for (const auto& c : r.cases) {
            if (c.status != CaseStatus::passed) continue;
            const auto [case_at, _] = case_order.try_emplace({c.variant, c.params, c.arch}, case_order.size());
            for (const auto& [name, value] : c.figures) {
                const auto m = metric_order.find(name);
                if (m == metric_order.end()) continue;
                const bool noisy = m->second.second == Stability::noisy;
                Gathered& g = gathered[{case_at->second, m->second.first, noisy ? r.machine() : exact_machine}];
                if (g.metric.empty()) {
                    g.variant = c.variant;
                    g.params = c.params;
                    g.arch = c.arch;
                    g.metric = name;
                    g.stability = m->second.second;
                }
                double v = value, noise = 0.0;
                if (name == metric::time_median && c.time && c.time->samples > 0) {
                    v = c.time->median_us;
                    // The standard error of a median of n samples: 1.2533 sigma / sqrt(n).
                    noise = 1.2533 * c.time->sample_sigma_us() / std::sqrt(static_cast<double>(c.time->samples));
                }
                g.values[at].push_back(v);
                g.noise[at].push_back(noise);
                if (!r.results_path.empty()) g.results[at] = r.results_path;
            }
        }
    }

    // The map's order is the page's: case, metric, machine.
    for (auto& [key, gathered_series] : gathered) {
        const Gathered* g = &gathered_series;
        Series s{g->variant, g->params, g->arch, std::get<2>(key), g->metric, g->stability, {}, {}};
        s.stability = g->stability;
        std::vector<double> values, noises;
        for (const auto& [at, vs] : g->values) {
            SeriesPoint p;
            p.commit = at;
            p.value = median(vs);
            p.runs = vs.size();
            // Runs at one commit average out: the median's noise falls with their number.
            p.noise = median(g->noise.at(at)) / std::sqrt(static_cast<double>(vs.size()));
            if (const auto it = g->results.find(at); it != g->results.end()) p.results_path = it->second;
            values.push_back(p.value);
            noises.push_back(p.noise);
            s.points.push_back(std::move(p));
        }
        if (s.stability == Stability::exact) {
            s.analysis = analyze_exact(values);
        } else {
            s.analysis = analyze_noisy(values, noises.empty() ? 0.0 : median(noises), options);
            apply_practical_floor(s.analysis, s.metric);
        }
        h.series.push_back(std::move(s));
    }
    return h;
}

} // namespace harness::history
