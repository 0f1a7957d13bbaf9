#include "harness/cli/options.hxx"

#include "harness/cli/exit_codes.hxx"
#include "harness/core/arch_limits.hxx"
#include "harness/core/error.hxx"
#include "harness/core/input_files.hxx"
#include "harness/core/text.hxx"

#include <fmt/format.h>

namespace harness::cli {

namespace {

std::filesystem::path cache_dir(const CommonOptions& o)
{
    return o.cache_dir.empty() ? compile::CompileCache::default_dir() : std::filesystem::path(o.cache_dir);
}

} // namespace

std::optional<int> parse(CLI::App& app, const std::vector<std::string>& args)
{
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    try {
        app.parse(reversed);
    } catch (const CLI::CallForHelp&) {
        fmt::print("{}", app.help());
        return exit_pass;
    } catch (const CLI::CallForVersion& e) {
        fmt::print("{}\n", e.what());
        return exit_pass;
    } catch (const CLI::ParseError& e) {
        fmt::print(stderr, "{}: {}\n", app.get_name(), escape_control_characters(e.what()));
        return exit_bad_input;
    }
    return std::nullopt;
}

CLI::Validator known_arch_validator()
{
    return CLI::Validator(
        [](std::string& arch) -> std::string {
            if (find_arch_limits(arch) && name_problem(arch).empty()) return "";
            std::vector<std::string> known;
            for (const auto& limits : known_arch_limits()) known.emplace_back(limits.name);
            return fmt::format("unknown architecture '{}'; one of {}", arch.substr(0, 40), join(known));
        },
        "ARCH");
}

CLI::Validator seconds_validator(double most)
{
    return CLI::Validator(
        [most](std::string& text) -> std::string {
            const auto seconds = parse_decimal_number(text);
            if (seconds && *seconds > 0 && *seconds <= most) return "";
            return fmt::format("expected a number of seconds above 0 and at most {:g}, not '{}'", most,
                               text.substr(0, 40));
        },
        "SECONDS");
}

int dispatch_group(CLI::App& app, std::span<const Subcommand> subcommands, const std::vector<std::string>& args)
{
    app.require_subcommand(0, 1);
    for (const auto& c : subcommands) {
        CLI::App* sub = app.add_subcommand(c.name, c.description);
        // Everything after the name, --help included, goes to the subcommand's own parser.
        sub->prefix_command();
        sub->set_help_flag();
    }
    if (!args.empty() && !args[0].starts_with('-')) {
        std::vector<std::string> names;
        for (const auto& c : subcommands) names.emplace_back(c.name);
        if (std::find(names.begin(), names.end(), args[0]) == names.end()) {
            fmt::print(stderr, "{}: unknown command '{}'{}; commands: {}\n", app.get_name(), args[0],
                       did_you_mean(args[0], names), join(names));
            return exit_bad_input;
        }
    }
    if (auto code = parse(app, args)) return *code;
    const auto chosen = app.get_subcommands();
    if (chosen.empty()) {
        fmt::print("{}", app.help());
        return exit_pass;
    }
    for (const auto& c : subcommands)
        if (chosen.front()->get_name() == c.name) return c.run(chosen.front()->remaining());
    return exit_bad_input;
}

void add_suite_files(CLI::App& app, CommonOptions& o)
{
    app.add_option("suites", o.suites, "suite files (YAML)")->required()->check(CLI::ExistingFile);
    app.add_flag("--sources-anywhere", o.sources_anywhere,
                 "allow kernel sources and include folders outside the suite's project");
}

void add_common(CLI::App& app, CommonOptions& o)
{
    add_suite_files(app, o);
    app.add_option("--cache-dir", o.cache_dir,
                   "compiled-kernel cache, a folder only you may write to (default $HARNESS_CACHE_DIR, "
                   "$XDG_CACHE_HOME/harness, ~/.cache/harness or $TMPDIR/harness-cache-<uid>)");
    app.add_flag("--no-cache", o.no_cache, "compile every kernel afresh");
    // A cache folder others may write to is refused as soon as the command line is read, before any
    // suite is loaded or compiled, by every command that takes one.
    app.final_callback([&o] {
        if (!o.no_cache) compile::CompileCache::check_folder(cache_dir(o));
    });
}

std::vector<suite::Suite> load_suites(const CommonOptions& o)
{
    std::vector<suite::Suite> suites;
    for (const auto& file : o.suites) {
        suites.push_back(suite::load_suite(file, {.sources_anywhere = o.sources_anywhere, .working_folder = {}}));
        // A suite's name names its baseline and report folders: two suites of one name would
        // overwrite each other's files.
        for (std::size_t i = 0; i + 1 < suites.size(); ++i)
            if (suites[i].name == suites.back().name)
                throw Error(ErrorKind::bad_input,
                            fmt::format("{}: suite: '{}' is also the name of {}: their baselines and reports would "
                                        "overwrite each other's; give each suite a name of its own{}",
                                        file, suites.back().name, o.suites[i],
                                        o.suites[i] == file ? " (or name the file once)" : ""));
    }
    return suites;
}

void add_project_options(CLI::App& app, ProjectOptions& o, bool with_reports)
{
    app.add_option("--root", o.root,
                   "the project folder (default: the nearest folder above the suite that holds kernels/, "
                   "baselines/ or .git)");
    app.add_option("--baseline-dir", o.baseline_dir,
                   "baseline folder: <dir>/<suite>/<key>.csv (default <project>/baselines)");
    if (!with_reports) return;
    app.add_option("--out", o.out_dir,
                   "report folder; each suite writes to <out>/<suite>/ (default <project>/reports)");
    app.add_option("--waivers", o.waiver_file, "waiver file (default <baseline-dir>/waivers.yaml)");
}

ProjectPaths project_paths(const ProjectOptions& o, const suite::Suite& s)
{
    namespace fs = std::filesystem;
    ProjectPaths p;
    p.root = o.root.empty() ? s.project_root : fs::absolute(o.root);
    p.baselines = o.baseline_dir.empty() ? p.root / "baselines" : fs::path(o.baseline_dir);
    p.reports = o.out_dir.empty() ? p.root / "reports" : fs::path(o.out_dir);
    p.baselines_given = !o.baseline_dir.empty();
    p.reports_given = !o.out_dir.empty();
    p.waivers_given = !o.waiver_file.empty();
    p.waivers = p.waivers_given ? fs::path(o.waiver_file) : p.baselines / "waivers.yaml";
    return p;
}

std::filesystem::path report_folder(const ProjectPaths& paths, const suite::Suite& s)
{
    const auto folder = child_path(paths.reports, s.name, "suite name");
    refuse_linked_folders(paths.reports_given ? paths.reports : paths.root, folder);
    return folder;
}

std::filesystem::path baseline_folder(const ProjectPaths& paths, const suite::Suite& s)
{
    const auto folder = child_path(paths.baselines, s.name, "suite name");
    refuse_linked_folders(paths.baselines_given ? paths.baselines : paths.root, folder);
    return folder;
}

bool GateOptions::ci_mode() const
{
    if (ci) return true;
    if (no_ci) return false;
    const char* env = std::getenv("CI");
    if (!env) return false;
    std::string value(env);
    for (auto& c : value) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return value == "true" || value == "1" || value == "yes";
}

void add_gate_options(CLI::App& app, GateOptions& o, bool with_strict, bool with_require_gpu)
{
    auto* ci = app.add_flag("--ci", o.ci,
                            "CI mode (default when the environment sets CI=true): a figure without a baseline fails, a "
                            "missing GPU fails unless --static, baselines are never written");
    app.add_flag("--no-ci", o.no_ci, "not CI mode, even where the environment sets CI=true")->excludes(ci);
    if (with_require_gpu)
        app.add_flag("--require-gpu", o.require_gpu, "fail (exit 3) when no GPU is usable, instead of the static tier");
    if (with_strict)
        app.add_flag("--strict", o.strict,
                     "gate drift figures too (registers, raw counts, instructions): any change fails, as a snapshot");
}

compare::CompareOptions compare_options(const ProjectPaths& paths, const GateOptions& gate)
{
    compare::CompareOptions options;
    options.baseline_dir = paths.baselines;
    options.waiver_file = paths.waivers_given ? paths.waivers : std::filesystem::path();
    options.strict = gate.strict;
    options.ci = gate.ci_mode();
    return options;
}

std::optional<compile::CompileCache> make_cache(const CommonOptions& o)
{
    if (o.no_cache) return std::nullopt;
    return compile::CompileCache(cache_dir(o));
}

void add_history_option(CLI::App& app, std::string& store)
{
    app.add_option("--history", store,
                   "a history store (`harness history record`): each regressed, expect-failed or not-measured figure "
                   "of summary.md and report.html shows a sparkline of its last 20 commits on the default branch; a "
                   "missing or empty store shows nothing");
}

} // namespace harness::cli
