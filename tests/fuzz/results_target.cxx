// The results.json reader, as `harness report`, `merge` and `baseline update --from` use it, and
// every report rendered from what it read.

#include "rules.hxx"
#include "targets.hxx"

#include "harness/core/error.hxx"
#include "harness/report/reporters.hxx"

#include <fmt/format.h>
#include <fstream>
#include <sstream>

namespace harness::fuzz {

namespace {

/// Names that become folders and files (baselines/<suite>/<arch>.csv, reports/<suite>/). A static
/// run over several architectures has them all in its `arch`: "sm_80,sm_90".
void require_names(const std::string& suite, const std::string& archs, const std::string& where)
{
    require(is_folder_name(suite), "names-are-folder-names",
            fmt::format("{} has the suite '{}'", where, excerpt(suite)));
    for (std::size_t begin = 0; !archs.empty() && begin <= archs.size();) {
        const std::size_t end = std::min(archs.find(',', begin), archs.size());
        const std::string_view arch = std::string_view(archs).substr(begin, end - begin);
        require(is_arch_name(arch), "names-are-folder-names",
                fmt::format("{} has the architecture '{}'", where, excerpt(arch)));
        begin = end + 1;
    }
}

} // namespace

Reception run_results(const std::string& input, const InputContext& context)
{
    const auto file = context.scratch / "results.json";
    {
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        out << input;
    }
    harness::RunReport r;
    try {
        r = harness::read_results_json(file);
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::bad_input) throw;
        return {false, e.what()};
    }
    require_names(r.suite, r.arch, "the run");
    for (const auto& c : r.results) {
        require(c.arch.find(',') == std::string::npos, "names-are-folder-names",
                fmt::format("case '{}' has the architectures '{}'", excerpt(c.variant), excerpt(c.arch)));
        require_names(c.suite, c.arch, fmt::format("case '{}'", excerpt(c.variant)));
    }

    // What `harness report` and a run's reporters do with it.
    (void)harness::totals(r);
    (void)report::html_report(r);
    (void)report::results_csv(r);
    (void)report::junit_xml(r);
    (void)report::markdown_summary(r);
    std::ostringstream console;
    report::write_console_table(r, console);
    report::write_console_verdicts(r, console);
    return {true, ""};
}

std::span<const std::string_view> results_tokens()
{
    using namespace std::string_view_literals;
    // clang-format off
    static constexpr std::string_view tokens[] = {
        "{"sv, "}"sv, "["sv, "]"sv, "\"\""sv, "null"sv, "true"sv, "1e999"sv, "-1e999"sv, "1e-400"sv, "-0"sv,
        "18446744073709551616"sv, "\"\\u0000\""sv, "\"\\ud800\""sv, "\"\\u202e\""sv, "\"schema\": 5"sv,
        "\"schema_version\": \"1\""sv, "\"schema_version\": 1.5"sv, "\"schema\": \"harness-results\""sv,
        "\"results\": []"sv, "\"results\": {}"sv, "\"arch\": \"../reduce/sm_90\""sv, "\"arch\": \"/tmp/x\""sv,
        "\"suite\": \"..\""sv, "\"status\": \"passed\""sv, "\"status\": \"bogus\""sv,
        "\"verdict\": \"regressed\""sv, "\"metrics\": {\"registers\": 1e308}"sv,
        "\"params\": {\"N\": 1e30}"sv, "\"time_samples_us\": [1, 2]"sv, "\"hotspots\": [{}]"sv,
        "\"line\": -1"sv, "\"snippet_first_line\": 2147483648"sv, "\"baseline\": null"sv,
        "\"sm_count\": 1e10"sv, "\"memory_bandwidth_gbs\": 0"sv, "\"fp32_peak_gflops\": -1"sv,
        "\"notes\": [1]"sv, "\"profiled\": \"yes\""sv, "\"shard\": {\"count\": 2, \"indices\": [3]}"sv,
        "\"shard\": {\"count\": 0, \"indices\": []}"sv, "\"point\": -1"sv, "\"comparison_notes\": {}"sv,
    };
    // clang-format on
    return tokens;
}

} // namespace harness::fuzz
