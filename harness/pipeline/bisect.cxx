#include "harness/pipeline/bisect.hxx"

#include "harness/compare/baseline_file.hxx"
#include "harness/compare/compare_run.hxx"
#include "harness/compare/mann_whitney.hxx"
#include "harness/compare/rules.hxx"
#include "harness/compile/static_tier.hxx"
#include "harness/core/child_process.hxx"
#include "harness/core/enum_names.hxx"
#include "harness/core/error.hxx"
#include "harness/core/metrics.hxx"
#include "harness/core/stats.hxx"
#include "harness/core/stopwatch.hxx"
#include "harness/core/text.hxx"
#include "harness/pipeline/run_suite.hxx"
#include "harness/suite/sweep.hxx"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>

namespace harness::pipeline {

namespace fs = std::filesystem;

namespace {

/// The median of a step's time samples; 0 for a step whose case was not timed.
double median_or_zero(std::span<const double> samples)
{
    return samples.empty() ? 0.0 : median(samples);
}

/// A figure's identity across commits: case, architecture, metric.
struct FigureKey {
    std::string variant, params, arch, metric;
    auto operator<=>(const FigureKey&) const = default;
};

using Figures = std::map<FigureKey, double>;

/// What running the chosen cases at one commit gave.
struct Evaluation {
    Probe probe = Probe::skipped;
    std::string why_skipped;
    std::optional<suite::Suite> suite;
    std::vector<CaseResult> results; ///< the chosen cases only
    std::vector<double> samples;     ///< time: the chosen case's samples, every run pooled
    int runs = 0;
};

bool is_time_metric(const std::string& name)
{
    return name == metric::time_median || name == metric::time_min;
}

/// The state the steps share: the repository, the suite's place in it, how to run.
class Bisector {
public:
    Bisector(const BisectRequest& request, GitRepository repository, fs::path suite_path,
             std::optional<run::DeviceInfo> device)
        : request_(request), repository_(std::move(repository)), suite_path_(std::move(suite_path)),
          device_(std::move(device))
    {
    }

    bool timed() const { return is_time_metric(request_.metric); }

    /// Runs the chosen cases at `commit` (in a worktree of its own); time: `rounds` runs, or while
    /// unsure against both ends up to the request's limit when `ends` are given.
    Evaluation evaluate(const std::string& commit, int rounds, const std::vector<double>* good_samples = nullptr,
                        const std::vector<double>* bad_samples = nullptr)
    {
        Evaluation e;
        Worktree tree(repository_, commit);
        const fs::path suite_file = tree.path() / suite_path_;
        if (!fs::exists(suite_file)) {
            e.why_skipped = fmt::format("no {} at this commit", suite_path_.generic_string());
            return e;
        }
        if (!request_.build_command.empty()) {
            const ProgramOutput built = run_program({"/bin/sh", "-c", request_.build_command}, tree.path(), false);
            if (built.exit_code != 0) {
                e.why_skipped = fmt::format("--build failed (exit status {})", built.exit_code);
                return e;
            }
        }
        try {
            e.suite =
                suite::load_suite(suite_file, {.sources_anywhere = false,
                                               .working_folder = working_folder_in(tree.path(), repository_.top())});
        } catch (const Error& error) {
            e.why_skipped = "the suite does not load: " + first_line(error.what());
            return e;
        }
        std::vector<suite::Case> cases;
        for (auto& c : suite::expand_cases(*e.suite))
            if (chosen(e.suite->variants[c.variant].name, c.params_text)) cases.push_back(std::move(c));
        if (cases.empty()) {
            e.why_skipped = "the suite has no such case at this commit";
            return e;
        }
        // Time: while the verdict against both ends is unsure, another run, up to the limit.
        int target = std::max(rounds, 1);
        for (int round = 0; round < target; ++round) {
            if (!measure(e, cases)) {
                e.why_skipped = in_commit(e.why_skipped, tree.path()); // files as the commit names them
                return e;
            }
            if (good_samples && bad_samples && round + 1 == target && target < request_.max_time_rounds &&
                compare::time_step_verdict(*good_samples, *bad_samples, e.samples) == compare::StepVerdict::unsure)
                ++target;
        }
        return e;
    }

