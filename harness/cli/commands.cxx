#include "harness/cli/commands.hxx"

#include "harness/cli/exit_codes.hxx"
#include "harness/core/error.hxx"
#include "harness/core/text.hxx"

#include <fmt/format.h>

namespace harness::cli {

namespace {

const Command commands[] = {
    {"run", "compile, verify, time and measure every case of one or more suites", run_command},
    {"check", "validate suites and compile every variant (no GPU needed)", check_command},
    {"list", "list the cases a suite expands to", list_command},
    {"metrics", "list every metric: unit, exact or noisy, better direction, default rule, source", metrics_command},
    {"baseline", "record baselines: `baseline update [--static] SUITE...`", baseline_command},
    {"merge", "combine results.json files of one suite (e.g. shards): `merge A.json B.json -o OUT.json`",
     merge_command},
    {"report", "render saved results (results.json) as a self-contained HTML page (no GPU needed)", report_command},
    {"crosscheck", "compare a run's hardware counters with Nsight Compute's CSV for the same cases",
     crosscheck_command},
    {"stability", "check that repeated runs of a suite repeat every exact figure: `stability A.json B.json ...`",
     stability_command},
    {"help", "show this help", help_command},
};

} // namespace

std::span<const Command> command_table()
{
    return commands;
}

int help_command(const std::vector<std::string>&)
{
    fmt::print("harness {} - kernel regression harness\n\n"
               "usage: harness <command> [options] (harness <command> --help for its options)\n\ncommands:\n",
               HARNESS_VERSION);
    for (const auto& c : commands) fmt::print("  {:<11} {}\n", c.name, c.description);
    fmt::print("\nexit codes:\n"
               "  0  every case passed and nothing regressed\n"
               "  1  a regression, a failed expect rule, wrong output, fault, hang or compile error\n"
               "  2  bad input: the suite, baseline or waiver file, or the command line is wrong\n"
               "  3  environment: no GPU when one is required, no counter permission, files that cannot be written\n");
    return exit_pass;
}

int dispatch(const std::vector<std::string>& args)
{
    if (args.empty() || args[0] == "--help" || args[0] == "-h") return help_command({});
    if (args[0] == "--version") {
        fmt::print("harness {}\n", HARNESS_VERSION);
        return exit_pass;
    }
    std::vector<std::string> names;
    for (const auto& c : commands) {
        if (args[0] == c.name) return c.run({args.begin() + 1, args.end()});
        names.push_back(c.name);
    }
    fmt::print(stderr, "harness: unknown command '{}'{}; commands: {}\n", args[0], did_you_mean(args[0], names),
               join(names));
    return exit_bad_input;
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
