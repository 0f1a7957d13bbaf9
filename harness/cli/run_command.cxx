#include "harness/cli/commands.hxx"
#include "harness/cli/exit_codes.hxx"
#include "harness/compile/compile_suite.hxx"
#include "harness/compile/static_tier.hxx"
#include "harness/core/error.hxx"
#include "harness/core/text.hxx"
#include "harness/report/run_report.hxx"
#include "harness/run/gpu_session.hxx"
#include "harness/run/isolated_runner.hxx"
#include "harness/suite/sweep.hxx"

#include <CLI/CLI.hpp>
#include <chrono>
#include <ctime>
#include <fmt/format.h>
#include <iostream>
#include <unistd.h>

namespace harness::cli {

namespace fs = std::filesystem;

namespace {

std::string utc_timestamp()
{
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text;
}

/// Parses a subcommand's options; returns an exit code when it should stop (help or an error).
std::optional<int> parse(CLI::App& app, const std::vector<std::string>& args)
{
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    try {
        app.parse(reversed);
    } catch (const CLI::CallForHelp&) {
        fmt::print("{}", app.help());
        return exit_pass;
    } catch (const CLI::ParseError& e) {
        fmt::print(stderr, "harness {}: {}\n", app.get_name(), e.what());
        return exit_bad_input;
    }
    return std::nullopt;
}

struct CommonOptions {
    std::vector<std::string> suites;
    std::string cache_dir;
    bool no_cache = false;
};

void add_common(CLI::App& app, CommonOptions& o)
{
    app.add_option("suites", o.suites, "suite files (YAML)")->required()->check(CLI::ExistingFile);
    app.add_option("--cache-dir", o.cache_dir,
                   "compiled-kernel cache (default $HARNESS_CACHE_DIR or ~/.cache/harness)");
    app.add_flag("--no-cache", o.no_cache, "compile every kernel afresh");
}

std::optional<compile::CompileCache> make_cache(const CommonOptions& o)
{
    if (o.no_cache) return std::nullopt;
    return compile::CompileCache(o.cache_dir.empty() ? compile::CompileCache::default_dir()
                                                     : fs::path(o.cache_dir));
}

/// A one-line progress display: rewritten in place on a terminal, one line per case otherwise.
class Progress {
  public:
    explicit Progress(std::size_t total) : total_(total), tty_(isatty(STDERR_FILENO)) {}
    void begin(const CaseResult& c)
    {
        if (tty_)
            fmt::print(stderr, "\r\033[K[{}/{}] {} {} ...", done_ + 1, total_, c.variant, c.params_text);
    }
    void end(const CaseResult& r)
    {
        ++done_;
        const auto t = r.metric("time_median");
        const std::string what = r.status == CaseStatus::passed
                                     ? (t ? fmt::format("ok {:.2f} us", *t) : std::string("ok"))
                                     : case_status_name(r.status);
        if (tty_)
            fmt::print(stderr, "\r\033[K[{}/{}] {} {} {}", done_, total_, r.variant, r.params_text, what);
        else
            fmt::print(stderr, "[{}/{}] {} {} {}\n", done_, total_, r.variant, r.params_text, what);
        if (tty_ && done_ == total_) fmt::print(stderr, "\r\033[K");
    }

