// `harness merge`: results of several runs (e.g. shards) of one suite into one results.json, and
// with --gate the comparison and every report of the whole, as one `harness run` would have made.

#include "harness/cli/commands.hxx"
#include "harness/cli/exit_codes.hxx"
#include "harness/cli/options.hxx"
#include "harness/core/atomic_file.hxx"
#include "harness/core/error.hxx"
#include "harness/pipeline/gating.hxx"
#include "harness/report/merge.hxx"
#include "harness/suite/sweep.hxx"

#include <fmt/format.h>
#include <iostream>
#include <set>

namespace harness::cli {

namespace fs = std::filesystem;

namespace {

/// The suite the merged results are of: `--suite`, else the file they name; refused when its name or cases differ.
suite::Suite suite_of(const harness::RunReport& merged, const std::string& given, bool sources_anywhere)
{
    const std::string file = given.empty() ? merged.suite_file : given;
    std::error_code ec;
    if (file.empty() || !fs::is_regular_file(file, ec))
        throw Error(ErrorKind::bad_input, fmt::format("the results name the suite file '{}', which is not here: give "
                                                      "the suite with --suite",
                                                      file.substr(0, 200)));
    suite::Suite s = suite::load_suite(file, {.sources_anywhere = sources_anywhere, .working_folder = {}});
    if (s.name != merged.suite)
        throw Error(ErrorKind::bad_input,
                    fmt::format("{} is suite '{}', but the results are of suite '{}'", file, s.name, merged.suite));
    std::set<std::pair<std::string, std::string>> cases;
    for (const auto& c : suite::expand_cases(s)) cases.emplace(s.variants[c.variant].name, c.params_text);
    for (const auto& r : merged.results)
        if (!cases.contains({r.variant, r.params_text}))
            throw Error(ErrorKind::bad_input,
                        fmt::format("case '{} {}' of the results is not a case of {}: the suite changed since the run; "
                                    "give the suite it ran with --suite",
                                    r.variant.substr(0, 100), r.params_text.substr(0, 200), file));
    return s;
}

} // namespace

int merge_command(const std::vector<std::string>& args)
{
    CLI::App app{"Combine results.json files of one suite on one GPU (e.g. the shards of `harness run --shard i/N`) "
                 "into one. With --gate, compare the whole with the suite's baselines and expect: rules and write "
                 "every report, as one `harness run` of the suite would have, with its exit code.",
                 "harness merge"};
    std::vector<std::string> inputs;
    std::string output;
    bool allow_missing = false;
    bool gate_merged = false;
    std::string suite_file;
    bool sources_anywhere = false;
    ProjectOptions project;
    GateOptions gate;
    bool fail_on_improvement = false;
    app.add_option("inputs", inputs, "results.json files")->required()->check(CLI::ExistingFile);
    app.add_option("-o,--out", output,
                   "merged results.json; with --gate, <folder>/results.json, and every other report goes into that "
                   "folder too")
        ->required();
    app.add_flag("--allow-missing", allow_missing,
                 "merge the shards given even when some of their run's shards are not (the result says which it "
                 "holds)");
    CLI::Option* gating =
        app.add_flag("--gate", gate_merged,
                     "compare the merged results with the suite's baselines and expect: rules and write results.csv, "
                     "junit.xml, summary.md and report.html beside --out; exit codes as `harness run`");
    app.add_option("--suite", suite_file, "with --gate: the suite file (default: the one the results name)")
        ->check(CLI::ExistingFile);
    app.add_flag("--sources-anywhere", sources_anywhere,
                 "with --gate: allow the suite's kernel sources and include folders outside its project");
    add_project_options(app, project, false);
    app.add_option("--waivers", project.waiver_file, "with --gate: waiver file (default <baseline-dir>/waivers.yaml)");
    add_gate_options(app, gate, true, false);
    app.add_flag("--fail-on-improvement", fail_on_improvement,
                 "with --gate: fail when a metric improved beyond its rule (the baseline is stale)");
    std::string history_store;
    add_history_option(app, history_store);
    for (const char* only_with_gate : {"--suite", "--sources-anywhere", "--root", "--baseline-dir", "--waivers", "--ci",
                                       "--no-ci", "--strict", "--fail-on-improvement", "--history"})
        app.get_option(only_with_gate)->needs(gating);
    if (auto code = parse(app, args)) return *code;

    std::vector<harness::RunReport> reports;
    for (const auto& file : inputs) reports.push_back(harness::read_results_json(file));
    harness::RunReport merged = report::merge_reports(reports, inputs, {.allow_missing_shards = allow_missing});
    if (merged.shard.sharded())
        fmt::print(stderr, "harness merge: the result holds shards {} only (--allow-missing)\n", merged.shard.text());

    if (gate_merged) {
        const fs::path out(output);
        if (out.filename() != "results.json")
            throw Error(ErrorKind::bad_input, fmt::format("--gate writes every report into one folder, results.json "
                                                          "among them: give --out <folder>/results.json, not '{}'",
                                                          output));
        const suite::Suite s = suite_of(merged, suite_file, sources_anywhere);
        pipeline::gate_and_report(merged, s, compare_options(project_paths(project, s), gate),
                                  {out.parent_path(), fail_on_improvement, history_store}, std::cout);
    } else {
        write_file_atomically(output, harness::results_json(merged));
    }
    const harness::Totals t = harness::totals(merged, merged.fail_on_improvement);
    fmt::print("wrote {}: {} cases from {} files ({} passed, {} failed, {} regressed, {} not gated, {} skipped, {} "
               "removed)\n",
               output, merged.results.size(), inputs.size(), t.passed, t.failed, t.regressed, t.not_gated, t.skipped,
               t.removed);
    // As `run`: CI mode never passes a gate that compared nothing.
    if (const auto g = harness::gate_counts(merged); gate_merged && gate.ci_mode() && g.compared + g.expected == 0) {
        fmt::print("{}: CI mode: nothing was gated ({} cases), which fails the run\n", merged.suite,
                   merged.results.size());
        return exit_failure;
    }
    return t.failing() ? exit_failure : exit_pass;
}

} // namespace harness::cli
