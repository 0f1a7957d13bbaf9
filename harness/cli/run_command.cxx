// `harness run`, `harness check`, `harness list`.

#include "harness/cli/commands.hxx"
#include "harness/cli/exit_codes.hxx"
#include "harness/cli/options.hxx"
#include "harness/cli/run_options.hxx"
#include "harness/compare/compare_run.hxx"
#include "harness/compare/waivers.hxx"
#include "harness/compile/compile_suite.hxx"
#include "harness/compile/confinement.hxx"
#include "harness/compile/kernel_arguments.hxx"
#include "harness/compile/launch_bounds.hxx"
#include "harness/core/error.hxx"
#include "harness/core/input_files.hxx"
#include "harness/core/metrics.hxx"
#include "harness/core/text.hxx"
#include "harness/pipeline/run_suite.hxx"
#include "harness/pipeline/suite_skeleton.hxx"
#include "harness/report/reporters.hxx"
#include "harness/run/run_settings.hxx"
#include "harness/suite/sweep.hxx"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>

namespace harness::cli {

namespace fs = std::filesystem;

namespace {

/// "i/N" with 1 <= i <= N <= max_shards, or nullopt.
std::optional<std::pair<std::size_t, std::size_t>> parse_shard(const std::string& text)
{
    const auto slash = text.find('/');
    const auto number = [](const std::string& digits) -> std::optional<std::size_t> {
        if (digits.empty() || digits.size() > 6 || !std::all_of(digits.begin(), digits.end(), ::isdigit))
            return std::nullopt;
        return std::stoul(digits);
    };
    if (slash == std::string::npos) return std::nullopt;
    const auto index = number(text.substr(0, slash));
    const auto count = number(text.substr(slash + 1));
    if (!index || !count || *index < 1 || *index > *count || *count > harness::max_shards) return std::nullopt;
    return std::pair{*index, *count};
}

/// What `harness run` was told: the settings every suite of the run starts from, and the rest.
struct RunCommandLine {
    CommonOptions common;
    run::RunSettings settings;
    ProjectOptions project;
    GateOptions gate;
    bool fail_on_improvement = false;
    std::string history_store;
    bool allow_unconfined_compile = false;
    bool event_timing = false;
    bool no_profile = false;
    std::string shard;
};

/// Where the suites run and what the run shows: the static tier, the project, the gate, the
/// reports, the GPUs.
void add_place_options(CLI::App& app, RunCommandLine& line)
{
    run::RunSettings& settings = line.settings;
    add_common(app, line.common);
    CLI::Option* device_option = add_run_place_options(app, settings);
    add_project_options(app, line.project, true);
    add_gate_options(app, line.gate, true);
    app.add_flag("--fail-on-improvement", line.fail_on_improvement,
                 "fail when a metric improved beyond its rule (the baseline is stale)");
    add_history_option(app, line.history_store);
    app.add_flag(compile::allow_unconfined_option, line.allow_unconfined_compile,
                 "in CI mode, compile kernels that include project files even where Landlock is missing and "
                 "compilation cannot be confined (the include scan alone then keeps them inside the project)");
    app.add_option("--devices", settings.devices,
                   "run cases on several GPUs of this host at once, one worker per GPU: 'all' or a list such as "
                   "0,1 (all of one model; every parameter point runs on one GPU)")
        ->excludes(device_option);
}

/// How each case is measured, and for how long.
void add_measurement_options(CLI::App& app, RunCommandLine& line)
{
    run::RunSettings& settings = line.settings;
    app.add_flag("--hot", settings.hot, "do not flush the L2 cache between timed samples");
    app.add_flag("--event-timing", line.event_timing,
                 "time each sample with CUDA events around its launches instead of the GPU's per-kernel durations "
                 "(events add the launch latency between kernels, about 1 us per sample)");
    app.add_flag("--verify-only", settings.verify_only, "verify outputs and read resources, no timing");
    app.add_flag("--no-profile", line.no_profile, "do not collect hardware counters (CUPTI)");
    auto* counter_cache = app.add_flag(
        "--counter-cache", settings.counter_cache,
        "reuse a case's exact counters and hotspots from the cache folder while its kernel binary, launches, "
        "inputs, GPU architecture, driver and profiler are unchanged; noisy figures are still measured");
    app.add_flag("--fresh-counters", settings.fresh_counters,
                 "with --counter-cache: measure every figure afresh and replace the cached entries")
        ->needs(counter_cache);
    app.add_flag("--external-profiler", settings.external_profiler,
                 "run each case once, then once more inside its NVTX range (domain 'harness', named '<variant> "
                 "<params>') and between cuProfilerStart/Stop, for ncu / nsys; no timing, no counters");
    add_run_time_options(app, settings, true);
}

/// Which cases run, and how often what is unsure or regressed is measured again.
void add_selection_options(CLI::App& app, RunCommandLine& line)
{
    run::RunSettings& settings = line.settings;
    app.add_option("--variant", settings.variants, "run only these variants (the reference always runs)");
    app.add_flag("--changed-only", settings.changed_only,
                 "on a GPU, run only the cases whose kernels' normalised SASS, launch, inputs or arguments hash "
                 "otherwise than when their baseline was recorded; the others are carried as \"unchanged\" "
                 "(needs nvdisasm; docs/sass.md)");
    app.add_option("--resample", settings.resample_rounds,
                   "rounds of more time samples for a case whose time verdict is unsure (its median moved beyond the "
                   "rule, but not significantly): each round doubles its samples and compares again; and a time "
                   "regression (or a noisy counter beyond its rule, such as DRAM bytes) is measured again in a fresh "
                   "process, failing only when it shows there too; 0: none of these")
        ->capture_default_str()
        ->check(CLI::Range(0, 8));
    app.add_option("--shard", line.shard,
                   "run only shard i of N (i/N): the sweep points split by expected cost from the baselines' times, "
                   "every variant at a point in one shard; `harness merge` puts the shards together")
        ->check(CLI::Validator(
            [](std::string& text) -> std::string {
                return parse_shard(text) ? ""
                                         : fmt::format("expected i/N with 1 <= i <= N <= {}, not '{}'",
                                                       harness::max_shards, text.substr(0, 40));
            },
            "i/N"));
}

/// One job per suite: its settings as the command line gives them, resolved for the suite (the one
/// place `harness run` resolves them), with its project's baselines (which balance shards and
/// GPUs), its gate and its reports. Reads each suite's waivers and checks
/// the `--variant` names first, so that a bad waiver file or name stops the run before anything runs.
std::vector<pipeline::SuiteJob> suite_jobs(const RunCommandLine& line, const std::vector<suite::Suite>& suites)
{
    std::vector<pipeline::SuiteJob> jobs;
    for (const auto& s : suites) {
        const ProjectPaths paths = project_paths(line.project, s);
        const fs::path out_dir = report_folder(paths, s);
        compare::read_waivers(paths.waivers, paths.waivers_given);
        for (const auto& v : line.settings.variants)
            if (!s.find_variant(v))
                throw Error(ErrorKind::bad_input, fmt::format("{}: no variant '{}'", s.file.string(), v));
        run::RunSettings settings = run::resolve_settings(line.settings, s);
        settings.baseline_dir = paths.baselines;
        if (const auto share = parse_shard(line.shard)) settings.shard = run::ShardRequest{share->first, share->second};
        jobs.push_back({&s, settings, compare_options(paths, line.gate),
                        pipeline::ReportOptions{out_dir, line.fail_on_improvement, line.history_store}});
    }
    return jobs;
}

/// Whether a suite's gated report fails the run: a failed, regressed or ungated figure, or in CI
/// mode nothing gated at all (said on stdout), unless the run is a shard that holds no case.
bool fails_run(const harness::RunReport& rep, bool fail_on_improvement, bool ci)
{
    const harness::Totals t = harness::totals(rep, fail_on_improvement);
    bool fails = t.failing();
    // A shard of more shards than the suite has points holds none of them: it has nothing to gate
    // and passes; the merged gate of every shard (`harness merge --gate`) fails if nothing was
    // gated over the whole.
    if (rep.shard.sharded() && rep.results.empty()) {
        fmt::print("shard {} holds no case of {}: nothing to gate there, which passes; `harness merge --gate` of "
                   "every shard gates the suite\n",
                   rep.shard.text(), rep.suite);
        return fails;
    }
    // CI mode never passes a suite that gated nothing, whatever the reason (no case at all, every
    // figure unmeasured): a green check must mean something was compared.
    // Cases carried by --changed-only are their baseline's, counted apart: a suite of nothing else
    // has nothing to gate, and says so.
    if (const auto g = harness::gate_counts(rep);
        ci && g.compared + g.expected == 0 && t.unchanged > 0 && t.unchanged == rep.results.size()) {
        fmt::print("{}: CI mode: nothing was gated: all {} cases are unchanged (--changed-only: SASS identical to "
                   "the baseline's), which passes\n",
                   rep.suite, t.unchanged);
    } else if (ci && g.compared + g.expected == 0) {
        fmt::print("{}: CI mode: nothing was gated ({} cases), which fails the run\n", rep.suite, rep.results.size());
        fails = true;
    }
    return fails;
}

} // namespace

int run_command(const std::vector<std::string>& args)
{
    CLI::App app{"Compile, verify, time and measure every case of one or more suites, and compare them with "
                 "their baselines and `expect:` rules.",
                 "harness run"};
    RunCommandLine line;
    add_place_options(app, line);
    add_measurement_options(app, line);
    add_selection_options(app, line);
    if (auto code = parse(app, args)) return *code;
    if (line.no_profile) line.settings.profile = false;
    if (line.event_timing) line.settings.time_source = run::TimeSource::events;

    const std::vector<suite::Suite> suites = load_suites(line.common);
    const bool ci = line.gate.ci_mode();
    compile::refuse_unconfined_project_includes(ci && !line.allow_unconfined_compile);
    line.settings.require_gpu = line.gate.require_gpu || ci;
    line.settings.require_gpu_because = line.gate.require_gpu ? "--require-gpu" : "CI mode (--ci, or CI=true)";
    const std::vector<pipeline::SuiteJob> jobs = suite_jobs(line, suites);

    const auto cache = make_cache(line.common);
    const auto device = pipeline::choose_device(line.settings);
    int exit_code = exit_pass;
    pipeline::run_and_report_all(jobs, device, cache ? &*cache : nullptr, std::cout,
                                 [&](const harness::RunReport& rep) {
                                     if (fails_run(rep, line.fail_on_improvement, ci)) exit_code = exit_failure;
                                     // A suite's report reaches a log before the next suite's progress (on
                                     // stderr) does.
                                     std::cout.flush();
                                     std::fflush(stdout);
                                 });
    return exit_code;
}

int check_command(const std::vector<std::string>& args)
{
    CLI::App app{"Validate suites and compile every variant for the given architectures (no GPU needed).",
                 "harness check"};
    CommonOptions common;
    add_common(app, common);
    std::vector<std::string> archs;
    app.add_option("--arch", archs, "architectures, e.g. sm_90 (default: the suite's archs)")
        ->check(known_arch_validator());
    std::vector<std::string> variants;
    app.add_option("--variant", variants, "check only these variants");
    if (auto code = parse(app, args)) return *code;

    // Placeholders a skeleton left (`harness scaffold`): every one at once, before the first one
    // stops the loader.
    std::vector<std::string> placeholders;
    for (const auto& file : common.suites) {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(file, ec)) continue; // the loader says why
        for (auto& e :
             pipeline::placeholder_errors(read_input_file(file, suite::max_suite_file_bytes, "suite file"), file))
            placeholders.push_back(std::move(e));
    }
    if (!placeholders.empty())
        throw Error(ErrorKind::bad_input,
                    fmt::format("{} placeholders left to fill in:\n{}", placeholders.size(), join(placeholders, "\n")));