  private:
    std::size_t total_;
    std::size_t done_ = 0;
    bool tty_;
};

} // namespace

int run_command(const std::vector<std::string>& args)
{
    CLI::App app{"Compile, verify, time and measure every case of one or more suites.", "run"};
    CommonOptions common;
    add_common(app, common);
    std::string out_root = "reports";
    int device = 0;
    bool hot = false;
    bool verify_only = false;
    double timeout = 0.0, budget = 0.0;
    std::vector<std::string> only_variants;
    bool static_only = false;
    std::vector<std::string> archs;
    app.add_flag("--static", static_only,
                 "static tier only: compile for each architecture, read resources, no GPU");
    app.add_option("--arch", archs, "architectures for the static tier (default: the suite's archs)");
    app.add_option("--out", out_root, "report folder; each suite writes to <out>/<suite>/")
        ->capture_default_str();
    app.add_option("--device", device, "CUDA device ordinal")->capture_default_str();
    app.add_flag("--hot", hot, "do not flush the L2 cache between timed samples");
    app.add_flag("--verify-only", verify_only, "verify outputs and read resources, no timing");
    app.add_option("--timeout", timeout,
                   "seconds before a case counts as hung (default: the suite's timing.timeout_s)");
    app.add_option("--budget", budget, "seconds of timing per case (default: the suite's timing.budget_s)");
    app.add_option("--variant", only_variants, "run only these variants (the reference always runs)");
    if (auto code = parse(app, args)) return *code;

    std::vector<suite::Suite> suites;
    for (const auto& file : common.suites) suites.push_back(suite::load_suite(file));
    for (const auto& s : suites)
        for (const auto& v : only_variants)
            if (!s.find_variant(v))
                throw Error(ErrorKind::bad_input, fmt::format("{}: no variant '{}'", s.file.string(), v));

    const auto cache = make_cache(common);
    std::string why = "--static given";
    const auto device_info = static_only ? std::nullopt : run::probe_device(device, &why);
    if (!device_info) {
        fmt::print(
            stderr,
            "harness: no usable GPU ({}): running the static tier only. Every variant is compiled for each "
            "architecture and its registers, spills, shared memory and theoretical occupancy are read; "
            "nothing is verified or timed.\n",
            why);
        int exit_code = exit_pass;
        for (const auto& s : suites) {
            report::RunReport rep;
            rep.suite = s.name;
            rep.suite_file = s.file.string();
            rep.mode = "static";
            rep.arch = join(archs.empty() ? s.archs : archs, ",");
            rep.harness_version = HARNESS_VERSION;
            rep.timestamp = utc_timestamp();
            rep.results =
                compile::run_static_tier(s, archs.empty() ? s.archs : archs, cache ? &*cache : nullptr);
            const fs::path out_dir = fs::path(out_root) / s.name;
            for (const auto& reporter : report::reporter_table()) reporter.write(rep, out_dir, std::cout);
            if (report::totals(rep).failed > 0) exit_code = exit_failure;
        }
        return exit_code;
    }

    int exit_code = exit_pass;
    for (auto& s : suites) {
        if (budget > 0) s.timing.budget_s = budget;
        fmt::print(stderr, "harness: suite {} on {} ({}), compiling...\n", s.name, device_info->name,
                   device_info->arch);
        const auto compiled =
            compile::compile_suite_in_child(s, device_info->arch, cache ? &*cache : nullptr);

        std::vector<suite::Case> all = suite::expand_cases(s);
        std::vector<suite::Case> cases;
        for (const auto& c : all) {
            const auto& name = s.variants[c.variant].name;
            if (only_variants.empty() || name == s.reference ||
                std::find(only_variants.begin(), only_variants.end(), name) != only_variants.end())
                cases.push_back(c);
        }

        // Cases that cannot run: their variant (or the reference) did not compile.
        std::vector<CaseResult> results(cases.size());
        std::vector<suite::Case> runnable;
        std::vector<std::size_t> runnable_index;
        const bool reference_broken = compiled.errors.contains(s.reference);
        for (std::size_t i = 0; i < cases.size(); ++i) {
            const auto& name = s.variants[cases[i].variant].name;
            if (auto err = compiled.errors.find(name); err != compiled.errors.end()) {
                results[i] = run::unverifiable_case(s, cases[i], "");
                results[i].status = CaseStatus::compile_error;
                results[i].message = err->second;
            } else if (reference_broken) {
                results[i] = run::unverifiable_case(s, cases[i], "the reference variant did not compile");
            } else {
                runnable.push_back(cases[i]);
                runnable_index.push_back(i);
            }
        }

        Progress progress(runnable.size());
        run::RunObserver observer;
        observer.on_begin = [&](std::size_t i) {
            CaseResult r;
            r.variant = s.variants[runnable[i].variant].name;
            r.params_text = runnable[i].params_text;
            progress.begin(r);
        };
        observer.on_result = [&](std::size_t, const CaseResult& r) { progress.end(r); };
        run::IsolatedRunConfig config;
        config.device = device;
        config.options.hot_cache = hot;
        config.options.verify_only = verify_only;
        config.case_timeout_s = timeout > 0 ? timeout : s.timing.timeout_s;
        if (!runnable.empty()) {
            auto ran = run::run_isolated(s, runnable, compiled.modules, config, observer);
            for (std::size_t k = 0; k < ran.size(); ++k) results[runnable_index[k]] = std::move(ran[k]);
        }

        report::RunReport rep;
        rep.suite = s.name;
        rep.suite_file = s.file.string();
        rep.mode = "gpu";
        rep.device_name = device_info->name;
        rep.arch = device_info->arch;
        rep.driver_version =
            fmt::format("{}.{}", device_info->driver_version / 1000, device_info->driver_version % 1000 / 10);
        rep.harness_version = HARNESS_VERSION;
        rep.timestamp = utc_timestamp();
        rep.results = std::move(results);
        for (auto& r : rep.results) r.arch = device_info->arch;

        const fs::path out_dir = fs::path(out_root) / s.name;
        for (const auto& reporter : report::reporter_table()) reporter.write(rep, out_dir, std::cout);
        if (report::totals(rep).failed > 0) exit_code = exit_failure;
    }
    return exit_code;
}

int check_command(const std::vector<std::string>& args)
{
    CLI::App app{"Validate suites and compile every variant for the given architectures (no GPU needed).",
                 "check"};
    CommonOptions common;
    add_common(app, common);
    std::vector<std::string> archs;
    app.add_option("--arch", archs, "architectures, e.g. sm_90 (default: the suite's archs)");
    if (auto code = parse(app, args)) return *code;

    const auto cache = make_cache(common);
    int exit_code = exit_pass;
    for (const auto& file : common.suites) {
        const suite::Suite s = suite::load_suite(file);
        const auto cases = suite::expand_cases(s);
        fmt::print("{}: suite {}, {} variants, {} cases\n", file, s.name, s.variants.size(), cases.size());
        for (const auto& arch : archs.empty() ? s.archs : archs) {
            const auto compiled = compile::compile_suite(s, arch, cache ? &*cache : nullptr);
            for (const auto& v : s.variants) {
                if (auto err = compiled.errors.find(v.name); err != compiled.errors.end()) {
                    fmt::print("  {:<8} {:<24} FAILED\n{}\n", arch, v.name, err->second);
                    exit_code = exit_failure;
                } else {
                    fmt::print("  {:<8} {:<24} ok{}\n", arch, v.name,
                               compiled.modules.at(v.name).from_cache ? " (cached)" : "");
                }
            }
        }
    }
    return exit_code;
}

int list_command(const std::vector<std::string>& args)
{
    CLI::App app{"List the cases a suite expands to.", "list"};
    CommonOptions common;
    add_common(app, common);
    if (auto code = parse(app, args)) return *code;
    for (const auto& file : common.suites) {
        const suite::Suite s = suite::load_suite(file);
        for (const auto& c : suite::expand_cases(s))
            fmt::print("{} {} {}\n", s.name, s.variants[c.variant].name, c.params_text);
    }
    return exit_pass;
}

} // namespace harness::cli
