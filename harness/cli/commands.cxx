#include "harness/cli/commands.hxx"

#include "harness/cli/exit_codes.hxx"
#include "harness/cli/options.hxx"
#include "harness/core/error.hxx"
#include "harness/core/text.hxx"

#include <fmt/format.h>

namespace harness::cli {

namespace {

const Subcommand commands[] = {
    {"run", "compile, verify, time and measure every case of one or more suites", run_command},
    {"check", "validate suites and compile every variant (no GPU needed)", check_command},
    {"list", "list the cases a suite expands to", list_command},
    {"metrics", "list every metric: unit, exact or noisy, better direction, default rule, source", metrics_command},
    {"baseline", "record baselines: `baseline update [--static] SUITE...`", baseline_command},
    {"merge",
     "combine results.json files of one suite (e.g. shards): `merge A.json B.json -o OUT.json`; `--gate` gates the "
     "whole and writes every report",
     merge_command},
    {"report", "render saved results (results.json) as a self-contained HTML page (no GPU needed)", report_command},
    {"sass-diff",
     "the normalised SASS of two runs, of a run and its baseline, or of two revisions of a suite (`--suite`), diffed "
     "by "
     "source line: `sass-diff BEFORE AFTER`",
     sass_diff_command},
    {"crosscheck", "compare a run's hardware counters with Nsight Compute's CSV for the same cases",
     crosscheck_command},
    {"stability", "check that repeated runs of a suite repeat every exact figure: `stability A.json B.json ...`",
     stability_command},
    {"bisect", "find the first commit at which a figure moved: `bisect --good REV --bad REV SUITE`", bisect_command},
    {"history",
     "a performance history across commits: `history record|list|page --store DIR ...`, change points and creep",
     history_command},
    {"scaffold",
     "list a kernel file's or nvcc module's kernels and write a suite skeleton: `scaffold kernels/x.cu -o "
     "suites/x.yaml`",
     scaffold_command},
    {"help", "show this help", help_command},
};

} // namespace

std::span<const Subcommand> command_table()
{
    return commands;
}

namespace {

/// Describes the tool on `app` (named "harness").
void describe_tool(CLI::App& app)
{
    app.description(fmt::format("harness {} - kernel regression harness", HARNESS_VERSION));
    app.footer("harness <command> --help shows a command's options.\n\nexit codes:\n"
               "  0  every case passed and nothing regressed\n"
               "  1  a regression, a failed expect rule, wrong output, fault, hang or compile error\n"
               "  2  bad input: the suite, baseline or waiver file, or the command line is wrong\n"
               "  3  environment: no GPU when one is required, no counter permission, files that cannot be "
               "written");
    app.set_version_flag("--version", fmt::format("harness {}", HARNESS_VERSION));
}

} // namespace

int help_command(const std::vector<std::string>& args)
{
    // `harness help run` is `harness run --help`.
    if (!args.empty())
        for (const auto& c : commands)
            if (args[0] == c.name && c.run != help_command) return c.run({"--help"});
    CLI::App app{"", "harness"};
    describe_tool(app);
    return dispatch_group(app, commands, {});
}

int dispatch(const std::vector<std::string>& args)
{
    CLI::App app{"", "harness"};
    describe_tool(app);
    return dispatch_group(app, commands, args);
}

int run_tool(const std::vector<std::string>& args)
{
    try {
        return dispatch(args);
    } catch (const Error& e) {
        fmt::print(stderr, "harness: {}\n", e.what());
        switch (e.kind()) {
        case ErrorKind::bad_input: return exit_bad_input;
        case ErrorKind::environment: return exit_environment;
        case ErrorKind::internal: return exit_environment;
        }
    } catch (const std::exception& e) {
        fmt::print(stderr, "harness: internal error: {}\n", e.what());
    }
    return exit_environment;
}

} // namespace harness::cli
