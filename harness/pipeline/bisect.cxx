#include "harness/pipeline/bisect.hxx"

#include "harness/compare/baseline_file.hxx"
#include "harness/compare/compare_run.hxx"
#include "harness/compare/mann_whitney.hxx"
#include "harness/compare/rules.hxx"
#include "harness/compile/static_tier.hxx"
#include "harness/core/child_process.hxx"
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

/// The first line of a message, shortened for a progress line.
std::string first_line(const std::string& text)
{
    std::string line = text.substr(0, text.find('\n'));
    if (line.size() > 160) line = line.substr(0, 157) + "...";
    return escape_control_characters(line);
}

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
            e.suite = suite::load_suite(suite_file);
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
        // Messages name files as they are in the commit, not in the temporary worktree.
        const auto in_commit = [&](std::string text) {
            const std::string prefix = tree.path().string() + "/";
            for (auto at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at))
                text.erase(at, prefix.size());
            return text;
        };
        // Time: while the verdict against both ends is unsure, another run, up to the limit.
        int target = std::max(rounds, 1);
        for (int round = 0; round < target; ++round) {
            if (!measure(e, cases)) {
                e.why_skipped = in_commit(e.why_skipped);
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
                SuiteRunOptions options;
                options.device = request_.device;
                options.profile = !timed();
                options.resample_rounds = 0;
                for (const auto& c : cases)
                    options.only_cases.emplace_back(e.suite->variants[c.variant].name, c.params_text);
                results = run_suite_gpu(*e.suite, *device_, options, request_.cache).results;
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

/// The suite's path inside `repository`, from the path given: relative to the repository's top
/// when the file exists here, else taken as such; refused when it leads outside.
fs::path suite_in_repository(const fs::path& suite, const GitRepository& repository)
{
    std::error_code ec;
    fs::path path = suite;
    if (fs::is_regular_file(suite, ec)) {
        const fs::path given = fs::absolute(suite, ec);
        const fs::path top = fs::weakly_canonical(repository.top(), ec);
        path = fs::weakly_canonical(given.parent_path(), ec).lexically_relative(top) / given.filename();
    }
    path = path.lexically_normal();
    if (path.is_absolute() || path.empty() || *path.begin() == "..")
        throw Error(ErrorKind::bad_input,
                    fmt::format("{}: not inside the git repository at {}", suite.string(), repository.top().string()));
    return path;
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

} // namespace

const char* bisect_outcome_name(BisectOutcome outcome)
{
    switch (outcome) {
    case BisectOutcome::found: return "found";
    case BisectOutcome::range: return "range";
    case BisectOutcome::unchanged: return "unchanged";
    }
    return "unchanged";
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
    // The repository: the one holding the suite file when it exists here, else the current folder's.
    std::error_code ec;
    const bool here = fs::is_regular_file(request.suite, ec);
    GitRepository repository =
        GitRepository::containing(here ? fs::absolute(request.suite, ec).parent_path() : fs::current_path());
    const fs::path suite_path = suite_in_repository(request.suite, repository);

    const auto resolve = [&](const std::string& option, const std::string& rev) {
        auto hash = repository.resolve_commit(rev);
        if (!hash)
            throw Error(ErrorKind::bad_input, fmt::format("{} {}: no such commit in {}", option, rev.substr(0, 80),
                                                          repository.top().string()));
        return *hash;
    };
    BisectResult result;
    result.suite = suite_path.generic_string();
    result.good = repository.describe(resolve("--good", request.good));
    result.bad = repository.describe(resolve("--bad", request.bad));
    const std::vector<std::string> commits = repository.first_parent_range(result.good.hash, result.bad.hash);
    result.commits = commits.size();
    if (commits.empty() || commits.back() != result.bad.hash)
        throw Error(ErrorKind::bad_input,
                    fmt::format("--bad {} does not follow --good {} on its first-parent line: nothing to bisect",
                                request.bad, request.good));
    for (const auto* end : {&result.good, &result.bad})
        if (!repository.has_file(end->hash, suite_path))
            throw Error(ErrorKind::bad_input, fmt::format("{}: not in commit {} ({})", result.suite,
                                                          end->hash.substr(0, 12), first_line(end->subject)));

    SuiteRunOptions device_options;
    device_options.static_only = request.static_only;
    device_options.device = request.device;
    std::optional<run::DeviceInfo> device = choose_device(device_options);
    result.mode = device ? "gpu" : "static";
    if (!device && is_time_metric(request.metric))
        throw Error(ErrorKind::bad_input,
                    fmt::format("--metric {}: time is measured on a GPU only, and this bisect runs the static tier",
                                request.metric));

    Bisector bisector(request, std::move(repository), suite_path, device);
    const bool timed = bisector.timed();
    const auto record = [&](const CommitInfo& commit, const std::string& role, const Evaluation& e,
                            const std::string& verdict, const std::string& note, double wall) {
        result.steps.push_back({commit.hash, role, verdict, note, e.runs, wall});
        result.runs += e.runs;
        log << fmt::format("harness bisect: {} {}: {}{}\n", role, describe_step(commit), verdict,
                           note.empty() ? "" : " (" + note + ")");
        log.flush();
    };
    const auto time_note = [](const std::vector<double>& samples) {
        return fmt::format("median {:.3f} us of {} samples", median_or_zero(samples), samples.size());
    };

    // The good end: the figures every step is compared with.
    auto t0 = std::chrono::steady_clock::now();
    log << fmt::format("harness bisect: {} commits from {} to {} ({} tier)\n", commits.size(),
                       describe_step(result.good), describe_step(result.bad), result.mode);
    const int end_rounds = timed ? 2 : 1;
    Evaluation good = bisector.evaluate(result.good.hash, end_rounds);
    if (!good.suite || good.results.empty())
        throw Error(ErrorKind::bad_input, fmt::format("the cases do not run at the good commit {}: {}",
                                                      result.good.hash.substr(0, 12), good.why_skipped));
    record(result.good, "good", good, "good", timed ? time_note(good.samples) : "", seconds_since(t0));
    const Figures good_figures = figures_of(good.results, request.metric);
    if (good_figures.empty())
        throw Error(ErrorKind::bad_input, fmt::format("the good commit has no {} figure for the cases",
                                                      request.metric.empty() ? "exact" : request.metric));
    for (const auto& [key, value] : good_figures)
        if (std::find(result.metrics.begin(), result.metrics.end(), key.metric) == result.metrics.end())
            result.metrics.push_back(key.metric);

    // Both ends are run before any step. Time needs the bad end's samples, since a step is judged
    // against both; exact figures need the bad end to differ from the good one, or there is no
    // change to find: a change and its revert between equal ends would otherwise be "found".
    std::optional<Evaluation> bad;
    if (!timed) {
        t0 = std::chrono::steady_clock::now();
        bad = bisector.evaluate(result.bad.hash, 1);
        if (!bad->suite || bad->results.empty())
            throw Error(ErrorKind::bad_input, fmt::format("the cases do not run at the bad commit {}: {}",
                                                          result.bad.hash.substr(0, 12), bad->why_skipped));
        bad->probe = compare_exact(good_figures, figures_of(bad->results, request.metric));
        const char* verdict = bad->probe == Probe::same        ? "same as good"
                              : bad->probe == Probe::different ? "bad"
                                                               : "skipped";
        record(result.bad, "bad", *bad, verdict, bad->probe == Probe::skipped ? "none of the figures was measured" : "",
               seconds_since(t0));
        if (bad->probe == Probe::skipped)
            throw Error(ErrorKind::bad_input,
                        fmt::format("the bad commit {} measures none of the good commit's {} figures",
                                    result.bad.hash.substr(0, 12), request.metric.empty() ? "exact" : request.metric));
        if (bad->probe == Probe::same) {
            result.reason = "the figures at the bad commit are those of the good one";
            result.wall_s = seconds_since(started);
            return result;
        }
    }
    if (timed) {
        t0 = std::chrono::steady_clock::now();
        bad = bisector.evaluate(result.bad.hash, end_rounds);
        if (bad->samples.empty())
            throw Error(ErrorKind::bad_input, fmt::format("the case does not run at the bad commit {}: {}",
                                                          result.bad.hash.substr(0, 12), bad->why_skipped));
        record(result.bad, "bad", *bad, "bad", time_note(bad->samples), seconds_since(t0));
        if (compare::compare_samples(good.samples, bad->samples) != compare::StepVerdict::different) {
            result.reason = fmt::format("the time at the good commit ({:.3f} us) and the bad one ({:.3f} us) cannot "
                                        "be told apart",
                                        median_or_zero(good.samples), median_or_zero(bad->samples));
            result.wall_s = seconds_since(started);
            return result;
        }
    }

    std::map<std::size_t, Evaluation> evaluated;
    const auto probe = [&](std::size_t i) -> Probe {
        const bool is_bad = i + 1 == commits.size();
        const CommitInfo commit = is_bad ? result.bad : bisector.repository().describe(commits[i]);
        if (is_bad && bad) {
            evaluated[i] = *bad;
            return Probe::different;
        }
        const auto t = std::chrono::steady_clock::now();
        Evaluation e =
            timed ? bisector.evaluate(commits[i], 1, &good.samples, &bad->samples) : bisector.evaluate(commits[i], 1);
        std::string note = e.why_skipped;
        if (!e.results.empty()) {
            if (timed) {
                const auto v = compare::time_step_verdict(good.samples, bad->samples, e.samples);
                e.probe = v == compare::StepVerdict::same        ? Probe::same
                          : v == compare::StepVerdict::different ? Probe::different
                                                                 : Probe::skipped;
                note = time_note(e.samples) + (v == compare::StepVerdict::unsure ? ": still unsure" : "");
            } else {
                e.probe = compare_exact(good_figures, figures_of(e.results, request.metric));
                if (e.probe == Probe::skipped) note = "none of the figures was measured";
            }
        }
        const char* verdict = e.probe == Probe::same ? "same" : e.probe == Probe::different ? "different" : "skipped";
        record(commit, is_bad ? "bad" : "step", e, verdict, note, seconds_since(t));
        const Probe p = e.probe;
        evaluated[i] = std::move(e);
        return p;
    };
    const SearchResult found = search_first_change(commits.size(), probe);
    result.outcome = found.outcome;
    result.wall_s = seconds_since(started);
    if (found.bad_skipped)
        throw Error(ErrorKind::bad_input,
                    fmt::format("the cases do not run at the bad commit {}: {}", result.bad.hash.substr(0, 12),
                                evaluated[commits.size() - 1].why_skipped));
    if (found.outcome == BisectOutcome::unchanged) {
        result.reason = "the figures at the bad commit are those of the good one";
        return result;
    }
    if (found.outcome == BisectOutcome::range) {
        for (std::size_t i = found.first; i <= found.last; ++i)
            result.candidates.push_back(bisector.repository().describe(commits[i]));
        result.reason = "only skipped commits remain between the last commit like the good one and the first unlike it";
        return result;
    }

    result.first = bisector.repository().describe(commits[found.first]);
    result.changes = changes_at_first(good, good_figures, evaluated.at(found.first), request.metric, timed);
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
                        {"mode", r.mode},
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
                              {"role", s.role},
                              {"verdict", s.verdict},
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
                       r.wall_s, r.mode);
}

} // namespace harness::pipeline
