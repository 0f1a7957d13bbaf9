#include "harness/run/isolated_runner.hxx"

#include "harness/core/child_process.hxx"
#include "harness/profile/case_profiler.hxx"
#include "harness/run/worker_supervisor.hxx"
#include "harness/suite/compile_params.hxx"

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

/// Most cases a worker starts before it finishes them (see CaseWorker and CaseRunner::start; a
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

/// The body of a worker process: runs the items at its positions in order, reporting each (by its
/// position) over its events. Cases are started (prepared, verified, timed) a group at a time, then
/// finished (their counters measured): see CaseRunner::start. A fault loses the group's unfinished
/// cases to the next worker, which runs them again.
class CaseWorker {
public:
    CaseWorker(const std::vector<SuiteWork>& work, const std::vector<WorkItem>& items, const DeviceInfo& device,
               const RunOptions& options, int fd)
        : work_(work), items_(items), device_(device), options_(options), events_(fd)
    {
    }

    /// Returns the worker's exit status.
    int run(const std::vector<std::size_t>& positions)
    {
        if (!start(positions.front())) return 3;
        for (const std::size_t index : positions)
            if (!run_case(index)) return 0;
        finish_group();
        return 0;
    }

private:
    /// How one half of a case (CaseRunner::start or finish) ended.
    enum class Step { done, failed, poisoned };

    bool start(std::size_t first_position);
    bool run_case(std::size_t index);
    Step failure_of(std::size_t index, const std::exception_ptr& error, CaseResult& failure) const;
    Step guarded(std::size_t index, const std::function<void()>& step, CaseResult& failure) const;
    bool finish_one(std::size_t index, CaseRunner::Staged staged);
    bool finish_batch(std::size_t first, std::size_t end);
    bool finish_group();
    void send(std::size_t index, const CaseResult& result) const { events_.done(index, result); }

    const std::vector<SuiteWork>& work_;
    const std::vector<WorkItem>& items_;
    const DeviceInfo& device_;
    const RunOptions& options_;
    WorkerEvents events_;
    std::unique_ptr<GpuSession> session_;
    std::unique_ptr<CaseRunner> runner_;
    ReferenceOutputs reference_;
    std::set<std::pair<std::size_t, std::size_t>> failed_reference_points_; // (suite, point)
    std::size_t current_suite_ = 0;
    /// Started cases waiting to be finished, with their positions.
    std::vector<std::pair<std::size_t, CaseRunner::Staged>> group_;
};

/// Creates the context, checks the counters and sets up the case runner for the first item's
/// suite; says so (ready, with where the time went) or why not (fatal, and false).
bool CaseWorker::start(std::size_t first_position)
{
    const SuiteWork& first = work_[items_[first_position].suite];
    current_suite_ = items_[first_position].suite;
    const auto started = Clock::now();
    double context_seconds = 0, check_seconds = 0;
    try {
        session_ = std::make_unique<GpuSession>(device_.ordinal, device_.pci_bus_id);
        context_seconds = std::chrono::duration<double>(Clock::now() - started).count();
        if (options_.profile && !options_.external_profiler)
            if (const auto problem = profile::profiling_problem(session_->context(), session_->info().ordinal))
                throw Error(ErrorKind::environment, "cannot read hardware counters: " + *problem);
        check_seconds = std::chrono::duration<double>(Clock::now() - started).count() - context_seconds;
        RunOptions options = options_;
        options.metrics = first.suite->metrics;
        runner_ = std::make_unique<CaseRunner>(*session_, *first.suite, *first.modules, options);
    } catch (const std::exception& e) {
        events_.fatal(e.what());
        return false;
    }
    events_.ready(std::chrono::duration<double>(Clock::now() - started).count(),
                  {{"context", context_seconds},
                   {"counter check", check_seconds},
                   {"clock", runner_->startup().clock},
                   {"timer", runner_->startup().timer},
                   {"profilers", runner_->startup().profiler}});
    return true;
}

