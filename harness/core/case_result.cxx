#include "harness/core/case_result.hxx"

#include "harness/core/error.hxx"

#include <nlohmann/json.hpp>

namespace harness {

const char* case_status_name(CaseStatus status)
{
    switch (status) {
    case CaseStatus::passed: return "passed";
    case CaseStatus::failed_verification: return "failed_verification";
    case CaseStatus::compile_error: return "compile_error";
    case CaseStatus::launch_error: return "launch_error";
    case CaseStatus::fault: return "fault";
    case CaseStatus::timeout: return "timeout";
    case CaseStatus::skipped: return "skipped";
    }
    return "?";
}

CaseStatus case_status_from_name(const std::string& name)
{
    for (auto s : {CaseStatus::passed, CaseStatus::failed_verification, CaseStatus::compile_error,
                   CaseStatus::launch_error, CaseStatus::fault, CaseStatus::timeout, CaseStatus::skipped})
        if (name == case_status_name(s)) return s;
    throw Error(ErrorKind::bad_input, "unknown case status '" + name + "'");
}

bool case_status_fails(CaseStatus status)
{
    switch (status) {
    case CaseStatus::passed:
    case CaseStatus::skipped: return false;
    case CaseStatus::failed_verification:
    case CaseStatus::compile_error:
    case CaseStatus::launch_error:
    case CaseStatus::fault:
    case CaseStatus::timeout: return true;
    }
    return true;
}

std::optional<double> CaseResult::metric(const std::string& name) const
{
    for (const auto& m : metrics)
        if (m.name == name) return m.value;
    return std::nullopt;
}

void CaseResult::set_metric(const std::string& name, double value)
{
    for (auto& m : metrics)
        if (m.name == name) {
            m.value = value;
            return;
        }
    metrics.push_back({name, value});
}

void to_json(nlohmann::json& j, const CaseResult& r)
{
    nlohmann::json metrics = nlohmann::json::object();
    for (const auto& m : r.metrics) metrics[m.name] = m.value;
    j = {{"suite", r.suite},
         {"variant", r.variant},
         {"arch", r.arch},
         {"params", r.params},
         {"params_text", r.params_text},
         {"status", case_status_name(r.status)},
         {"message", r.message},
         {"occupancy_limiter", r.occupancy_limiter},
         {"metrics", metrics},
         {"time_samples_us", r.time_samples_us}};
}

void from_json(const nlohmann::json& j, CaseResult& r)
{
    r.suite = j.at("suite").get<std::string>();
    r.variant = j.at("variant").get<std::string>();
    r.arch = j.value("arch", "");
    r.params = j.at("params").get<std::map<std::string, std::int64_t>>();
    r.params_text = j.at("params_text").get<std::string>();
    r.status = case_status_from_name(j.at("status").get<std::string>());
    r.message = j.value("message", "");
    r.occupancy_limiter = j.value("occupancy_limiter", "");
    r.metrics.clear();
    for (const auto& [name, value] : j.at("metrics").items()) r.metrics.push_back({name, value.get<double>()});
    r.time_samples_us = j.value("time_samples_us", std::vector<double>{});
}

} // namespace harness
