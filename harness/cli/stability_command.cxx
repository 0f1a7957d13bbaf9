// `harness stability`: the results of repeated runs of one suite, side by side.

#include "harness/cli/commands.hxx"
#include "harness/cli/exit_codes.hxx"
#include "harness/cli/options.hxx"
#include "harness/compare/run_stability.hxx"

#include <fmt/format.h>

namespace harness::cli {

int stability_command(const std::vector<std::string>& args)
{
    CLI::App app{"Compare the results.json of repeated runs of one suite: every exact figure (counters, "
                 "resources) must be identical in all of them; the spread of the noisy ones (time, achieved "
                 "occupancy, DRAM bytes) is shown. Exit 1 when an exact figure differs.",
                 "harness stability"};
    std::vector<std::string> inputs;
    app.add_option("results", inputs, "results.json of each run (two or more)")->required()->check(CLI::ExistingFile);
    if (auto code = parse(app, args)) return *code;
    if (inputs.size() < 2) {
        fmt::print(stderr, "harness stability: results: two results.json files or more are needed, got {}\n",
                   inputs.size());
        return exit_bad_input;
    }

    std::vector<harness::RunReport> runs;
    for (const auto& file : inputs) runs.push_back(harness::read_results_json(file));
    const auto stability = compare::run_stability(runs, inputs);
    fmt::print("{}", compare::format_stability(stability));
    return stability.exact_figures_repeat() ? exit_pass : exit_failure;
}

} // namespace harness::cli