    const GitRepository& repository() const { return repository_; }

private:
    bool chosen(const std::string& variant, const std::string& params) const
    {
        if (request_.cases.empty()) return true;
        return std::any_of(request_.cases.begin(), request_.cases.end(),
                           [&](const auto& c) { return c.first == variant && c.second == params; });
    }

    /// One run of `cases`; false (with the reason in `e`) when they did not run cleanly.
    bool measure(Evaluation& e, const std::vector<suite::Case>& cases)
    {
        std::vector<CaseResult> results;
        try {
            if (!device_) {
                const auto& archs = request_.archs.empty() ? e.suite->archs : request_.archs;
                results = compile::run_static_tier(*e.suite, cases, archs, request_.cache);
            } else {
                run::RunSettings options;
                options.device = request_.device;
                options.profile = !timed();
                options.resample_rounds = 0;
                for (const auto& c : cases)
                    options.only_cases.emplace_back(e.suite->variants[c.variant].name, c.params_text);
                results =
                    run_suite_gpu(*e.suite, *device_, run::resolve_settings(options, *e.suite), request_.cache).results;
            }
        } catch (const Error& error) {
            e.why_skipped = first_line(error.what());
            return false;
        }
        ++e.runs;
        std::erase_if(results, [&](const CaseResult& r) { return !chosen(r.variant, r.params_text); });
        for (const auto& r : results)
            if (r.status != CaseStatus::passed) {
                e.why_skipped = fmt::format("{} {}: {}: {}", r.variant, r.params_text, case_status_name(r.status),
                                            first_line(r.message));
                return false;
            }
        if (results.empty()) {
            e.why_skipped = "the case did not run";
            return false;
        }
        if (timed()) {
            if (results.size() != 1) throw Error(ErrorKind::bad_input, "bisecting time needs one case: pass --case");
            const auto& s = results.front().time_samples_us;
            e.samples.insert(e.samples.end(), s.begin(), s.end());
        }
        e.results = std::move(results);
        return true;
    }

