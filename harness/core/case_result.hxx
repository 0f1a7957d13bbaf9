#pragma once
// The one contract between the runner and everything after it (comparison, reports).

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

namespace harness {

/// How a case ended.
enum class CaseStatus {
    passed,               ///< ran, output matches the reference
    failed_verification,  ///< ran, output differs from the reference
    compile_error,        ///< NVRTC rejected the variant
    launch_error,         ///< bad geometry, out of memory, or a driver error before the kernel ran
    fault,                ///< the kernel faulted (illegal address, trap, assert) or the worker died
    timeout,              ///< the case ran past its time limit
    skipped,              ///< not run (e.g. no GPU), with the reason in the message
};

const char* case_status_name(CaseStatus status);
CaseStatus case_status_from_name(const std::string& name);
/// True for the statuses that fail a run.
bool case_status_fails(CaseStatus status);

/// A named figure of a case; unit and meaning come from the metric table.
struct MetricValue {
    std::string name;
    double value = 0.0;
};

/// Everything known about one variant at one parameter point.
struct CaseResult {
    std::string suite;
    std::string variant;
    std::string arch;  ///< sm_90: the GPU's, or the target of a static-tier result
    std::map<std::string, std::int64_t> params;
    std::string params_text;
    CaseStatus status = CaseStatus::skipped;
    std::string message;  ///< why it failed, or a note
    std::string occupancy_limiter;  ///< registers / shared_memory / blocks / warps
    std::vector<MetricValue> metrics;
    std::vector<double> time_samples_us;

    std::optional<double> metric(const std::string& name) const;
    void set_metric(const std::string& name, double value);
};

void to_json(nlohmann::json& j, const CaseResult& r);
void from_json(const nlohmann::json& j, CaseResult& r);

} // namespace harness
