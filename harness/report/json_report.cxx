#include "harness/core/error.hxx"
#include "harness/report/run_report.hxx"

#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace harness::report {

namespace {
constexpr const char* schema_name = "harness-results";
}

void to_json(nlohmann::json& j, const RunReport& r)
{
    j = {{"schema", schema_name},
         {"schema_version", results_schema_version},
         {"suite", r.suite},
         {"suite_file", r.suite_file},
         {"mode", r.mode},
         {"device_name", r.device_name},
         {"arch", r.arch},
         {"driver_version", r.driver_version},
         {"cuda_version", r.cuda_version},
         {"harness_version", r.harness_version},
         {"git_revision", r.git_revision},
         {"timestamp", r.timestamp},
         {"sm_count", r.sm_count},
         {"memory_bandwidth_gbs", r.memory_bandwidth_gbs},
         {"fp32_peak_gflops", r.fp32_peak_gflops},
         {"profiled", r.profiled},
         {"fail_on_improvement", r.fail_on_improvement},
         {"baseline_files", r.baseline_files},
         {"notes", r.notes},
         {"results", r.results}};
}

void from_json(const nlohmann::json& j, RunReport& r)
{
    r.suite = j.at("suite").get<std::string>();
    r.suite_file = j.value("suite_file", "");
    r.mode = j.at("mode").get<std::string>();
    r.device_name = j.value("device_name", "");
    r.arch = j.value("arch", "");
    r.driver_version = j.value("driver_version", "");
    r.cuda_version = j.value("cuda_version", "");
    r.harness_version = j.value("harness_version", "");
    r.git_revision = j.value("git_revision", "");
    r.timestamp = j.value("timestamp", "");
    r.sm_count = j.value("sm_count", 0);
    r.memory_bandwidth_gbs = j.value("memory_bandwidth_gbs", 0.0);
    r.fp32_peak_gflops = j.value("fp32_peak_gflops", 0.0);
    r.profiled = j.value("profiled", false);
    r.fail_on_improvement = j.value("fail_on_improvement", false);
    r.baseline_files = j.value("baseline_files", std::vector<std::string>{});
    r.notes = j.value("notes", std::vector<std::string>{});
    r.results = j.at("results").get<std::vector<CaseResult>>();
}

std::string results_json(const RunReport& report)
{
    return nlohmann::json(report).dump(1) + "\n";
}

RunReport read_results_json(const std::filesystem::path& file)
{
    std::ifstream in(file, std::ios::binary);
    if (!in) throw Error(ErrorKind::bad_input, fmt::format("{}: cannot open", file.string()));
    std::stringstream text;
    text << in.rdbuf();
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text.str());
    } catch (const nlohmann::json::parse_error& e) {
        throw Error(ErrorKind::bad_input, fmt::format("{}: not valid JSON (byte {}): {}", file.string(), e.byte, e.what()));
    }
    if (!j.is_object() || j.value("schema", "") != schema_name)
        throw Error(ErrorKind::bad_input, fmt::format("{}: not a harness results file (schema is not '{}')",
                                                      file.string(), schema_name));
    const int version = j.value("schema_version", 0);
    if (version != results_schema_version)
        throw Error(ErrorKind::bad_input, fmt::format("{}: results schema version {} (this harness reads version {})",
                                                      file.string(), version, results_schema_version));
    try {
        return j.get<RunReport>();
    } catch (const nlohmann::json::exception& e) {
        throw Error(ErrorKind::bad_input, fmt::format("{}: {}", file.string(), e.what()));
    } catch (const Error& e) {
        throw Error(ErrorKind::bad_input, fmt::format("{}: {}", file.string(), e.what()));
    }
}

} // namespace harness::report