    const BisectRequest& request_;
    GitRepository repository_;
    fs::path suite_path_;
    std::optional<run::DeviceInfo> device_;
};

/// The figures of `results` the bisect compares: `metric`, or every exact one.
Figures figures_of(const std::vector<CaseResult>& results, const std::string& metric)
{
    Figures figures;
    for (const auto& r : results)
        for (const auto& m : r.metrics) {
            const auto info = find_metric(m.name);
            const bool wanted = metric.empty() ? info && info->stability == Stability::exact : m.name == metric;
            if (wanted) figures[{r.variant, r.params_text, r.arch, m.name}] = m.value;
        }
    return figures;
}

/// Same when every figure the good end has is equal here, different when one differs; skipped
/// when the step has none of them.
Probe compare_exact(const Figures& good, const Figures& step)
{
    bool any = false;
    for (const auto& [key, value] : good) {
        const auto it = step.find(key);
        if (it == step.end()) continue;
        any = true;
        if (it->second != value) return Probe::different;
    }
    return any ? Probe::same : Probe::skipped;
}

/// The comparison's own words for a change: the case at the first changed commit compared with a
/// baseline made of the good commit's figures (every figure gated, so drift names its cliff).
void explain(FigureChange& change, const CaseResult& before, const CaseResult& after, const suite::Suite& suite,
             const std::vector<double>& before_samples)
{
    compare::BaselineFile baseline;
    for (const auto& m : before.metrics)
        baseline.rows.push_back({before.variant, before.params_text, m.name, m.value,
                                 is_time_metric(m.name) ? before_samples : std::vector<double>{}, ""});
    CaseResult judged = after;
    compare::CompareOptions options;
    options.strict = true;
    const bool noisy = is_time_metric(change.metric);
    compare::compare_case(judged, suite, noisy ? nullptr : &baseline, noisy ? &baseline : nullptr, "", options);
    for (const auto& v : judged.verdicts)
        if (v.metric == change.metric && !v.message.empty()) {
            change.message = v.message;
            change.location = v.location;
            return;
        }
}

std::string describe_step(const CommitInfo& c)
{
    return fmt::format("{} {}", c.hash.substr(0, 12), first_line(c.subject));
}

/// Refuses a --metric that names no metric, or a noisy one other than time.
void check_metric_option(const std::string& metric)
{
    if (metric.empty()) return;
    const auto known = find_metric(metric);
    if (!known)
        throw Error(ErrorKind::bad_input,
                    fmt::format("--metric {}: no such metric (`harness metrics` lists them)", metric));
    if (known->stability == Stability::noisy && !is_time_metric(metric))
        throw Error(
            ErrorKind::bad_input,
            fmt::format("--metric {}: of the noisy figures, bisect judges time_median and time_min only", metric));
}

/// What moved between the good commit and the first unlike it: every exact figure that differs,
/// or the time, each explained from the two commits' results where they hold its case.
std::vector<FigureChange> changes_at_first(const Evaluation& good, const Figures& good_figures, const Evaluation& after,
                                           const std::string& metric, bool timed)
{
    std::vector<FigureChange> changes;
    const Figures after_figures = figures_of(after.results, metric);
    for (const auto& [key, before] : good_figures) {
        const auto it = after_figures.find(key);
        if (it == after_figures.end()) continue;
        FigureChange change{key.variant, key.params, key.arch, key.metric, before, it->second, "", ""};
        if (timed) {
            change.before = median_or_zero(good.samples);
            change.after = median_or_zero(after.samples);
        } else if (it->second == before) {
            continue;
        }
        const auto find_result = [&](const std::vector<CaseResult>& results) -> const CaseResult* {
            for (const auto& r : results)
                if (r.variant == key.variant && r.params_text == key.params && r.arch == key.arch) return &r;
            return nullptr;
        };
        const CaseResult* b = find_result(good.results);
        const CaseResult* a = find_result(after.results);
        if (a && b && after.suite) explain(change, *b, *a, *after.suite, good.samples);
        changes.push_back(std::move(change));
    }
    return changes;
}

/// The repository holding the suite, the suite's path in it, and the first-parent commits after
/// the good end up to the bad one.
struct BisectRange {
    GitRepository repository;
    fs::path suite_path;
    std::vector<std::string> commits;
};

/// Resolves the request's ends into `result` (suite, good, bad, commits) and checks the range:
/// Error(bad_input) for an unknown revision, a bad end not after the good one on its first-parent
/// line, or a suite missing at either end.
BisectRange resolve_range(const BisectRequest& request, BisectResult& result)
{
    // The repository: the one holding the suite file when it exists here, else the current folder's.
    std::error_code ec;
    const bool here = fs::is_regular_file(request.suite, ec);
    GitRepository repository =
        GitRepository::containing(here ? fs::absolute(request.suite, ec).parent_path() : fs::current_path());
    fs::path suite_path = path_in_repository(request.suite, repository);

    const auto resolve = [&](const std::string& option, const std::string& rev) {
        auto hash = repository.resolve_commit(rev);
        if (!hash)
            throw Error(ErrorKind::bad_input, fmt::format("{} {}: no such commit in {}", option, rev.substr(0, 80),
                                                          repository.top().string()));
        return *hash;
    };
    result.suite = suite_path.generic_string();
    result.good = repository.describe(resolve("--good", request.good));
    result.bad = repository.describe(resolve("--bad", request.bad));
    std::vector<std::string> commits = repository.first_parent_range(result.good.hash, result.bad.hash);
    result.commits = commits.size();
    if (commits.empty() || commits.back() != result.bad.hash)
        throw Error(ErrorKind::bad_input,
                    fmt::format("--bad {} does not follow --good {} on its first-parent line: nothing to bisect",
                                request.bad, request.good));
    for (const auto* end : {&result.good, &result.bad})
        if (!repository.has_file(end->hash, suite_path))
            throw Error(ErrorKind::bad_input, fmt::format("{}: not in commit {} ({})", result.suite,
                                                          end->hash.substr(0, 12), first_line(end->subject)));
    return {std::move(repository), std::move(suite_path), std::move(commits)};
}

/// The GPU the commits run on, or none for the static tier (its mode in `result`); time needs a GPU.
std::optional<run::DeviceInfo> bisect_device(const BisectRequest& request, BisectResult& result)
{
    run::RunSettings device_options;
    device_options.static_only = request.static_only;
    device_options.device = request.device;
    std::optional<run::DeviceInfo> device = choose_device(device_options);
    result.mode = device ? RunMode::gpu : RunMode::static_tier;
    if (!device && is_time_metric(request.metric))
        throw Error(ErrorKind::bad_input,
                    fmt::format("--metric {}: time is measured on a GPU only, and this bisect runs the static tier",
                                request.metric));
    return device;
}

/// The steps of one bisect after its range is resolved: both ends, then the search between them,
/// each commit tested recorded in the result and logged.
class BisectSteps {
public:
    BisectSteps(const BisectRequest& request, Bisector& bisector, std::vector<std::string> commits,
                BisectResult& result, std::ostream& log)
        : request_(request), bisector_(bisector), commits_(std::move(commits)), result_(result), log_(log),
          timed_(bisector.timed())
    {
    }

