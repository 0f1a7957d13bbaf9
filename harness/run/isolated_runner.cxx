#include "harness/run/isolated_runner.hxx"

#include "harness/suite/compile_params.hxx"

#include "harness/core/child_process.hxx"
#include "harness/profile/case_profiler.hxx"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

namespace harness::run {

namespace {

using Clock = std::chrono::steady_clock;

/// Most cases a worker starts before it finishes them (see worker_main and CaseRunner::start; a
/// lone worker also ends a group with its suite): a larger group changes the context's range
/// profiler between timer and counters less often (twice per group, each about 0.1 s that holds up
/// the host's other GPUs' profilers too), a smaller one loses fewer started cases to a fault while
/// their counters are measured (the next worker runs them again).
constexpr std::size_t max_group_cases = 128;

/// Most cases whose noisy counters one range-profiler measurement takes (CaseRunner::finish_batch):
/// each measurement's set-up and read-back cost about 20 ms on an H100, twice that beside other
/// GPUs' workers, against about 1 ms for the launches of a typical case. A failure in a batch
/// measures its other cases again one by one.
constexpr std::size_t max_batch_cases = 32;

CaseResult base_result(const suite::Suite& suite, const suite::Case& c)
{
    CaseResult r;
    r.suite = suite.name;
    r.variant = suite.variants[c.variant].name;
    r.params = {c.params.begin(), c.params.end()};
    r.params_text = c.params_text;
    r.launches = suite::case_launches(suite, suite.variants[c.variant], c.params);
    return r;
}

const suite::Case& case_of(const std::vector<SuiteWork>& work, const WorkItem& item)
{
    return (*work[item.suite].cases)[item.index];
}

bool is_reference_case(const std::vector<SuiteWork>& work, const WorkItem& item)
{
    const suite::Suite& s = *work[item.suite].suite;
    return s.variants[case_of(work, item).variant].name == s.reference;
}

/// The body of a worker process: runs the items at `positions` in order, reporting each (by its
/// position) over `fd`.
int worker_main(const std::vector<SuiteWork>& work, const std::vector<WorkItem>& items,
                const std::vector<std::size_t>& positions, const IsolatedRunConfig& config, int fd)
{
    const SuiteWork& first = work[items[positions.front()].suite];
    std::unique_ptr<GpuSession> session;
    std::unique_ptr<CaseRunner> runner_owner;
    const auto started = Clock::now();
    double context_seconds = 0, check_seconds = 0;
    try {
        session = std::make_unique<GpuSession>(config.device, config.pci_bus_id);
        context_seconds = std::chrono::duration<double>(Clock::now() - started).count();
        if (config.options.profile && !config.options.external_profiler)
            if (const auto problem = profile::profiling_problem(session->context(), session->info().ordinal))
                throw Error(ErrorKind::environment, "cannot read hardware counters: " + *problem);
        check_seconds = std::chrono::duration<double>(Clock::now() - started).count() - context_seconds;
        RunOptions options = config.options;
        options.metrics = first.suite->metrics;
        runner_owner = std::make_unique<CaseRunner>(*session, *first.suite, *first.modules, options);
    } catch (const std::exception& e) {
        write_event(fd, {{"event", "fatal"}, {"message", e.what()}});
        return 3;
    }
    CaseRunner& runner = *runner_owner;
    write_event(fd, {{"event", "ready"},
                     {"seconds", std::chrono::duration<double>(Clock::now() - started).count()},
                     {"parts",
                      {{"context", context_seconds},
                       {"counter check", check_seconds},
                       {"clock", runner.startup().clock},
                       {"timer", runner.startup().timer},
                       {"profilers", runner.startup().profiler}}}});
    ReferenceOutputs reference;
    std::set<std::pair<std::size_t, std::size_t>> failed_reference_points; // (suite, point)
    std::size_t current_suite = items[positions.front()].suite;

    // Cases are started (prepared, verified, timed) a group at a time, then finished (their
    // counters measured): see CaseRunner::start. A fault loses the group's unfinished cases to the
    // next worker, which runs them again.
    std::vector<std::pair<std::size_t, CaseRunner::Staged>> group;

    // A failure of the case itself (`error`, thrown by one half of it) becomes its result.
    enum class Step { done, failed, poisoned };
    const auto failure_of = [&](std::size_t index, const std::exception_ptr& error, CaseResult& failure) {
        const WorkItem& item = items[index];
        const suite::Suite& suite = *work[item.suite].suite;
        try {
            std::rethrow_exception(error);
        } catch (const CudaError& e) {
            failure = base_result(suite, case_of(work, item));
            const bool poisoned = e.poisons_context();
            failure.status = poisoned ? CaseStatus::fault : CaseStatus::launch_error;
            failure.message = poisoned ? fmt::format("kernel fault: {}", e.what()) : e.what();
            return poisoned ? Step::poisoned : Step::failed;
        } catch (const std::exception& e) {
            failure = base_result(suite, case_of(work, item));
            failure.status = CaseStatus::launch_error;
            failure.message = e.what();
            return Step::failed;
        }
    };
    const auto guarded = [&](std::size_t index, const std::function<void()>& step, CaseResult& failure) {
        try {
            step();
            return Step::done;
        } catch (...) {
            return failure_of(index, std::current_exception(), failure);
        }
    };
    const auto send = [&](std::size_t index, const CaseResult& result) {
        write_event(fd, {{"event", "result"}, {"index", index}, {"result", result}});
    };
    const auto begin = [&](std::size_t index) { write_event(fd, {{"event", "begin"}, {"index", index}}); };
    // Each returns false when the context is unusable: the parent then starts a fresh worker for
    // the cases not reported.
    const auto finish_one = [&](std::size_t index, CaseRunner::Staged staged) {
        begin(index);
        CaseResult result;
        const Step end = guarded(
            index, [&] { result = runner.finish(std::move(staged)); }, result);
        send(index, result);
        return end != Step::poisoned;
    };
    // The group's entries [first, end), whose noisy counters are measured at once. Where one
    // fails, it fails alone and the others are measured again one by one; where CUPTI recorded
    // the batch only in part, every case is.
    const auto finish_batch = [&](std::size_t first, std::size_t end) {
        std::vector<CaseRunner::Staged> batch;
        for (std::size_t k = first; k < end; ++k) batch.push_back(group[k].second);
        std::size_t turn = 0;
        std::optional<std::vector<CaseResult>> results;
        std::exception_ptr error;
        try {
            results = runner.finish_batch(batch, [&](std::size_t k) {
                turn = k;
                begin(group[first + k].first);
            });
        } catch (...) {
            error = std::current_exception();
        }
        if (!error && results) {
            for (std::size_t k = 0; k < results->size(); ++k) send(group[first + k].first, (*results)[k]);
            return true;
        }
        if (!error) {
            for (std::size_t k = first; k < end; ++k) {
                group[k].second.result.cost.profile.unbatched = 1;
                if (!finish_one(group[k].first, std::move(group[k].second))) return false;
            }
            return true;
        }
        CaseResult failure;
        const std::size_t failed = group[first + turn].first;
        const Step step = failure_of(failed, error, failure);
        send(failed, failure);
        if (step == Step::poisoned) return false;
        for (std::size_t k = first; k < end; ++k)
            if (k != first + turn && !finish_one(group[k].first, std::move(group[k].second))) return false;
        return true;
    };
    const auto finish_group = [&] {
        // Library calls last: their counters are never cached, so in a run that reuses cached
        // counters they take the full counter profiler, the others the noisy one, and each change
        // of profiler costs a turn.
        std::stable_partition(group.begin(), group.end(),
                              [](const auto& entry) { return !entry.second.variant->is_builtin(); });
        for (std::size_t i = 0; i < group.size();) {
            std::size_t end = i;
            while (end < group.size() && end - i < max_batch_cases && runner.batchable(group[end].second) &&
                   group[end].second.suite == group[i].second.suite)
                ++end;
            if (end - i >= 2) {
                if (!finish_batch(i, end)) return false;
                i = end;
            } else {
                if (!finish_one(group[i].first, std::move(group[i].second))) return false;
                ++i;
            }
        }
        group.clear();
        return true;
    };

    for (const std::size_t index : positions) {
        const WorkItem& item = items[index];
        const suite::Suite& suite = *work[item.suite].suite;
        const suite::Case& c = case_of(work, item);
        const bool is_reference = is_reference_case(work, item);
        if (!is_reference && failed_reference_points.contains({item.suite, c.point})) {
            send(index, unverifiable_case(suite, c, "the reference variant failed at this point"));
            continue;
        }
        const bool next_suite = item.suite != current_suite;
        if (next_suite && !config.options.groups_span_suites && !finish_group()) return 0;
        if (group.size() >= max_group_cases && !finish_group()) return 0;
        // A staged case keeps its suite, which finish() takes up again: the runner is set to this
        // case's suite after the group before it was finished.
        runner.use_suite(suite, *work[item.suite].modules);
        current_suite = item.suite;
        write_event(fd, {{"event", "begin"}, {"index", index}});
        CaseRunner::Staged staged;
        const Step end = guarded(
            index, [&] { staged = runner.start(c, reference); }, staged.result);
        if (is_reference && case_status_fails(staged.result.status))
            failed_reference_points.insert({item.suite, c.point});
        if (end == Step::done && staged.profile) {
            group.emplace_back(index, std::move(staged));
            continue;
        }
        send(index, staged.result);
        if (end == Step::poisoned) return 0;
    }
    finish_group();
    return 0;
}

} // namespace

CaseResult unverifiable_case(const suite::Suite& suite, const suite::Case& c, const std::string& why)
{
    CaseResult r = base_result(suite, c);
    r.status = CaseStatus::failed_verification;
    r.message = "not run, cannot verify: " + why;
    return r;
}

namespace {

constexpr std::size_t no_case = static_cast<std::size_t>(-1);

/// How a worker's life ended.
struct WorkerEnd {
    std::size_t current = no_case; ///< the case it was running when it ended, if any
    bool timed_out = false;        ///< killed at a deadline
    std::string fatal;             ///< an error that stops the whole run
    std::size_t finished = 0;      ///< cases it reported
    int status = 0;                ///< its wait status
};

/// Runs a worker for the `pending` cases and follows its events until it exits or misses a
/// deadline (the start-up timeout before its first case, the case timeout for each case), passing
/// results to `finish`.
WorkerEnd run_worker(const std::vector<SuiteWork>& work, const std::vector<WorkItem>& items,
                     const std::vector<std::size_t>& pending, const IsolatedRunConfig& config,
                     const std::function<double(std::size_t)>& timeout_of, const RunObserver& observer,
                     const std::function<void(std::size_t, CaseResult)>& finish)
{
    WorkerEnd end;
    const ChildEnd child =
        follow_child([&](int fd) { return worker_main(work, items, pending, config, fd); }, config.startup_timeout_s,
                     [&](const nlohmann::json& message) -> std::optional<double> {
                         const std::string event = message.at("event");
                         if (event == "fatal") {
                             end.fatal = message.at("message");
                         } else if (event == "ready") {
                             if (observer.on_worker_ready)
                                 observer.on_worker_ready(message.at("seconds").get<double>(),
                                                          message.at("parts").get<std::map<std::string, double>>());
                         } else if (event == "begin") {
                             end.current = message.at("index").get<std::size_t>();
                             if (observer.on_begin) observer.on_begin(end.current);
                             return timeout_of(end.current);
                         } else if (event == "result") {
                             finish(message.at("index").get<std::size_t>(), message.at("result").get<CaseResult>());
                             ++end.finished;
                             end.current = no_case;
                             // Between cases the worker starts the next or finishes staged ones: as long as a case.
                             return timeout_of(no_case);
                         }
                         return std::nullopt;
                     });
    end.timed_out = child.timed_out;
    end.status = child.status;
    return end;
}

} // namespace

std::vector<CaseResult> run_isolated(const std::vector<SuiteWork>& work, const std::vector<WorkItem>& items,
                                     const IsolatedRunConfig& config, const RunObserver& observer)
{
    std::vector<CaseResult> results(items.size());
    std::vector<bool> done(items.size(), false);
    std::set<std::pair<std::size_t, std::size_t>> failed_reference_points; // (suite, point)
    double longest_timeout = 0;
    for (const auto& w : work) longest_timeout = std::max(longest_timeout, w.timeout_s);
    const auto timeout_of = [&](std::size_t position) {
        return position == no_case ? longest_timeout : work[items[position].suite].timeout_s;
    };

    const auto finish = [&](std::size_t position, CaseResult r) {
        const WorkItem& item = items[position];
        if (is_reference_case(work, item) && case_status_fails(r.status))
            failed_reference_points.insert({item.suite, case_of(work, item).point});
        results[position] = std::move(r);
        done[position] = true;
        if (observer.on_result) observer.on_result(position, results[position]);
    };

    // One worker at a time runs the cases left; a case that kills or hangs its worker fails, and a
    // new worker takes the rest.
    for (;;) {
        std::vector<std::size_t> pending;
        for (std::size_t i = 0; i < items.size(); ++i) {
            if (done[i]) continue;
            const suite::Case& c = case_of(work, items[i]);
            if (!is_reference_case(work, items[i]) && failed_reference_points.contains({items[i].suite, c.point}))
                finish(i,
                       unverifiable_case(*work[items[i].suite].suite, c, "the reference variant failed at this point"));
            else
                pending.push_back(i);
        }
        if (pending.empty()) break;

        const WorkerEnd end = run_worker(work, items, pending, config, timeout_of, observer, finish);
        if (!end.fatal.empty()) throw Error(ErrorKind::environment, end.fatal);
        if (end.current != no_case) {
            const WorkItem& item = items[end.current];
            CaseResult r = base_result(*work[item.suite].suite, case_of(work, item));
            if (end.timed_out) {
                r.status = CaseStatus::timeout;
                r.message = fmt::format("did not finish within {:g} s; its worker was killed", timeout_of(end.current));
            } else {
                r.status = CaseStatus::fault;
                r.message =
                    fmt::format("the worker process died while running this case: {}", describe_exit(end.status));
            }
            finish(end.current, std::move(r));
        } else if (end.finished == 0) {
            // A worker that died or hung before starting any case would be restarted forever.
            throw Error(ErrorKind::environment,
                        end.timed_out
                            ? fmt::format("a worker did not start within {:g} s", config.startup_timeout_s)
                            : fmt::format("a worker failed before running any case: {}", describe_exit(end.status)));
        }
    }
    return results;
}

std::vector<CaseResult> run_isolated(const suite::Suite& suite, const std::vector<suite::Case>& cases,
                                     const std::map<std::string, compile::CompiledModule>& modules,
                                     const IsolatedRunConfig& config, const RunObserver& observer)
{
    if (cases.empty()) return {};
    std::vector<WorkItem> items;
    for (std::size_t i = 0; i < cases.size(); ++i) items.push_back({0, i});
    return run_isolated({{&suite, &cases, &modules, config.timeout_s}}, items, config, observer);
}

} // namespace harness::run