/// Starts the case at `index`, or says why it cannot run; a case to profile joins the group.
/// Returns false when the context is unusable: the parent then starts a fresh worker for the cases
/// not reported.
bool CaseWorker::run_case(std::size_t index)
{
    const WorkItem& item = items_[index];
    const suite::Suite& suite = *work_[item.suite].suite;
    const suite::Case& c = case_of(work_, item);
    const bool is_reference = is_reference_case(work_, item);
    if (!is_reference && failed_reference_points_.contains({item.suite, c.point})) {
        send(index, unverifiable_case(suite, c, "the reference variant failed at this point"));
        return true;
    }
    const bool next_suite = item.suite != current_suite_;
    if (next_suite && !options_.groups_span_suites && !finish_group()) return false;
    if (group_.size() >= max_group_cases && !finish_group()) return false;
    // A staged case keeps its suite, which finish() takes up again: the runner is set to this
    // case's suite after the group before it was finished.
    runner_->use_suite(suite, *work_[item.suite].modules);
    current_suite_ = item.suite;
    events_.begin(index);
    CaseRunner::Staged staged;
    const Step end = guarded(
        index, [&] { staged = runner_->start(c, reference_, work_[item.suite].settings->budget_s); }, staged.result);
    if (is_reference && case_status_fails(staged.result.status)) failed_reference_points_.insert({item.suite, c.point});
    if (end == Step::done && staged.profile) {
        group_.emplace_back(index, std::move(staged));
        return true;
    }
    send(index, staged.result);
    return end != Step::poisoned;
}

/// A failure of the case itself (`error`, thrown by one half of it) as its result.
CaseWorker::Step CaseWorker::failure_of(std::size_t index, const std::exception_ptr& error, CaseResult& failure) const
{
    const WorkItem& item = items_[index];
    const suite::Suite& suite = *work_[item.suite].suite;
    try {
        std::rethrow_exception(error);
    } catch (const CudaError& e) {
        failure = base_result(suite, case_of(work_, item));
        const bool poisoned = e.poisons_context();
        failure.status = poisoned ? CaseStatus::fault : CaseStatus::launch_error;
        failure.message = poisoned ? fmt::format("kernel fault: {}", e.what()) : e.what();
        return poisoned ? Step::poisoned : Step::failed;
    } catch (const std::exception& e) {
        failure = base_result(suite, case_of(work_, item));
        failure.status = CaseStatus::launch_error;
        failure.message = e.what();
        return Step::failed;
    }
}

CaseWorker::Step CaseWorker::guarded(std::size_t index, const std::function<void()>& step, CaseResult& failure) const
{
    try {
        step();
        return Step::done;
    } catch (...) {
        return failure_of(index, std::current_exception(), failure);
    }
}

/// Finishes one staged case; false when the context is unusable.
bool CaseWorker::finish_one(std::size_t index, CaseRunner::Staged staged)
{
    events_.begin(index);
    CaseResult result;
    const Step end = guarded(
        index, [&] { result = runner_->finish(std::move(staged)); }, result);
    send(index, result);
    return end != Step::poisoned;
}

/// The group's entries [first, end), whose noisy counters are measured at once. Where one fails,
/// it fails alone and the others are measured again one by one; where CUPTI recorded the batch only
/// in part, every case is. False when the context is unusable.
bool CaseWorker::finish_batch(std::size_t first, std::size_t end)
{
    std::vector<CaseRunner::Staged> batch;
    for (std::size_t k = first; k < end; ++k) batch.push_back(group_[k].second);
    std::size_t turn = 0;
    std::optional<std::vector<CaseResult>> results;
    std::exception_ptr error;
    try {
        results = runner_->finish_batch(batch, [&](std::size_t k) {
            turn = k;
            events_.begin(group_[first + k].first);
        });
    } catch (...) {
        error = std::current_exception();
    }
    if (!error && results) {
        for (std::size_t k = 0; k < results->size(); ++k) send(group_[first + k].first, (*results)[k]);
        return true;
    }
    if (!error) {
        for (std::size_t k = first; k < end; ++k) {
            group_[k].second.result.cost.profile.unbatched = 1;
            if (!finish_one(group_[k].first, std::move(group_[k].second))) return false;
        }
        return true;
    }
    CaseResult failure;
    const std::size_t failed = group_[first + turn].first;
    const Step step = failure_of(failed, error, failure);
    send(failed, failure);
    if (step == Step::poisoned) return false;
    for (std::size_t k = first; k < end; ++k)
        if (k != first + turn && !finish_one(group_[k].first, std::move(group_[k].second))) return false;
    return true;
}

/// Finishes every staged case, in batches where they can share a measurement; false when the
/// context is unusable.
bool CaseWorker::finish_group()
{
    // Library calls last: their counters are never cached, so in a run that reuses cached
    // counters they take the full counter profiler, the others the noisy one, and each change
    // of profiler costs a turn.
    std::stable_partition(group_.begin(), group_.end(),
                          [](const auto& entry) { return suite::runs_module_kernels(entry.second.variant->kind); });
    for (std::size_t i = 0; i < group_.size();) {
        std::size_t end = i;
        while (end < group_.size() && end - i < max_batch_cases && runner_->batchable(group_[end].second) &&
               group_[end].second.suite == group_[i].second.suite)
            ++end;
        if (end - i >= 2) {
            if (!finish_batch(i, end)) return false;
            i = end;
        } else {
            if (!finish_one(group_[i].first, std::move(group_[i].second))) return false;
            ++i;
        }
    }
    group_.clear();
    return true;
}

} // namespace