    /// Runs the good end: the figures every step is compared with.
    void run_good_end()
    {
        const auto t0 = std::chrono::steady_clock::now();
        log_ << fmt::format("harness bisect: {} commits from {} to {} ({} tier)\n", commits_.size(),
                            describe_step(result_.good), describe_step(result_.bad), mode_name(result_.mode));
        good_ = bisector_.evaluate(result_.good.hash, end_rounds());
        if (!good_.suite || good_.results.empty())
            throw Error(ErrorKind::bad_input, fmt::format("the cases do not run at the good commit {}: {}",
                                                          result_.good.hash.substr(0, 12), good_.why_skipped));
        good_.probe = Probe::same;
        record(result_.good, StepRole::good, good_, timed_ ? time_note(good_.samples) : "", seconds_since(t0));
        good_figures_ = figures_of(good_.results, request_.metric);
        if (good_figures_.empty())
            throw Error(ErrorKind::bad_input, fmt::format("the good commit has no {} figure for the cases",
                                                          request_.metric.empty() ? "exact" : request_.metric));
        for (const auto& [key, value] : good_figures_)
            if (std::find(result_.metrics.begin(), result_.metrics.end(), key.metric) == result_.metrics.end())
                result_.metrics.push_back(key.metric);
    }

    /// Runs the bad end; false (the reason in the result) when it shows no change to find. Time
    /// needs the bad end's samples, since a step is judged against both ends; exact figures need
    /// the bad end to differ from the good one, or a change and its revert between equal ends
    /// would be "found".
    bool run_bad_end()
    {
        const auto t0 = std::chrono::steady_clock::now();
        bad_ = bisector_.evaluate(result_.bad.hash, end_rounds());
        if (timed_) {
            if (bad_->samples.empty())
                throw Error(ErrorKind::bad_input, fmt::format("the case does not run at the bad commit {}: {}",
                                                              result_.bad.hash.substr(0, 12), bad_->why_skipped));
            bad_->probe = Probe::different;
            record(result_.bad, StepRole::bad, *bad_, time_note(bad_->samples), seconds_since(t0));
            if (compare::compare_samples(good_.samples, bad_->samples) == compare::StepVerdict::different) return true;
            result_.reason = fmt::format("the time at the good commit ({:.3f} us) and the bad one ({:.3f} us) cannot "
                                         "be told apart",
                                         median_or_zero(good_.samples), median_or_zero(bad_->samples));
            return false;
        }
        if (!bad_->suite || bad_->results.empty())
            throw Error(ErrorKind::bad_input, fmt::format("the cases do not run at the bad commit {}: {}",
                                                          result_.bad.hash.substr(0, 12), bad_->why_skipped));
        bad_->probe = compare_exact(good_figures_, figures_of(bad_->results, request_.metric));
        record(result_.bad, StepRole::bad, *bad_,
               bad_->probe == Probe::skipped ? "none of the figures was measured" : "", seconds_since(t0));
        if (bad_->probe == Probe::skipped)
            throw Error(ErrorKind::bad_input, fmt::format("the bad commit {} measures none of the good commit's {} "
                                                          "figures",
                                                          result_.bad.hash.substr(0, 12),
                                                          request_.metric.empty() ? "exact" : request_.metric));
        if (bad_->probe == Probe::different) return true;
        result_.reason = "the figures at the bad commit are those of the good one";
        return false;
    }

