// Second looks at a GPU run's figures: more samples for unsure time verdicts, and time regressions
// and noisy counters beyond their rules measured again in fresh processes, every suite's cases of
// a round in one run over the run's GPUs.

#include "harness/pipeline/second_looks.hxx"

#include "harness/core/metrics.hxx"
#include "harness/core/text.hxx"
#include "harness/pipeline/gpu_run.hxx"
#include "harness/run/timing_stats.hxx"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <fmt/format.h>
#include <functional>
#include <optional>
#include <set>

namespace harness::pipeline {

void add_time_samples(CaseResult& r, const std::vector<double>& more)
{
    if (more.empty()) return;
    const std::optional<double> before = r.metric(metric::time_median);
    r.time_samples_us.insert(r.time_samples_us.end(), more.begin(), more.end());
    const run::TimingSummary t = run::summarize(r.time_samples_us);
    run::set_time_figures(r, t);
    // Rates are a fixed amount of work over the median.
    for (const auto name : {metric::gflops, metric::bandwidth})
        if (const auto rate = r.metric(name); rate && before && *before > 0 && t.median_us > 0)
            r.set_metric(name, *rate * *before / t.median_us);
}

int resample_count(std::size_t most_samples, double slowest_median_us, const suite::TimingSpec& timing)
{
    // As many samples again as the most any of them has, so the evidence doubles each round; but
    // no more than ten timing budgets of the slowest kernel, and never fewer than min_samples.
    double count = static_cast<double>(most_samples);
    if (slowest_median_us > 0) count = std::min(count, 10.0 * timing.budget_s / (slowest_median_us * 1e-6));
    return static_cast<int>(std::clamp(count, static_cast<double>(std::max(timing.min_samples, 1)), 100000.0));
}

std::vector<std::size_t> unsure_time_cases(const harness::RunReport& rep)
{
    std::vector<std::size_t> unsure;
    for (std::size_t i = 0; i < rep.results.size(); ++i) {
        const auto& r = rep.results[i];
        if (r.status != CaseStatus::passed) continue;
        if (std::any_of(r.verdicts.begin(), r.verdicts.end(),
                        [](const MetricVerdict& v) { return v.metric == metric::time_median && v.unsure; }))
            unsure.push_back(i);
    }
    return unsure;
}

const CaseResult* find_case(const harness::RunReport& run, const CaseResult& r)
{
    const auto it = std::find_if(run.results.begin(), run.results.end(), [&](const CaseResult& x) {
        return x.variant == r.variant && x.params_text == r.params_text && x.arch == r.arch;
    });
    return it == run.results.end() ? nullptr : &*it;
}

namespace {

/// The request that runs the cases `indices` of `rep` again (with their points' references):
/// without `counters`, unprofiled, as many time samples each as the most any of them has, within
/// resample_count's bounds; with them, those counters alone. `samples` is how many each takes.
/// Its costs are not kept for the next run's schedule.
SuiteRunRequest again_request(const harness::RunReport& rep, const std::vector<std::size_t>& indices,
                              const suite::Suite& suite, const run::RunSettings& settings, int& samples,
                              const std::vector<std::string>& counters)
{
    run::RunSettings again = settings;
    again.counter_cache = false;
    again.fresh_counters = false;
    again.shard.reset();
    again.variants.clear();
    again.only_cases.clear();
    again.resample_rounds = 0;
    again.record_costs = false;
    std::size_t most = 0;
    double slowest_us = 0;
    for (const auto i : indices) {
        again.only_cases.emplace_back(rep.results[i].variant, rep.results[i].params_text);
        most = std::max(most, rep.results[i].time_samples_us.size());
        slowest_us = std::max(slowest_us, rep.results[i].metric(metric::time_median).value_or(0.0));
    }
    suite::Suite more = suite;
    // The time: unprofiled, as many samples as resample_count gives within the run's budget. Noisy
    // counters: those alone, each case its suite's least samples, no instrumented run.
    again.profile = !counters.empty();
    if (again.profile) more.metrics = counters;
    samples = again.profile ? std::max(more.timing.min_samples, 1)
                            : resample_count(most, slowest_us,
                                             {.min_samples = more.timing.min_samples, .budget_s = settings.budget_s});
    more.timing.min_samples = samples;
    more.timing.max_samples = samples;
    return {std::move(more), std::move(again)};
}

/// One suite's cases to measure again in a round: which, and how many samples each took.
struct Again {
    std::size_t job = 0;
    std::vector<std::size_t> indices;
    int samples = 0;
    std::vector<std::string> counters; ///< noisy counters to measure again; none: the time
};

/// Runs every suite's cases of `again` in one run of their own: fresh worker processes (one per
/// GPU of the run), the suites at once and their cases spread over the GPUs. One report per entry
/// of `again`. Throws what run_suites_gpu throws.
std::vector<harness::RunReport> run_again(const std::vector<TimeRecheck>& jobs, std::vector<Again>& again,
                                          const run::DeviceInfo& device, const compile::CompileCache* cache)
{
    std::vector<SuiteRunRequest> requests;
    for (auto& a : again)
        requests.push_back(again_request(*jobs[a.job].rep, a.indices, *jobs[a.job].suite, *jobs[a.job].settings,
                                         a.samples, a.counters));
    return run_suites_gpu(requests, device, cache);
}

/// More processes a regression is measured in before it stands.
constexpr int fresh_processes = 2;

/// The cases of each suite still regressed after its second looks, and how those went.
struct SecondLooks {
    explicit SecondLooks(std::size_t jobs) : pending(jobs), not_reproduced(jobs, 0), samples(jobs, 0), failed(jobs) {}
    std::vector<std::vector<std::size_t>> pending; ///< per suite: regressed in every process so far
    std::vector<std::size_t> not_reproduced;       ///< per suite: passed in a later process
    std::vector<int> samples;                      ///< per suite: time samples each case took in its last look
    std::vector<bool> failed;                      ///< per suite: a look's run failed; the cases stand as measured
};

/// Up to fresh_processes looks at every suite's pending cases, each round in one run of its own
/// (run_again): `counters` names what a suite's cases measure (none: the time), and `judge` says
/// whether a case still regresses given that run, or nullopt where it got no second look. A run
/// that fails leaves its suites' cases as measured, with a note of `label` about `noun`.
void look_again(
    const std::vector<TimeRecheck>& jobs, SecondLooks& looks, const char* label, const char* noun,
    const std::function<std::vector<std::string>(std::size_t)>& counters,
    const std::function<std::optional<bool>(std::size_t, std::size_t, const harness::RunReport&, int)>& judge,
    const run::DeviceInfo& device, const compile::CompileCache* cache)
{
    for (int round = 1; round <= fresh_processes; ++round) {
        std::vector<Again> again;
        for (std::size_t j = 0; j < jobs.size(); ++j)
            if (!looks.pending[j].empty() && !looks.failed[j]) again.push_back({j, looks.pending[j], 0, counters(j)});
        if (again.empty()) return;
        std::vector<harness::RunReport> extra;
        try {
            extra = run_again(jobs, again, device, cache);
        } catch (const std::exception& e) {
            for (const auto& a : again) {
                jobs[a.job].rep->notes.push_back(fmt::format("{}: measuring {} {} again in a fresh process failed: "
                                                             "{}; they stand as measured",
                                                             label, a.indices.size(), noun, e.what()));
                looks.failed[a.job] = true;
            }
            return;
        }
        for (std::size_t k = 0; k < again.size(); ++k) {
            const std::size_t j = again[k].job;
            looks.samples[j] = again[k].samples;
            std::vector<std::size_t> still;
            for (const auto i : again[k].indices) {
                const auto regressed = judge(j, i, extra[k], round);
                if (!regressed) continue;
                if (*regressed)
                    still.push_back(i);
                else
                    ++looks.not_reproduced[j];
            }
            looks.pending[j] = std::move(still);
        }
    }
}

/// Why a second run gave a case no samples, or empty when it did.
std::string no_second_samples(const CaseResult* second)
{
    if (!second) return "the case did not run";
    if (second->status != CaseStatus::passed)
        return std::string(case_status_name(second->status)) + " " + second->message;
    if (second->time_samples_us.empty()) return "it took no time samples";
    return "";
}

void append_message(CaseResult& r, const std::string& text)
{
    r.message += (r.message.empty() ? "" : "; ") + text;
}

/// `r` as measured again in `extra`, its timing cost added to r's; null, with `failed` and the
/// reason appended to r's message, when that run gave it no samples.
const CaseResult* measured_again(const harness::RunReport& extra, CaseResult& r, const std::string& failed)
{
    const CaseResult* again = find_case(extra, r);
    if (const auto problem = no_second_samples(again); !problem.empty()) {
        append_message(r, failed + ": " + problem);
        return nullptr;
    }
    r.cost.timing += again->cost.timing;
    r.cost.timing_parts += again->cost.timing_parts;
    return again;
}

const MetricVerdict* time_verdict(const CaseResult& r)
{
    const auto it = std::find_if(r.verdicts.begin(), r.verdicts.end(),
                                 [](const MetricVerdict& v) { return v.metric == metric::time_median; });
    return it == r.verdicts.end() ? nullptr : &*it;
}

} // namespace

void resample_unsure(const std::vector<TimeRecheck>& jobs, const run::DeviceInfo& device,
                     const compile::CompileCache* cache)
{
    int rounds = 0;
    for (const auto& job : jobs) rounds = std::max(rounds, job.settings->resample_rounds);
    for (int round = 1; round <= rounds; ++round) {
        std::vector<Again> again;
        for (std::size_t j = 0; j < jobs.size(); ++j) {
            const TimeRecheck& job = jobs[j];
            if (round > job.settings->resample_rounds) continue;
            compare::compare_run(*job.rep, *job.suite, *job.gate);
            auto unsure = unsure_time_cases(*job.rep);
            if (unsure.empty()) continue;
            fmt::print(stderr, "harness: suite {}: {} time verdict(s) unsure, taking more samples (round {} of {})\n",
                       job.suite->name, unsure.size(), round, job.settings->resample_rounds);
            again.push_back({j, std::move(unsure), 0, {}});
        }
        if (again.empty()) return;
        std::vector<harness::RunReport> extra;
        try {
            extra = run_again(jobs, again, device, cache);
        } catch (const std::exception& e) {
            // The first verdicts stand: a failed second look loses nothing the run had.
            for (const auto& a : again)
                jobs[a.job].rep->notes.push_back(fmt::format("time: taking more samples for {} unsure verdict(s) "
                                                             "failed: {}",
                                                             a.indices.size(), e.what()));
            return;
        }
        for (std::size_t k = 0; k < again.size(); ++k) {
            harness::RunReport& rep = *jobs[again[k].job].rep;
            std::size_t added = 0;
            for (const auto i : again[k].indices) {
                auto& r = rep.results[i];
                const CaseResult* second =
                    measured_again(extra[k], r, "taking more time samples after an unsure verdict failed");
                if (!second) continue;
                add_time_samples(r, second->time_samples_us);
                append_message(r, fmt::format("{} more time samples after an unsure time verdict (round {})",
                                              second->time_samples_us.size(), round));
                ++added;
            }
            rep.notes.push_back(fmt::format("time: {} unsure verdict(s) given {} more samples each in round {} ({} "
                                            "took them)",
                                            again[k].indices.size(), again[k].samples, round, added));
        }
    }
}

std::vector<std::size_t> regressed_time_cases(const harness::RunReport& rep)
{
    std::vector<std::size_t> regressed;
    for (std::size_t i = 0; i < rep.results.size(); ++i) {
        const auto* v = time_verdict(rep.results[i]);
        if (rep.results[i].status == CaseStatus::passed && v && v->verdict == Verdict::regressed)
            regressed.push_back(i);
    }
    return regressed;
}

bool confirm_time_regression(harness::RunReport& rep, std::size_t i, const std::vector<double>& second,
                             const suite::Suite& suite, const compare::CompareOptions& gate, int earlier_processes)
{
    CaseResult& r = rep.results[i];
    const double first_median = r.metric(metric::time_median).value_or(0.0);
    // The new process's samples alone, judged against the same baseline.
    harness::RunReport trial = rep;
    trial.results = {r};
    CaseResult& t = trial.results.front();
    t.time_samples_us.clear();
    add_time_samples(t, second);
    compare::compare_run(trial, suite, gate);
    const auto* v = time_verdict(t);
    const double second_median = t.metric(metric::time_median).value_or(0.0);
    const bool one_before = earlier_processes <= 1;
    const char* next = one_before ? "second" : "third";
    if (!v || v->verdict == Verdict::regressed || v->unsure) {
        add_time_samples(r, second);
        append_message(r, fmt::format("time slower again in a {} process (median {:.4g} us there, {:.4g} us in the "
                                      "first{}): judged on the samples of {}",
                                      next, second_median, first_median, one_before ? "" : " two",
                                      one_before ? "both" : "all three"));
        return true;
    }
    // Not slower in a fresh process: the earlier processes' samples shifted as a whole, as a
    // kernel's times do with where its buffers land in GPU memory, which no test within one
    // process sees.
    r.time_samples_us.clear();
    add_time_samples(r, second);
    append_message(r, fmt::format("time slower in its first {} only (median {:.4g} us there, {:.4g} us in a {}): "
                                  "judged on the {} process's {} samples",
                                  one_before ? "process" : "two processes", first_median, second_median, next, next,
                                  second.size()));
    return false;
}

void confirm_time_regressions(const std::vector<TimeRecheck>& jobs, const run::DeviceInfo& device,
                              const compile::CompileCache* cache)
{
    SecondLooks looks(jobs.size());
    std::vector<std::size_t> regressed(jobs.size(), 0);
    for (std::size_t j = 0; j < jobs.size(); ++j) {
        const TimeRecheck& job = jobs[j];
        if (job.settings->resample_rounds <= 0) continue;
        compare::compare_run(*job.rep, *job.suite, *job.gate);
        looks.pending[j] = regressed_time_cases(*job.rep);
        regressed[j] = looks.pending[j].size();
        if (regressed[j] > 0)
            fmt::print(stderr, "harness: suite {}: {} time regression(s), measuring them again in fresh processes\n",
                       job.suite->name, regressed[j]);
    }
    // Up to two more processes: a regression stands only when each one is slower too. A kernel
    // whose buffers land slowly in some processes (gemm blocktiled_1d N=1001 on an H100: 182 us in
    // some, 177 us in most) is then a false alarm only when three processes in a row land so.
    look_again(
        jobs, looks, "time", "regression(s)", [](std::size_t) { return std::vector<std::string>{}; },
        [&](std::size_t j, std::size_t i, const harness::RunReport& extra, int round) -> std::optional<bool> {
            const TimeRecheck& job = jobs[j];
            const CaseResult* again_r = measured_again(extra, job.rep->results[i],
                                                       "measuring the time regression again in a fresh process failed");
            if (!again_r) return std::nullopt;
            return confirm_time_regression(*job.rep, i, again_r->time_samples_us, *job.suite, *job.gate, round);
        },
        device, cache);
    for (std::size_t j = 0; j < jobs.size(); ++j)
        if (regressed[j] > 0 && !looks.failed[j])
            jobs[j].rep->notes.push_back(fmt::format("time: {} regression(s) measured again in up to {} fresh "
                                                     "processes ({} samples each): {} slower in every one, {} not "
                                                     "(judged on the last)",
                                                     regressed[j], fresh_processes, looks.samples[j],
                                                     looks.pending[j].size(), looks.not_reproduced[j]));
}

std::vector<std::string> regressed_counters(const CaseResult& r)
{
    std::vector<std::string> names;
    if (r.status != CaseStatus::passed) return names;
    for (const auto& v : r.verdicts) {
        if (v.verdict != Verdict::regressed) continue;
        if (is_noisy_counter(v.metric)) names.push_back(v.metric);
    }
    return names;
}

bool confirm_counter_regression(harness::RunReport& rep, std::size_t i, const CaseResult& again,
                                const suite::Suite& suite, const compare::CompareOptions& gate, int earlier_processes)
{
    CaseResult& r = rep.results[i];
    const auto names = regressed_counters(r);
    harness::RunReport trial = rep;
    trial.results = {r};
    CaseResult& t = trial.results.front();
    for (const auto& [name, value] : again.metrics)
        if (is_noisy_counter(name)) t.set_metric(name, value);
    compare::compare_run(trial, suite, gate);
    const auto still = regressed_counters(t);
    const auto figures = [&](const CaseResult& c) {
        std::vector<std::string> parts;
        for (const auto& name : names)
            if (const auto v = c.metric(name)) parts.push_back(fmt::format("{} {:.6g}", name, *v));
        return join(parts);
    };
    const char* next = earlier_processes <= 1 ? "second" : "third";
    if (!still.empty()) {
        append_message(
            r, fmt::format("{} beyond the rule again in a {} process ({} there)", join(still), next, figures(t)));
        return true;
    }
    // Not reproduced: where the process's buffers and modules landed moved the counters (a
    // kernel's DRAM reads follow its buffers' place in memory); the fresh process's figures stand.
    const std::string first = figures(r);
    for (const auto& [name, value] : t.metrics) r.set_metric(name, value);
    append_message(r, fmt::format("{} beyond the rule in its first {} only ({}; {} in a {}): judged on the {}",
                                  join(names), earlier_processes <= 1 ? "process" : "two processes", first, figures(r),
                                  next, next));
    return false;
}

void confirm_counter_regressions(const std::vector<TimeRecheck>& jobs, const run::DeviceInfo& device,
                                 const compile::CompileCache* cache)
{
    SecondLooks looks(jobs.size());
    std::vector<std::size_t> regressed(jobs.size(), 0);
    for (std::size_t j = 0; j < jobs.size(); ++j) {
        const TimeRecheck& job = jobs[j];
        if (job.settings->resample_rounds <= 0 || !job.settings->profile) continue;
        compare::compare_run(*job.rep, *job.suite, *job.gate);
        for (std::size_t i = 0; i < job.rep->results.size(); ++i)
            if (!regressed_counters(job.rep->results[i]).empty()) looks.pending[j].push_back(i);
        regressed[j] = looks.pending[j].size();
        if (regressed[j] > 0)
            fmt::print(stderr,
                       "harness: suite {}: {} case(s) with a noisy counter beyond its rule, measuring them "
                       "again in fresh processes\n",
                       job.suite->name, regressed[j]);
    }
    look_again(
        jobs, looks, "counters", "case(s)",
        [&](std::size_t j) {
            std::set<std::string> names;
            for (const auto i : looks.pending[j])
                for (const auto& name : regressed_counters(jobs[j].rep->results[i])) names.insert(name);
            return std::vector<std::string>(names.begin(), names.end());
        },
        [&](std::size_t j, std::size_t i, const harness::RunReport& extra, int round) -> std::optional<bool> {
            const TimeRecheck& job = jobs[j];
            auto& r = job.rep->results[i];
            const CaseResult* again_r = find_case(extra, r);
            if (!again_r || again_r->status != CaseStatus::passed) {
                append_message(r, "measuring its counters again in a fresh process failed: " +
                                      (again_r ? again_r->message : std::string("the case did not run")));
                return std::nullopt;
            }
            r.cost.profile += again_r->cost.profile;
            return confirm_counter_regression(*job.rep, i, *again_r, *job.suite, *job.gate, round);
        },
        device, cache);
    for (std::size_t j = 0; j < jobs.size(); ++j)
        if (regressed[j] > 0 && !looks.failed[j])
            jobs[j].rep->notes.push_back(fmt::format("counters: {} case(s) with a noisy counter beyond its rule "
                                                     "measured again in up to {} fresh processes: {} beyond it in "
                                                     "every one, {} not (judged on the last)",
                                                     regressed[j], fresh_processes, looks.pending[j].size(),
                                                     looks.not_reproduced[j]));
}

} // namespace harness::pipeline
