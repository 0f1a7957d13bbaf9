#include "harness/cli/commands.hxx"
#include "harness/cli/exit_codes.hxx"
#include "harness/cli/options.hxx"
#include "harness/core/atomic_file.hxx"
#include "harness/core/error.hxx"
#include "harness/pipeline/recent_history.hxx"
#include "harness/report/reporters.hxx"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <iostream>

namespace harness::cli {

int report_command(const std::vector<std::string>& args)
{
    CLI::App app{"Render saved results (results.json) as a self-contained HTML report; no GPU needed.",
                 "harness report"};
    std::string results_file;
    std::string output_file;
    app.add_option("results", results_file, "results.json written by `harness run`")->required();
    app.add_option("-o,--output", output_file, "HTML file to write (default: report.html next to the results)");
    std::string history_store, repo = ".";
    add_history_option(app, history_store);
    app.add_option("--repo", repo,
                   "with --history: the git repository whose first-parent history orders commits (default: .)");
    if (const auto code = parse(app, args)) return *code;

    const std::filesystem::path input(results_file);
    const std::filesystem::path output =
        output_file.empty() ? input.parent_path() / "report.html" : std::filesystem::path(output_file);
    // The errors of this command map onto the exit-code contract here, so that callers (and tests)
    // get the code without going through main.
    try {
        harness::RunReport run = harness::read_results_json(input);
        if (!history_store.empty()) pipeline::add_recent_history(run, history_store, repo, std::cout);
        write_file_atomically(output, report::html_report(run));
        fmt::print("wrote {}\n", output.string());
        return exit_pass;
    } catch (const Error& e) {
        fmt::print(stderr, "harness report: {}\n", e.what());
        switch (e.kind()) {
        case ErrorKind::bad_input: return exit_bad_input;
        case ErrorKind::environment:
        case ErrorKind::internal: return exit_environment;
        }
        return exit_environment;
    }
}

} // namespace harness::cli