    /// Tests commit `i` of the range against both ends (the search's probe).
    Probe probe(std::size_t i)
    {
        const bool is_bad = i + 1 == commits_.size();
        const CommitInfo commit = is_bad ? result_.bad : bisector_.repository().describe(commits_[i]);
        if (is_bad && bad_) {
            evaluated_[i] = *bad_;
            return Probe::different;
        }
        const auto t = std::chrono::steady_clock::now();
        Evaluation e = timed_ ? bisector_.evaluate(commits_[i], 1, &good_.samples, &bad_->samples)
                              : bisector_.evaluate(commits_[i], 1);
        std::string note = e.why_skipped;
        if (!e.results.empty()) {
            if (timed_) {
                const auto v = compare::time_step_verdict(good_.samples, bad_->samples, e.samples);
                e.probe = v == compare::StepVerdict::same        ? Probe::same
                          : v == compare::StepVerdict::different ? Probe::different
                                                                 : Probe::skipped;
                note = time_note(e.samples) + (v == compare::StepVerdict::unsure ? ": still unsure" : "");
            } else {
                e.probe = compare_exact(good_figures_, figures_of(e.results, request_.metric));
                if (e.probe == Probe::skipped) note = "none of the figures was measured";
            }
        }
        record(commit, is_bad ? StepRole::bad : StepRole::step, e, note, seconds_since(t));
        const Probe p = e.probe;
        evaluated_[i] = std::move(e);
        return p;
    }

    /// The search's outcome in the result: the commit and what moved there, the candidates, or why
    /// none is named.
    void finish(const SearchResult& found)
    {
        result_.outcome = found.outcome;
        if (found.bad_skipped)
            throw Error(ErrorKind::bad_input,
                        fmt::format("the cases do not run at the bad commit {}: {}", result_.bad.hash.substr(0, 12),
                                    evaluated_[commits_.size() - 1].why_skipped));
        switch (found.outcome) {
        case BisectOutcome::unchanged:
            result_.reason = "the figures at the bad commit are those of the good one";
            return;
        case BisectOutcome::range:
            for (std::size_t i = found.first; i <= found.last; ++i)
                result_.candidates.push_back(bisector_.repository().describe(commits_[i]));
            result_.reason =
                "only skipped commits remain between the last commit like the good one and the first unlike it";
            return;
        case BisectOutcome::found:
            result_.first = bisector_.repository().describe(commits_[found.first]);
            result_.changes =
                changes_at_first(good_, good_figures_, evaluated_.at(found.first), request_.metric, timed_);
            return;
        }
    }

    std::size_t commits() const { return commits_.size(); }

private:
    int end_rounds() const { return timed_ ? 2 : 1; }

