// `harness baseline update`: record the figures of a run as the suite's baselines.

#include "harness/cli/commands.hxx"
#include "harness/cli/exit_codes.hxx"
#include "harness/cli/options.hxx"
#include "harness/cli/run_options.hxx"
#include "harness/compare/baseline_update.hxx"
#include "harness/core/error.hxx"
#include "harness/pipeline/pool_runs.hxx"
#include "harness/pipeline/run_suite.hxx"

#include <fmt/format.h>

namespace harness::cli {

namespace {

/// The results and cliff maps of `variants` only: what `--variant` records.
void only_variants(harness::RunReport& report, const std::vector<std::string>& variants)
{
    const auto other = [&](const std::string& variant) {
        return std::find(variants.begin(), variants.end(), variant) == variants.end();
    };
    std::erase_if(report.results, [&](const CaseResult& r) { return other(r.variant); });
    std::erase_if(report.cliff_maps, [&](const CliffMap& m) { return other(m.variant); });
}

int baseline_update(const std::vector<std::string>& args)
{
    CLI::App app{"Run suites (or read a results.json) and record their figures in <baseline-dir>/<suite>/: exact "
                 "figures by architecture (sm_90.csv), noisy ones by GPU model (NVIDIA-H200.csv). Files are merged: "
                 "rows of the cases and metrics measured now are replaced, others kept. Failed cases are never "
                 "recorded.",
                 "harness baseline update"};
    CommonOptions common;
    add_common(app, common);
    run::RunSettings options;
    ProjectOptions project;
    GateOptions gate;
    std::vector<std::string> from;
    int runs = 1;
    add_run_place_options(app, options);
    add_project_options(app, project, false);
    add_gate_options(app, gate, false);
    auto* from_option =
        app.add_option("--from", from,
                       "record the results of this results.json instead of running (one suite); given several "
                       "times, runs of the same suite on the same GPU model, their time samples pooled")
            ->check(CLI::ExistingFile)
            ->allow_extra_args(false); // one file per --from: the suite that follows is not one
    app.add_option("--runs", runs,
                   "run the suites this many times, each in processes of its own, and record every run's time "
                   "samples pooled: a baseline then holds how times move between processes (where buffers land)")
        ->check(CLI::Range(1, 20))
        ->excludes(from_option);
    add_run_time_options(app, options, false);
    app.add_option("--variant", options.variants,
                   "record only these variants (on a GPU the reference runs too, to verify them, and is not "
                   "recorded); the rows of the others are kept as they are");
    if (auto code = parse(app, args)) return *code;
    if (!from.empty() && common.suites.size() != 1)
        throw Error(ErrorKind::bad_input, "--from records one results file: give exactly one suite");
    if (gate.ci_mode())
        throw Error(ErrorKind::bad_input, "CI mode (--ci, or CI=true in the environment) never writes baselines: "
                                          "record them outside CI, or pass --no-ci");

    const std::vector<suite::Suite> suites = load_suites(common);
    // Every suite's folder and every --variant name are checked before the first one runs.
    for (const auto& s : suites) {
        baseline_folder(project_paths(project, s), s);
        for (const auto& v : options.variants)
            if (!s.find_variant(v))
                throw Error(ErrorKind::bad_input, fmt::format("{}: no variant '{}'", s.file.string(), v));
    }
    const auto cache = make_cache(common);
    options.require_gpu = gate.require_gpu;
    options.require_gpu_because = "--require-gpu";
    const auto device = from.empty() ? pipeline::choose_device(options) : std::nullopt;
    int exit_code = exit_pass;
    for (const auto& s : suites) {
        const run::RunSettings settings = run::resolve_settings(options, s);
        std::vector<harness::RunReport> reports;
        std::vector<std::string> names;
        for (const auto& file : from) {
            auto rep = harness::read_results_json(file);
            if (rep.suite != s.name)
                throw Error(ErrorKind::bad_input, fmt::format("{} holds suite '{}', not '{}' ({})", file,
                                                              rep.suite.substr(0, 100), s.name, s.file.string()));
            rep.suite_file = file;
            reports.push_back(std::move(rep));
            names.push_back(file);
        }
        for (int run = 1; from.empty() && run <= runs; ++run) {
            if (runs > 1) fmt::print("{}: run {} of {}\n", s.name, run, runs);
            reports.push_back(pipeline::run_suite(s, device, settings, cache ? &*cache : nullptr));
            names.push_back(fmt::format("run {}", run));
        }
        auto pooled = pipeline::pool_runs(reports, names, &s);
        for (const auto& note : pooled.notes) fmt::print("{}\n", note);
        auto rep = std::move(pooled.report);
        if (!options.variants.empty()) only_variants(rep, options.variants);
        const auto update = compare::update_baselines(s, rep, project_paths(project, s).baselines);
        for (const auto& note : update.notes) fmt::print("{}\n", note);
        for (const auto& written : update.written) fmt::print("wrote {}\n", written);
        for (const auto& same : update.unchanged) fmt::print("unchanged {}\n", same);
        if (update.written.empty() && update.unchanged.empty())
            fmt::print("{}: nothing recorded (no case passed)\n", s.name);
        for (const auto& r : rep.results)
            if (case_status_fails(r.status)) exit_code = exit_failure;
    }
    return exit_code;
}

const Subcommand baseline_actions[] = {
    {"update", "record the figures of a run (GPU, --static, or --from results.json) as baselines", baseline_update},
};

} // namespace

int baseline_command(const std::vector<std::string>& args)
{
    CLI::App app{"Record and maintain baselines: <baseline-dir>/<suite>/<key>.csv.", "harness baseline"};
    app.footer("harness baseline <action> --help shows an action's options.");
    return dispatch_group(app, baseline_actions, args);
}

} // namespace harness::cli