CaseResult unverifiable_case(const suite::Suite& suite, const suite::Case& c, const std::string& why)
{
    CaseResult r = base_result(suite, c);
    r.status = CaseStatus::failed_verification;
    r.message = "not run, cannot verify: " + why;
    return r;
}

std::vector<CaseResult> run_isolated(const std::vector<SuiteWork>& work, const std::vector<WorkItem>& items,
                                     const DeviceInfo& device, const RunOptions& options, const RunObserver& observer)
{
    std::vector<CaseResult> results(items.size());
    std::set<std::pair<std::size_t, std::size_t>> failed_reference_points; // (suite, point)
    const auto finish = [&](std::size_t position, CaseResult r) {
        const WorkItem& item = items[position];
        if (is_reference_case(work, item) && case_status_fails(r.status))
            failed_reference_points.insert({item.suite, case_of(work, item).point});
        results[position] = std::move(r);
        if (observer.on_result) observer.on_result(position, results[position]);
    };

    // One worker at a time runs the cases left; a case that kills or hangs its worker fails, and a
    // new worker takes the rest.
    SupervisedWork supervised;
    supervised.items = items.size();
    supervised.worker = [&](int fd, const std::vector<std::size_t>& positions) {
        return CaseWorker(work, items, device, options, fd).run(positions);
    };
    // A case has its suite's timeout; between cases the worker starts the next or finishes staged
    // ones, which may be any suite's: as long as the longest.
    double longest_s = 0;
    for (const auto& w : work) longest_s = std::max(longest_s, w.settings->timeout_s);
    supervised.deadline_s = [&](WorkerEventKind kind, std::size_t position) -> std::optional<double> {
        switch (kind) {
        case WorkerEventKind::begin: return work[items[position].suite].settings->timeout_s;
        case WorkerEventKind::done:
        case WorkerEventKind::failed: return longest_s;
        // Not asked: a case sends no points, and the supervisor deals with ready and fatal itself.
        case WorkerEventKind::point:
        case WorkerEventKind::fatal:
        case WorkerEventKind::ready: return std::nullopt;
        }
        return std::nullopt;
    };
    supervised.select = [&](const std::vector<std::size_t>& left) {
        std::vector<std::size_t> pending;
        for (const std::size_t i : left) {
            const suite::Case& c = case_of(work, items[i]);
            if (!is_reference_case(work, items[i]) && failed_reference_points.contains({items[i].suite, c.point}))
                finish(i,
                       unverifiable_case(*work[items[i].suite].suite, c, "the reference variant failed at this point"));
            else
                pending.push_back(i);
        }
        return pending;
    };

    WorkerHooks hooks;
    hooks.on_ready = [&](const WorkerEvent& ready) {
        if (observer.on_worker_ready) observer.on_worker_ready(ready.seconds, ready.parts);
    };
    hooks.on_begin = observer.on_begin;
    hooks.on_done = [&](std::size_t position, const nlohmann::json& outcome) {
        finish(position, outcome.get<CaseResult>());
    };
    hooks.on_lost = [&](std::size_t position, const WorkerExit& exit) {
        const WorkItem& item = items[position];
        CaseResult r = base_result(*work[item.suite].suite, case_of(work, item));
        if (exit.timed_out) {
            r.status = CaseStatus::timeout;
            r.message = fmt::format("did not finish within {:g} s; its worker was killed",
                                    work[item.suite].settings->timeout_s);
        } else {
            r.status = CaseStatus::fault;
            r.message = fmt::format("the worker process died while running this case: {}", describe_exit(exit.status));
        }
        finish(position, std::move(r));
    };

    const SupervisedEnd end = supervise_workers(supervised, hooks);
    if (!end.fatal.empty()) throw Error(ErrorKind::environment, end.fatal);
    if (end.stalled)
        throw Error(
            ErrorKind::environment,
            end.stalled->timed_out
                ? fmt::format("a worker did not start within {:g} s", supervised.startup_timeout_s)
                : fmt::format("a worker failed before running any case: {}", describe_exit(end.stalled->status)));
    return results;
}

} // namespace harness::run