    static std::string time_note(const std::vector<double>& samples)
    {
        return fmt::format("median {:.3f} us of {} samples", median_or_zero(samples), samples.size());
    }

    void record(const CommitInfo& commit, StepRole role, const Evaluation& e, const std::string& note, double wall)
    {
        result_.steps.push_back({commit.hash, role, e.probe, note, e.runs, wall});
        result_.runs += e.runs;
        log_ << fmt::format("harness bisect: {} {}: {}{}\n", step_role_name(role), describe_step(commit),
                            step_verdict_text(result_.steps.back()), note.empty() ? "" : " (" + note + ")");
        log_.flush();
    }

    const BisectRequest& request_;
    Bisector& bisector_;
    const std::vector<std::string> commits_;
    BisectResult& result_;
    std::ostream& log_;
    const bool timed_;
    Evaluation good_;
    Figures good_figures_;
    std::optional<Evaluation> bad_;
    std::map<std::size_t, Evaluation> evaluated_;
};

// clang-format off
constexpr EnumName<BisectOutcome> outcome_names[] = {
    {BisectOutcome::found, "found"}, {BisectOutcome::range, "range"}, {BisectOutcome::unchanged, "unchanged"}};
constexpr EnumName<StepRole> role_names[] = {{StepRole::good, "good"}, {StepRole::bad, "bad"}, {StepRole::step, "step"}};
constexpr EnumName<Probe> probe_names[] = {
    {Probe::same, "same"}, {Probe::different, "different"}, {Probe::skipped, "skipped"}};
// clang-format on

} // namespace

const char* bisect_outcome_name(BisectOutcome outcome)
{
    return enum_name(outcome_names, outcome, "unchanged");
}

const char* step_role_name(StepRole role)
{
    return enum_name(role_names, role);
}

const char* step_verdict_text(const BisectStep& step)
{
    switch (step.role) {
    case StepRole::good: return "good";
    case StepRole::bad:
        if (step.verdict == Probe::same) return "same as good";
        if (step.verdict == Probe::different) return "bad";
        break;
    case StepRole::step: break;
    }
    return enum_name(probe_names, step.verdict);
}

SearchResult search_first_change(std::size_t n, const std::function<Probe(std::size_t)>& probe)
{
    SearchResult result;
    if (n == 0) return result;
    // Commits up to `lo` are like the good end (lo = -1: none tested); `hi` is the first known
    // different, the bad end until a probe shows one earlier.
    long lo = -1;
    long hi = static_cast<long>(n) - 1;
    bool hi_tested = false;
    std::vector<bool> skipped(n, false);
    for (;;) {
        const long mid = lo + (hi - lo) / 2;
        std::optional<long> pick;
        for (long offset = 0; !pick && offset < hi - lo; ++offset)
            for (const long i : {mid + offset, mid - offset})
                if (i > lo && i < hi && !skipped[static_cast<std::size_t>(i)]) {
                    pick = i;
                    break;
                }
        if (!pick) break;
        switch (probe(static_cast<std::size_t>(*pick))) {
        case Probe::same: lo = *pick; break;
        case Probe::different:
            hi = *pick;
            hi_tested = true;
            break;
        case Probe::skipped: skipped[static_cast<std::size_t>(*pick)] = true; break;
        }
    }
    if (!hi_tested) {
        switch (probe(n - 1)) {
        case Probe::same: return result;
        case Probe::skipped: result.bad_skipped = true; return result;
        case Probe::different: break;
        }
    }
    result.first = static_cast<std::size_t>(lo + 1);
    result.last = static_cast<std::size_t>(hi);
    result.outcome = result.first == result.last ? BisectOutcome::found : BisectOutcome::range;
    return result;
}

BisectResult bisect(const BisectRequest& request, std::ostream& log)
{
    const auto started = std::chrono::steady_clock::now();
    check_metric_option(request.metric);
    BisectResult result;
    BisectRange range = resolve_range(request, result);
    std::optional<run::DeviceInfo> device = bisect_device(request, result);
    Bisector bisector(request, std::move(range.repository), range.suite_path, std::move(device));
    BisectSteps steps(request, bisector, std::move(range.commits), result, log);
    // Both ends are run before any step.
    steps.run_good_end();
    if (steps.run_bad_end())
        steps.finish(search_first_change(steps.commits(), [&](std::size_t i) { return steps.probe(i); }));
    result.wall_s = seconds_since(started);
    return result;
}

nlohmann::json bisect_json(const BisectResult& r)
{
    const auto commit = [](const CommitInfo& c) {
        return nlohmann::json{{"hash", c.hash}, {"subject", c.subject}, {"author_date", c.author_date}};
    };
    nlohmann::json j = {{"schema", "harness-bisect"},
                        {"schema_version", bisect_schema_version},
                        {"harness_version", HARNESS_VERSION},
                        {"suite", r.suite},
                        {"mode", mode_name(r.mode)},
                        {"good", commit(r.good)},
                        {"bad", commit(r.bad)},
                        {"metrics", r.metrics},
                        {"commits", r.commits},
                        {"outcome", bisect_outcome_name(r.outcome)},
                        {"steps_run", r.steps.size()},
                        {"runs", r.runs},
                        {"wall_s", r.wall_s}};
    if (r.outcome == BisectOutcome::found) j["first"] = commit(r.first);
    if (!r.reason.empty()) j["reason"] = r.reason;
    j["candidates"] = nlohmann::json::array();
    for (const auto& c : r.candidates) j["candidates"].push_back(commit(c));
    j["changes"] = nlohmann::json::array();
    for (const auto& c : r.changes)
        j["changes"].push_back({{"variant", c.variant},
                                {"params", c.params},
                                {"arch", c.arch},
                                {"metric", c.metric},
                                {"before", c.before},
                                {"after", c.after},
                                {"message", c.message},
                                {"location", c.location}});
    j["steps"] = nlohmann::json::array();
    for (const auto& s : r.steps)
        j["steps"].push_back({{"commit", s.commit},
                              {"role", step_role_name(s.role)},
                              {"verdict", step_verdict_text(s)},
                              {"note", s.note},
                              {"runs", s.runs},
                              {"wall_s", s.wall_s}});
    return j;
}

void print_bisect(const BisectResult& r, std::ostream& out)
{
    const auto value = [](const std::string& metric, double v) {
        const auto info = find_metric(metric);
        return info ? compare::format_value(*info, v) : fmt::format("{}", v);
    };
    switch (r.outcome) {
    case BisectOutcome::found:
        out << fmt::format("first commit where the figures moved: {} {}\n", r.first.hash, first_line(r.first.subject));
        out << fmt::format("  author date: {}\n", r.first.author_date);
        for (const auto& c : r.changes) {
            out << fmt::format("  {} {} ({}): {} {} -> {}\n", c.variant, c.params, c.arch, c.metric,
                               value(c.metric, c.before), value(c.metric, c.after));
            if (!c.message.empty()) out << fmt::format("    {}\n", escape_control_characters(c.message));
            if (!c.location.empty()) out << fmt::format("    source line: {}\n", c.location);
        }
        break;
    case BisectOutcome::range:
        out << fmt::format("the first commit where the figures moved is one of these {} ({}):\n", r.candidates.size(),
                           r.reason);
        for (const auto& c : r.candidates)
            out << fmt::format("  {} {} ({})\n", c.hash, first_line(c.subject), c.author_date);
        break;
    case BisectOutcome::unchanged: out << fmt::format("no commit found: {}\n", r.reason); break;
    }
    out << fmt::format("{} commits, {} steps, {} runs, {:.1f} s ({} tier)\n", r.commits, r.steps.size(), r.runs,
                       r.wall_s, mode_name(r.mode));
}

} // namespace harness::pipeline