    const auto cache = make_cache(common);
    int exit_code = exit_pass;
    std::vector<std::string> argument_problems;
    const std::vector<suite::Suite> suites = load_suites(common);
    for (const auto& s : suites)
        for (const auto& v : variants)
            if (!s.find_variant(v))
                throw Error(ErrorKind::bad_input, fmt::format("{}: no variant '{}'", s.file.string(), v));
    const auto chosen = [&](const std::string& variant) {
        return variants.empty() || std::find(variants.begin(), variants.end(), variant) != variants.end();
    };
    for (const auto& s : suites) {
        auto cases = suite::expand_cases(s);
        std::erase_if(cases, [&](const suite::Case& c) { return !chosen(s.variants[c.variant].name); });
        fmt::print("{}: suite {}, {} variants, {} cases{}\n", s.file.string(), s.name, s.variants.size(), cases.size(),
                   variants.empty() ? "" : fmt::format(" of --variant {}", join(variants)));
        for (const auto& arch : archs.empty() ? s.archs : archs) {
            const auto compiled = compile::compile_suite(s, cases, arch, cache ? &*cache : nullptr);
            // Arguments the kernels do not take are said up front, and no unit is "ok" beside them.
            std::string mismatch;
            try {
                compile::check_kernel_arguments(s, compiled);
            } catch (const Error& e) {
                mismatch = e.what();
                if (std::find(argument_problems.begin(), argument_problems.end(), mismatch) == argument_problems.end())
                    argument_problems.push_back(mismatch);
            }
            if (!mismatch.empty()) fmt::print("  {:<8} arguments do not fit the kernels:\n{}\n", arch, mismatch);
            // So are blocks the kernels' __launch_bounds__ do not take: the driver would refuse them.
            try {
                compile::check_launch_bounds(s, cases, compiled);
            } catch (const Error& e) {
                const std::string misfit = e.what();
                fmt::print("  {:<8} blocks do not fit the kernels' launch bounds:\n{}\n", arch, misfit);
                if (std::find(argument_problems.begin(), argument_problems.end(), misfit) == argument_problems.end())
                    argument_problems.push_back(misfit);
                if (mismatch.empty()) mismatch = misfit;
            }
            for (const auto& v : s.variants) switch (v.kind) {
                case suite::VariantKind::builtin:
                    if (!chosen(v.name)) break;
                    fmt::print("  {:<8} {:<24} built-in {} (nothing to compile)\n", arch, v.name, v.builtin);
                    break;
                case suite::VariantKind::source:
                case suite::VariantKind::module:
                case suite::VariantKind::triton:
                case suite::VariantKind::cutile: break; // a compile unit below
                }
            for (const auto& unit : compile::compile_units(s, cases)) {
                if (auto err = compiled.errors.find(unit.key); err != compiled.errors.end()) {
                    fmt::print("  {:<8} {:<24} FAILED\n{}\n", arch, unit.key, escape_control_characters(err->second));
                    exit_code = exit_failure;
                } else {
                    fmt::print("  {:<8} {:<24} {}{}\n", arch, unit.key, mismatch.empty() ? "ok" : "compiled",
                               compiled.modules.at(unit.key).from_cache ? " (cached)" : "");
                }
            }
        }
    }
    // Arguments the kernels do not take are a wrong suite: bad input, after every suite was listed.
    if (!argument_problems.empty()) throw Error(ErrorKind::bad_input, join(argument_problems, "\n"));
    return exit_code;
}

int list_command(const std::vector<std::string>& args)
{
    CLI::App app{"List the cases a suite expands to.", "harness list"};
    CommonOptions common;
    add_suite_files(app, common);
    if (auto code = parse(app, args)) return *code;
    for (const auto& s : load_suites(common)) {
        for (const auto& c : suite::expand_cases(s))
            fmt::print("{} {} {}\n", s.name, s.variants[c.variant].name, c.params_text);
    }
    return exit_pass;
}

int metrics_command(const std::vector<std::string>& args)
{
    CLI::App app{"Print the metric table: every figure a run can produce, its unit, whether it repeats exactly, "
                 "which way is better, its default gating rule and where it comes from.",
                 "harness metrics"};
    bool markdown = false;
    app.add_flag("--markdown", markdown, "print the table as Markdown, with sources and descriptions");
    if (auto code = parse(app, args)) return *code;
    fmt::print("{}", markdown ? metric_table_markdown() : metric_table_text());
    return exit_pass;
}

} // namespace harness::cli
