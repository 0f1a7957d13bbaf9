// `harness crosscheck`: our counters next to Nsight Compute's (see ci/ncu-crosscheck.sh).

#include "harness/cli/commands.hxx"
#include "harness/cli/exit_codes.hxx"
#include "harness/cli/options.hxx"
#include "harness/core/error.hxx"
#include "harness/core/input_files.hxx"
#include "harness/core/text.hxx"
#include "harness/profile/ncu_crosscheck.hxx"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace harness::cli {

int crosscheck_command(const std::vector<std::string>& args)
{
    CLI::App app{"Compare a run's hardware counters with Nsight Compute's for the same cases "
                 "(`ncu --csv --page raw --nvtx --print-nvtx-rename kernel` over `harness run --external-profiler`).",
                 "harness crosscheck"};
    std::string results_file, static_file;
    std::vector<std::string> ncu_files;
    bool list_metrics = false, list_dram_metrics = false, times = false;
    double times_min_us = 5.0;
    app.add_flag("--ncu-metrics", list_metrics, "print the metric list to pass to `ncu --metrics` and stop");
    app.add_flag("--ncu-dram-metrics", list_dram_metrics,
                 "print the DRAM metrics alone (one pass: ncu saves and restores no memory) and stop");
    app.add_option("--ncu", ncu_files,
                   "ncu's CSV output; may be given more than once (a later file's figures replace an earlier one's)")
        ->check(CLI::ExistingFile)
        ->allow_extra_args(false); // `--ncu A --ncu B results.json`: one file per --ncu
    app.add_option("--static", static_file,
                   "results.json of a --static run: compare its registers, shared and local bytes, blocks per SM "
                   "and theoretical occupancy with the driver's in the GPU run's results")
        ->check(CLI::ExistingFile);
    app.add_flag("--times", times,
                 "compare time medians with the sum of ncu's gpu__time_duration per case instead of the counters "
                 "(ncu takes one sample per run: with several --ncu runs, the median of their sums; printed, "
                 "never failed)");
    app.add_option("--times-min-us", times_min_us, "with --times: tally the cases at least this long")
        ->capture_default_str()
        ->check(CLI::Validator(
            [](std::string& text) -> std::string {
                const auto us = parse_decimal_number(text);
                return us && *us >= 0 ? ""
                                      : fmt::format("expected microseconds, 0 or more, not '{}'", text.substr(0, 40));
            },
            "US"));
    app.add_option("results", results_file, "results.json of a profiled run")->check(CLI::ExistingFile);
    if (auto code = parse(app, args)) return *code;
    if (list_metrics || list_dram_metrics) {
        fmt::print("{}\n", list_dram_metrics ? profile::ncu_dram_metric_list() : profile::ncu_metric_list());
        return exit_pass;
    }
    if (!results_file.empty() && !static_file.empty()) {
        const auto rows = profile::static_vs_driver(harness::read_results_json(static_file),
                                                    harness::read_results_json(results_file));
        if (rows.empty())
            throw Error(ErrorKind::bad_input, fmt::format("no case of {} matches one of {} on the GPU's architecture",
                                                          static_file, results_file));
        fmt::print("{}", profile::format_crosscheck(rows, "static tier", "driver"));
        return std::all_of(rows.begin(), rows.end(), [](const auto& r) { return r.within; }) ? exit_pass : exit_failure;
    }
    if (results_file.empty() || ncu_files.empty())
        throw Error(ErrorKind::bad_input, "crosscheck needs a results.json and --ncu <csv> or --static <results.json>");

    std::vector<std::vector<profile::NcuKernel>> runs;
    std::size_t kernel_count = 0;
    std::string example;
    for (const auto& file : ncu_files) {
        runs.push_back(profile::parse_ncu_csv(read_input_file(file, profile::max_ncu_csv_bytes, "ncu CSV file"), file));
        kernel_count += runs.back().size();
        if (example.empty() && !runs.back().empty()) example = runs.back().front().name;
    }
    const auto ours = harness::read_results_json(results_file);
    if (times) {
        const auto time_rows = profile::time_vs_ncu(ours, runs);
        if (time_rows.empty())
            throw Error(ErrorKind::bad_input, fmt::format("no timed case of {} matches a kernel of {}", results_file,
                                                          fmt::join(ncu_files, ", ")));
        fmt::print("{}", profile::format_time_crosscheck(time_rows, times_min_us));
        return exit_pass;
    }
    const auto rows = profile::crosscheck(ours, runs);
    if (rows.empty())
        throw Error(ErrorKind::bad_input,
                    fmt::format("no case of {} matches a kernel of {} ({} kernels; names like '{}')", results_file,
                                fmt::join(ncu_files, ", "), kernel_count, example));
    fmt::print("{}", profile::format_crosscheck(rows));
    return std::all_of(rows.begin(), rows.end(), [](const auto& r) { return r.within; }) ? exit_pass : exit_failure;
}

} // namespace harness::cli
