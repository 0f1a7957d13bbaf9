#include "harness/pipeline/case_costs.hxx"

#include "harness/core/atomic_file.hxx"
#include "harness/pipeline/shard.hxx"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace harness::pipeline {

namespace fs = std::filesystem;

namespace {

/// A GPU model's name as a folder name: letters, digits, '-' and '.', the rest '_'.
std::string folder_name(const std::string& gpu_name)
{
    std::string name;
    for (const char ch : gpu_name)
        name += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '.') ? ch : '_';
    return name.empty() || name == "." || name == ".." ? "unknown" : name;
}

std::string key_of(const std::string& variant, const std::string& params_text)
{
    return variant + " " + params_text;
}

void put(nlohmann::json& j, const char* name, const std::optional<double>& value)
{
    if (value) j[name] = *value;
}

std::optional<double> take(const nlohmann::json& j, const char* name)
{
    const auto it = j.find(name);
    if (it == j.end() || !it->is_number()) return std::nullopt;
    const double value = it->get<double>();
    return std::isfinite(value) && value >= 0 ? std::optional<double>(value) : std::nullopt;
}

} // namespace

CaseCostBook::CaseCostBook(fs::path cache_dir, const std::string& gpu_name, const std::string& suite)
    : file_(cache_dir / "case-costs" / folder_name(gpu_name) / (suite + ".json"))
{
    std::ifstream in(file_);
    if (!in) return;
    std::stringstream text;
    text << in.rdbuf();
    // A damaged book is an empty one: it only orders work, and the next run rewrites it.
    const auto j = nlohmann::json::parse(text.str(), nullptr, false);
    if (!j.is_object() || !j.contains("cases") || !j["cases"].is_object()) return;
    for (const auto& [key, value] : j["cases"].items()) {
        if (!value.is_object()) continue;
        entries_[key] = {take(value, "measured_s"), take(value, "measured_profile_s"), take(value, "reused_s"),
                         take(value, "unprofiled_s"), take(value, "buffers_s")};
    }
}

std::optional<double> CaseCostBook::expected(const std::string& variant, const std::string& params_text,
                                             const CostConditions& conditions) const
{
    const auto it = entries_.find(key_of(variant, params_text));
    if (it == entries_.end()) return std::nullopt;
    const Entry& e = it->second;
    // Without the counters' part: the case as measured, less its profiling.
    const auto bare = [&]() -> std::optional<double> {
        if (e.unprofiled_s) return e.unprofiled_s;
        if (e.measured_s && e.measured_profile_s) return std::max(0.0, *e.measured_s - *e.measured_profile_s);
        return std::nullopt;
    };
    if (!conditions.profiled) return bare();
    if (conditions.counters_reusable) {
        if (e.reused_s) return e.reused_s;
        // Reused counters leave the noisy ones to measure: a pass or two, not the instrumented runs.
        if (const auto b = bare(); b && e.measured_profile_s) return *b + std::min(*e.measured_profile_s, 0.25);
        return e.measured_s;
    }
    return e.measured_s;
}

std::optional<double> CaseCostBook::buffers(const std::string& variant, const std::string& params_text) const
{
    const auto it = entries_.find(key_of(variant, params_text));
    return it == entries_.end() ? std::nullopt : it->second.buffers_s;
}

void CaseCostBook::record(const std::vector<CaseResult>& results)
{
    for (const auto& r : results) {
        // The case's own cost: without the reference outputs it computed for want of its point's
        // reference case on its GPU, which the schedule charges to the GPU, not to the case.
        const double total = r.cost.total() - r.cost.reference;
        if (total <= 0 || !std::isfinite(total)) continue;
        Entry& e = entries_[key_of(r.variant, r.params_text)];
        if (const double own = r.cost.prepare - r.cost.reference; own > 0 && std::isfinite(own)) e.buffers_s = own;
        if (r.cost.profile.total() <= 0)
            e.unprofiled_s = total;
        else if (!r.reused_metrics.empty())
            e.reused_s = total;
        else {
            e.measured_s = total;
            e.measured_profile_s = r.cost.profile.total();
        }
    }
}

bool CaseCostBook::save() const
{
    nlohmann::json cases = nlohmann::json::object();
    for (const auto& [key, e] : entries_) {
        nlohmann::json j = nlohmann::json::object();
        put(j, "measured_s", e.measured_s);
        put(j, "measured_profile_s", e.measured_profile_s);
        put(j, "reused_s", e.reused_s);
        put(j, "unprofiled_s", e.unprofiled_s);
        put(j, "buffers_s", e.buffers_s);
        cases[key] = j;
    }
    try {
        write_file_atomically(file_, nlohmann::json{{"cases", cases}}.dump(1) + "\n");
        return true;
    } catch (const std::exception&) {
        return false;
    }
}

std::vector<double> expected_case_costs(const suite::Suite& suite, const std::vector<suite::Case>& cases,
                                        const fs::path& baseline_dir, const CaseCostBook* book,
                                        const CostConditions& conditions, CostSources* sources)
{
    std::optional<BaselineTimes> times; // read only when the book lacks a case
    std::vector<double> costs;
    costs.reserve(cases.size());
    for (const auto& c : cases) {
        const std::string& variant = suite.variants[c.variant].name;
        if (const auto known = book ? book->expected(variant, c.params_text, conditions) : std::nullopt) {
            costs.push_back(*known);
            if (sources) ++sources->recorded;
            continue;
        }
        if (!times) times = baseline_dir.empty() ? BaselineTimes{} : baseline_times(suite, baseline_dir);
        // Measured counters take instrumented runs of the kernel, each many times its plain run.
        const double launches =
            launches_per_case + (conditions.profiled && !conditions.counters_reusable ? instrumented_launches : 0.0);
        costs.push_back(case_overhead_s + launches * times->of(variant, c.params_text) * 1e-6);
        if (sources) ++sources->modelled;
    }
    return costs;
}

} // namespace harness::pipeline
