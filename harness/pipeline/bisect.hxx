#pragma once
// `harness bisect`: the first commit at which a case's figure moved. Each commit tested is checked
// out in a temporary git worktree and this build of the harness runs the chosen cases there (in
// the static tier or on the GPU); a binary search over the first-parent history between a good and
// a bad commit names the commit. Commits where the suite or case is missing or does not compile
// are skipped, as `git bisect skip` does.

#include "harness/compare/bisect_verdict.hxx"
#include "harness/compile/nvrtc_compiler.hxx"
#include "harness/core/case_result.hxx"
#include "harness/core/run_report.hxx"
#include "harness/pipeline/git_repository.hxx"

#include <filesystem>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace harness::pipeline {

/// What to bisect (the options of `harness bisect`).
struct BisectRequest {
    std::filesystem::path suite; ///< an existing suite file, or a path relative to the repository's top
    std::string good, bad;       ///< revisions as the user gave them
    /// (variant, params text) of the cases to run; empty: every case of the suite.
    std::vector<std::pair<std::string, std::string>> cases;
    std::string metric;             ///< empty: every exact figure of the cases
    bool static_only = false;       ///< the static tier even with a GPU
    std::vector<std::string> archs; ///< static tier; empty: the suite's archs at each commit
    std::string build_command;      ///< run through /bin/sh -c in each worktree first; empty: none
    const compile::CompileCache* cache = nullptr;
    int device = 0;
    int max_time_rounds = 4; ///< runs of a step, at most, while its time verdict is unsure
};

/// How a bisect ended.
enum class BisectOutcome {
    found,     ///< one commit is the first whose figure moved
    range,     ///< skipped commits hide which of a few commits it is
    unchanged, ///< the figures are the same at both ends (exit 1)
};

const char* bisect_outcome_name(BisectOutcome outcome);

/// One figure before and after the commit that moved it.
struct FigureChange {
    std::string variant, params, arch, metric;
    double before = 0.0, after = 0.0;
    std::string message;  ///< the comparison's words: "occupancy cliff: registers 32 -> 40 ..."
    std::string location; ///< the source line the harness ties to it, "kernels/x.cu:31", or ""
};

/// What a probe of one commit found, for the search.
enum class Probe { same, different, skipped };

/// Which commit of the range a step tested.
enum class StepRole {
    good, ///< the good end, which every step is compared with
    bad,  ///< the bad end
    step, ///< a commit between them
};

/// "good", "bad", "step", as the log and the JSON write a step's role.
const char* step_role_name(StepRole role);

/// One commit tested.
struct BisectStep {
    std::string commit; ///< full hash
    StepRole role = StepRole::step;
    Probe verdict = Probe::skipped; ///< against the good end (the good end itself: same)
    std::string note;               ///< why it was skipped, or the time medians
    int runs = 0;                   ///< runs of the cases (time: several while unsure)
    double wall_s = 0.0;
};

/// A step's verdict as the log and the JSON write it: "good" for the good end; "bad" or "same as
/// good" for the bad end; "same", "different" or "skipped" for a step (and a bad end not run).
const char* step_verdict_text(const BisectStep& step);

/// What `harness bisect` found.
struct BisectResult {
    BisectOutcome outcome = BisectOutcome::unchanged;
    std::string suite;                   ///< relative to the repository's top
    RunMode mode = RunMode::static_tier; ///< the tier the commits ran in
    CommitInfo good, bad;                ///< the ends, resolved
    std::vector<std::string> metrics;    ///< the figures compared
    std::size_t commits = 0;             ///< first-parent commits after good up to bad
    CommitInfo first;                    ///< outcome found: the commit
    std::vector<CommitInfo> candidates;  ///< outcome range: the commits it may be, oldest first
    std::vector<FigureChange> changes;   ///< outcome found: what moved there
    std::string reason;                  ///< outcome unchanged or range: why no one commit is named
    std::vector<BisectStep> steps;
    int runs = 0;
    double wall_s = 0.0;
};

/// Runs the bisect; progress goes to `log`. Throws Error(bad_input) for an unknown revision, a
/// range without commits, a suite missing at either end, or cases that do not run at the good or
/// bad commit; Error(environment) outside a git work tree or without git.
BisectResult bisect(const BisectRequest& request, std::ostream& log);

/// Where the first change lies among commits 0..n-1 (commit n-1 is the bad end).
struct SearchResult {
    BisectOutcome outcome = BisectOutcome::unchanged;
    std::size_t first = 0, last = 0; ///< found: first == last; range: the commits it may be
    bool bad_skipped = false;        ///< the bad end itself could not be run
};

/// Binary search for the first commit that differs from the good end, skipping commits `probe`
/// cannot run by trying their neighbours nearest the midpoint. The bad end is probed only when
/// the search ends on it. At most ceil(log2(n)) + 1 probes when none is skipped.
SearchResult search_first_change(std::size_t n, const std::function<Probe(std::size_t)>& probe);

/// The result as JSON (schema "harness-bisect").
nlohmann::json bisect_json(const BisectResult& result);
inline constexpr int bisect_schema_version = 1;

/// The result as the console shows it.
void print_bisect(const BisectResult& result, std::ostream& out);

} // namespace harness::pipeline
