// `harness merge`: results of several runs (e.g. shards) of one suite into one results.json.

#include "harness/cli/commands.hxx"
#include "harness/cli/exit_codes.hxx"
#include "harness/cli/options.hxx"
#include "harness/core/atomic_file.hxx"
#include "harness/report/merge.hxx"

#include <fmt/format.h>

namespace harness::cli {

int merge_command(const std::vector<std::string>& args)
{
    CLI::App app{"Combine results.json files of one suite on one GPU (e.g. shards) into one.", "harness merge"};
    std::vector<std::string> inputs;
    std::string output;
    app.add_option("inputs", inputs, "results.json files")->required()->check(CLI::ExistingFile);
    app.add_option("-o,--out", output, "merged results.json")->required();
    if (auto code = parse(app, args)) return *code;

    std::vector<harness::RunReport> reports;
    for (const auto& file : inputs) reports.push_back(harness::read_results_json(file));
    const harness::RunReport merged = report::merge_reports(reports, inputs);
    write_file_atomically(output, harness::results_json(merged));
    const harness::Totals t = harness::totals(merged, merged.fail_on_improvement);
    fmt::print("wrote {}: {} cases from {} files ({} passed, {} failed, {} regressed, {} skipped)\n", output,
               merged.results.size(), inputs.size(), t.passed, t.failed, t.regressed, t.skipped);
    return t.failed > 0 || t.regressed > 0 ? exit_failure : exit_pass;
}

} // namespace harness::cli
