// `harness crosscheck`: our counters next to Nsight Compute's (see ci/ncu-crosscheck.sh).

#include "harness/cli/commands.hxx"
#include "harness/cli/exit_codes.hxx"
#include "harness/cli/options.hxx"
#include "harness/core/error.hxx"
#include "harness/profile/ncu_crosscheck.hxx"

#include <fmt/format.h>
#include <fstream>
#include <sstream>

namespace harness::cli {

int crosscheck_command(const std::vector<std::string>& args)
{
    CLI::App app{"Compare a run's hardware counters with Nsight Compute's for the same cases "
                 "(`ncu --csv --page raw --nvtx --print-nvtx-rename kernel` over `harness run --external-profiler`).",
                 "crosscheck"};
    std::string results_file, ncu_file, static_file;
    bool list_metrics = false;
    app.add_flag("--ncu-metrics", list_metrics, "print the metric list to pass to `ncu --metrics` and stop");
    app.add_option("--ncu", ncu_file, "ncu's CSV output")->check(CLI::ExistingFile);
    app.add_option("--static", static_file,
                   "results.json of a --static run: compare its registers, shared and local bytes, blocks per SM "
                   "and theoretical occupancy with the driver's in the GPU run's results")
        ->check(CLI::ExistingFile);
    app.add_option("results", results_file, "results.json of a profiled run")->check(CLI::ExistingFile);
    if (auto code = parse(app, args)) return *code;
    if (list_metrics) {
        fmt::print("{}\n", profile::ncu_metric_list());
        return exit_pass;
    }
    if (!results_file.empty() && !static_file.empty()) {
        const auto rows =
            profile::static_vs_driver(report::read_results_json(static_file), report::read_results_json(results_file));
        if (rows.empty())
            throw Error(ErrorKind::bad_input,
                        fmt::format("no case of {} matches one of {} on the GPU's architecture", static_file, results_file));
        fmt::print("{}", profile::format_crosscheck(rows, "static tier", "driver"));
        return std::all_of(rows.begin(), rows.end(), [](const auto& r) { return r.within; }) ? exit_pass : exit_failure;
    }
    if (results_file.empty() || ncu_file.empty())
        throw Error(ErrorKind::bad_input, "crosscheck needs a results.json and --ncu <csv> or --static <results.json>");

    std::ifstream in(ncu_file, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    const auto kernels = profile::parse_ncu_csv(text.str(), ncu_file);
    const auto ours = report::read_results_json(results_file);
    const auto rows = profile::crosscheck(ours, kernels);
    if (rows.empty())
        throw Error(ErrorKind::bad_input,
                    fmt::format("no case of {} matches a kernel of {} ({} kernels; names like '{}')", results_file,
                                ncu_file, kernels.size(), kernels.empty() ? "" : kernels.front().name));
    fmt::print("{}", profile::format_crosscheck(rows));
    return std::all_of(rows.begin(), rows.end(), [](const auto& r) { return r.within; }) ? exit_pass : exit_failure;
}

} // namespace harness::cli
