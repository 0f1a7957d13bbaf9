// `harness history`: record runs into a history store, list it, and render a suite's history page.

#include "harness/cli/commands.hxx"
#include "harness/cli/exit_codes.hxx"
#include "harness/cli/options.hxx"
#include "harness/core/atomic_file.hxx"
#include "harness/core/error.hxx"
#include "harness/core/git.hxx"
#include "harness/core/input_files.hxx"
#include "harness/history/history_page.hxx"
#include "harness/history/history_store.hxx"

#include <fmt/format.h>

namespace harness::cli {

namespace {

namespace fs = std::filesystem;

void print_problems(const history::IndexRefresh& refresh)
{
    for (const auto& p : refresh.problems) fmt::print(stderr, "harness history: left out: {}\n", p);
}

int record_action(const std::vector<std::string>& args)
{
    CLI::App app{"Record runs (results.json, or the merge of a run's shards) into a history store. Each run becomes "
                 "one new file named by its content; concurrent jobs never touch the same file.",
                 "harness history record"};
    std::string store, commit, repo = ".";
    std::vector<std::string> inputs;
    app.add_option("--store", store, "the history store (a folder; created when missing)")->required();
    app.add_option("results", inputs, "results.json of each run")->required()->check(CLI::ExistingFile);
    app.add_option("--commit", commit,
                   "the commit the runs measured (default: their git_revision, else `git rev-parse HEAD`)");
    app.add_option("--repo", repo, "the git repository that commits are resolved in (default: the working folder)");
    if (auto code = parse(app, args)) return *code;

    const history::HistoryStore history_store(store);
    for (const auto& input : inputs) {
        const RunReport run = read_results_json(input);
        if (run.shard.sharded())
            throw Error(ErrorKind::bad_input, fmt::format("{} holds shard {} of a run: record the merged run "
                                                          "(harness merge), so that every case is in it",
                                                          input, run.shard.text()));
        // The history keeps each commit's figures; a run of a tree with changes has none of them.
        if (run.git_revision.ends_with(dirty_mark))
            throw Error(ErrorKind::bad_input,
                        fmt::format("{} was made from a working tree with changes to tracked files (revision {}): its "
                                    "figures are not those of any commit, so the history does not record it; commit "
                                    "the changes and run again",
                                    input, run.git_revision.substr(0, max_name_length)));
        std::string revision = !commit.empty() ? commit : run.git_revision;
        std::optional<std::string> resolved =
            revision.empty() ? history::resolve_commit(repo, "HEAD") : history::resolve_commit(repo, revision);
        if (!resolved && revision.empty())
            throw Error(ErrorKind::bad_input,
                        fmt::format("{}: no commit: it names no git_revision and {} is not a git repository; "
                                    "give --commit",
                                    input, repo));
        const std::string hash = resolved.value_or(revision);
        const std::string date = history::commit_date(repo, hash).value_or(run.timestamp);
        const auto record = history::record_from_report(run, hash, date, fs::absolute(input).lexically_normal());
        const auto added = history_store.add(record);
        fmt::print("{} {} at {} ({} cases): {}\n", added.added ? "recorded" : "already recorded", record.suite,
                   hash.substr(0, 12), record.cases.size(), added.file.string());
    }
    return exit_pass;
}

int list_action(const std::vector<std::string>& args)
{
    CLI::App app{"List the suites of a history store, or the runs of one suite.", "harness history list"};
    std::string store, suite;
    app.add_option("--store", store, "the history store")->required()->check(CLI::ExistingDirectory);
    app.add_option("suite", suite, "list this suite's runs");
    if (auto code = parse(app, args)) return *code;

    const history::HistoryStore history_store(store);
    const auto refresh = history_store.refresh_index();
    print_problems(refresh);
    if (suite.empty()) {
        const auto suites = history_store.suites();
        if (suites.empty()) fmt::print("no runs in {}\n", store);
        for (const auto& s : suites)
            fmt::print("{:<24} {:>6} runs {:>6} commits  {} .. {}\n", s.suite, s.runs, s.commits,
                       s.first_date.substr(0, 10), s.last_date.substr(0, 10));
        return exit_pass;
    }
    const auto runs = history_store.list_runs(suite);
    if (runs.empty()) {
        fmt::print(stderr, "harness history list: no runs of suite '{}' in {}\n", suite.substr(0, max_name_length),
                   store);
        return exit_bad_input;
    }
    for (const auto& r : runs)
        fmt::print("{}  {}  {:<6} {:<6} {:<20} {:>5} cases  {}\n", r.commit.substr(0, 12), r.commit_date,
                   mode_name(r.mode), r.arch, r.gpu.empty() ? "-" : r.gpu, r.cases, r.file);
    return exit_pass;
}

int page_action(const std::vector<std::string>& args)
{
    CLI::App app{"Render a suite's history as one self-contained HTML page: every series over commits (the "
                 "first-parent order of the repository's HEAD), its change points, biggest first, and creeps.",
                 "harness history page"};
    std::string store, suite, output, repo = ".";
    app.add_option("--store", store, "the history store")->required()->check(CLI::ExistingDirectory);
    app.add_option("suite", suite, "the suite")->required();
    app.add_option("-o,--output", output, "the HTML file to write")->required();
    app.add_option("--repo", repo, "the git repository whose first-parent history orders commits (default: .)");
    if (auto code = parse(app, args)) return *code;

    const history::HistoryStore history_store(store);
    print_problems(history_store.refresh_index());
    const auto runs = history_store.load_runs(suite);
    if (runs.empty()) {
        fmt::print(stderr, "harness history page: no runs of suite '{}' in {}\n", suite.substr(0, max_name_length),
                   store);
        return exit_bad_input;
    }
    auto order = history::first_parent_order(repo);
    const std::string note = order.empty() ? fmt::format("order of commit date ({} is not a git repository)", repo)
                                           : fmt::format("the first-parent order of HEAD in {}",
                                                         fs::absolute(repo).lexically_normal().string());
    const auto h = history::build_suite_history(suite, runs, history::CommitOrder(std::move(order)));
    write_file_atomically(output, history::history_page(h, {output, note}));
    std::size_t changes = 0, creeps = 0;
    for (const auto& s : h.series) {
        changes += s.analysis.change_points.size();
        creeps += s.analysis.creep ? 1 : 0;
    }
    fmt::print("wrote {}: {} runs, {} commits, {} series, {} change points, {} creeps\n", output, h.runs,
               h.commits.size(), h.series.size(), changes, creeps);
    return exit_pass;
}

const Subcommand history_actions[] = {
    {"record", "record runs: `history record --store DIR RESULTS.json... [--commit REV]`", record_action},
    {"list", "list the suites of a store, or one suite's runs: `history list --store DIR [SUITE]`", list_action},
    {"page", "render a suite's history as HTML: `history page --store DIR SUITE -o FILE.html [--repo DIR]`",
     page_action},
};

} // namespace

int history_command(const std::vector<std::string>& args)
{
    CLI::App app{"A performance history across commits: <store>/runs/<suite>/<commit>-<hash>.json, one file per run, "
                 "with an SQLite index rebuilt from them.",
                 "harness history"};
    app.footer("harness history <action> --help shows an action's options.");
    return dispatch_group(app, history_actions, args);
}

} // namespace harness::cli
