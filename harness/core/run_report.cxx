#include "harness/core/run_report.hxx"

#include "harness/core/arch_limits.hxx"
#include "harness/core/enum_names.hxx"
#include "harness/core/error.hxx"
#include "harness/core/input_files.hxx"
#include "harness/core/older_results.hxx"
#include "harness/core/text.hxx"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace harness {

namespace {
constexpr const char* schema_name = "harness-results";

/// A figure of a cliff map: JSON has no infinity (an exact series' significance) nor NaN (a point
/// that did not run), so they are written as "inf", "-inf" and null.
nlohmann::json number_json(double v)
{
    if (std::isnan(v)) return nullptr;
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    return v;
}

double number_from_json(const nlohmann::json& j)
{
    if (j.is_null()) return std::numeric_limits<double>::quiet_NaN();
    if (j.is_string()) {
        const auto text = j.get<std::string>();
        if (text == "inf") return std::numeric_limits<double>::infinity();
        if (text == "-inf") return -std::numeric_limits<double>::infinity();
        throw Error(ErrorKind::bad_input, fmt::format("cliff map: '{}' is not a number", text.substr(0, 40)));
    }
    return j.get<double>();
}

nlohmann::json numbers_json(const std::vector<double>& values)
{
    auto out = nlohmann::json::array();
    for (const double v : values) out.push_back(number_json(v));
    return out;
}

std::vector<double> numbers_from_json(const nlohmann::json& j)
{
    std::vector<double> out;
    for (const auto& v : j) out.push_back(number_from_json(v));
    return out;
}

nlohmann::json cliff_map_json(const CliffMap& m)
{
    auto cliffs = nlohmann::json::array();
    for (const auto& c : m.cliffs)
        cliffs.push_back({{"x_before", number_json(c.x_before)},
                          {"x_after", number_json(c.x_after)},
                          {"level_before", number_json(c.level_before)},
                          {"level_after", number_json(c.level_after)},
                          {"depth", number_json(c.depth)},
                          {"significance", number_json(c.significance)},
                          {"cause", cliff_cause_name(c.cause)},
                          {"explanation", c.explanation}});
    auto verdicts = nlohmann::json::array();
    for (const auto& v : m.verdicts)
        verdicts.push_back({{"x_before", number_json(v.x_before)},
                            {"x_after", number_json(v.x_after)},
                            {"carrier", v.carrier},
                            {"judgement", v.judgement}});
    return {{"variant", m.variant},
            {"axis", m.axis},
            {"others", m.others},
            {"other_params", m.other_params},
            {"arch", m.arch},
            {"figure", m.figure},
            {"unit", m.unit},
            {"x", numbers_json(m.x)},
            {"values", numbers_json(m.values)},
            {"noise", numbers_json(m.noise)},
            {"cliffs", cliffs},
            {"verdicts", verdicts}};
}

CliffMap cliff_map_from_json(const nlohmann::json& j)
{
    CliffMap m;
    m.variant = j.at("variant").get<std::string>();
    m.axis = j.at("axis").get<std::string>();
    m.others = j.value("others", "");
    m.other_params = j.value("other_params", std::map<std::string, std::int64_t>{});
    m.arch = j.value("arch", "");
    m.figure = j.at("figure").get<std::string>();
    m.unit = j.value("unit", "");
    m.x = numbers_from_json(j.at("x"));
    m.values = numbers_from_json(j.at("values"));
    if (j.contains("noise")) m.noise = numbers_from_json(j.at("noise"));
    for (const auto& c : j.value("cliffs", nlohmann::json::array())) {
        Cliff cliff;
        cliff.x_before = number_from_json(c.at("x_before"));
        cliff.x_after = number_from_json(c.at("x_after"));
        cliff.level_before = number_from_json(c.at("level_before"));
        cliff.level_after = number_from_json(c.at("level_after"));
        cliff.depth = number_from_json(c.at("depth"));
        cliff.significance = number_from_json(c.at("significance"));
        const std::string cause = c.at("cause").get<std::string>();
        const auto known = cliff_cause_from_name(cause);
        if (!known)
            throw Error(ErrorKind::bad_input,
                        fmt::format("cliff map {} {}: unknown cliff cause '{}'", m.variant.substr(0, max_name_length),
                                    m.axis.substr(0, max_name_length), cause.substr(0, 40)));
        cliff.cause = *known;
        cliff.explanation = c.value("explanation", "");
        m.cliffs.push_back(std::move(cliff));
    }
    for (const auto& v : j.value("verdicts", nlohmann::json::array())) {
        CliffVerdict verdict;
        verdict.x_before = number_from_json(v.at("x_before"));
        verdict.x_after = number_from_json(v.at("x_after"));
        verdict.carrier = v.value("carrier", "");
        verdict.judgement = v.at("judgement").get<MetricVerdict>();
        m.verdicts.push_back(std::move(verdict));
    }
    return m;
}

} // namespace

constexpr EnumName<RunMode> run_mode_names[] = {{RunMode::gpu, "gpu"}, {RunMode::static_tier, "static"}};

const char* mode_name(RunMode mode)
{
    return enum_name(run_mode_names, mode);
}

std::optional<RunMode> mode_from_name(std::string_view name)
{
    return enum_from_name(run_mode_names, name);
}

void to_json(nlohmann::json& j, const RunReport& r)
{
    j = {{"schema", schema_name},
         {"schema_version", results_schema_version},
         {"suite", r.suite},
         {"suite_file", r.suite_file},
         {"mode", mode_name(r.mode)},
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
         {"comparison_notes", r.comparison_notes},
         {"results", r.results}};
    if (!r.removed.empty()) {
        auto removed = nlohmann::json::array();
        for (const auto& c : r.removed)
            removed.push_back({{"variant", c.variant},
                               {"params", c.params_text},
                               {"baseline", c.baseline},
                               {"rows", c.rows},
                               {"fails", c.fails}});
        j["removed"] = std::move(removed);
    }
    if (!r.cliff_maps.empty()) {
        auto maps = nlohmann::json::array();
        for (const auto& m : r.cliff_maps) maps.push_back(cliff_map_json(m));
        j["cliff_maps"] = std::move(maps);
    }
    if (r.shard.sharded())
        j["shard"] = {{"count", r.shard.count}, {"indices", r.shard.indices}, {"split", r.shard.split}};
}

void from_json(const nlohmann::json& j, RunReport& r)
{
    r.suite = j.at("suite").get<std::string>();
    r.suite_file = j.value("suite_file", "");
    const auto mode = j.at("mode").get<std::string>();
    const auto known = mode_from_name(mode);
    if (!known)
        throw Error(ErrorKind::bad_input, fmt::format("mode: '{}' is neither 'gpu' nor 'static'",
                                                      escape_control_characters(mode.substr(0, max_name_length))));
    r.mode = *known;
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
    r.comparison_notes = j.value("comparison_notes", std::vector<std::string>{});
    r.shard = {};
    if (j.contains("shard") && !j.at("shard").is_null()) {
        const auto& s = j.at("shard");
        r.shard.count = s.at("count").get<std::size_t>();
        r.shard.indices = s.at("indices").get<std::vector<std::size_t>>();
        r.shard.split = s.value("split", "");
    }
    r.results = j.at("results").get<std::vector<CaseResult>>();
    r.removed.clear();
    if (j.contains("removed"))
        for (const auto& c : j.at("removed"))
            r.removed.push_back({c.at("variant").get<std::string>(), c.at("params").get<std::string>(),
                                 c.value("baseline", ""), c.value("rows", std::size_t{0}), c.value("fails", false)});
    r.cliff_maps.clear();
    if (j.contains("cliff_maps"))
        for (const auto& m : j.at("cliff_maps")) r.cliff_maps.push_back(cliff_map_from_json(m));
    if (j.value("schema_version", results_schema_version) < results_version_with_facts)
        read_facts_of_older_results(r.results, r.cliff_maps);
}

std::string results_json(const RunReport& report)
{
    // Text from compilers and kernels' files may hold bytes that are not UTF-8: written as U+FFFD.
    return nlohmann::json(report).dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

namespace {

/// Names that later become paths or report anchors are checked as the loaders check them.
void check_names(const RunReport& r, const std::string& file)
{
    const auto refuse = [&](const std::string& field, const std::string& value, const std::string& problem) {
        throw Error(ErrorKind::bad_input,
                    fmt::format("{}: {} '{}' {}", file, field, value.substr(0, max_name_length), problem));
    };
    if (const auto problem = name_problem(r.suite); !problem.empty()) refuse("suite", r.suite, problem);
    // Where the run was made: one line of text each, as baseline files record it in their header.
    for (const auto& [field, value] :
         {std::pair{"cuda_version", &r.cuda_version}, std::pair{"device_name", &r.device_name},
          std::pair{"driver_version", &r.driver_version}, std::pair{"git_revision", &r.git_revision},
          std::pair{"timestamp", &r.timestamp}, std::pair{"harness_version", &r.harness_version}})
        if (const std::size_t at = control_character_offset(*value); at != std::string::npos)
            throw Error(ErrorKind::bad_input,
                        fmt::format("{}: {}: holds a control character (byte {:#04x} at offset {}): it must be one "
                                    "line of text",
                                    file, field, static_cast<unsigned char>((*value)[at]), at));
    // The run's architectures: one, or a static run's list "sm_80,sm_90"; each must be known.
    for (std::size_t begin = 0; !r.arch.empty() && begin <= r.arch.size();) {
        const std::size_t end = std::min(r.arch.find(',', begin), r.arch.size());
        const std::string arch = r.arch.substr(begin, end - begin);
        if (!find_arch_limits(arch) || !name_problem(arch).empty())
            refuse("arch", arch, "is not an architecture the harness knows");
        begin = end + 1;
    }
    if (r.shard.sharded()) {
        const auto& s = r.shard;
        const bool ascending =
            std::adjacent_find(s.indices.begin(), s.indices.end(), std::greater_equal<>()) == s.indices.end();
        if (s.count > max_shards || s.indices.empty() || !ascending || s.indices.front() < 1 ||
            s.indices.back() > s.count || s.split.size() > 64)
            refuse("shard", s.text(), fmt::format("is not a share of at most {} shards", max_shards));
    }
    for (std::size_t i = 0; i < r.results.size(); ++i) {
        const CaseResult& c = r.results[i];
        const std::string at = fmt::format("results[{}].", i);
        if (c.suite != r.suite) refuse(at + "suite", c.suite, fmt::format("is not the file's suite '{}'", r.suite));
        if (const auto problem = name_problem(c.variant); !problem.empty()) refuse(at + "variant", c.variant, problem);
        if (!c.arch.empty()) {
            if (const auto problem = name_problem(c.arch); !problem.empty()) refuse(at + "arch", c.arch, problem);
            if (!find_arch_limits(c.arch)) refuse(at + "arch", c.arch, "is not an architecture the harness knows");
        }
        for (const auto& h : c.hotspots)
            if (h.line < 0 || h.snippet_first_line < 0 || h.line > max_source_line ||
                h.snippet_first_line > max_source_line || h.snippet.size() > 1000)
                refuse(at + "hotspots", h.file, "has a line number or snippet out of range");
    }
    for (std::size_t i = 0; i < r.cliff_maps.size(); ++i) {
        const CliffMap& m = r.cliff_maps[i];
        const std::string at = fmt::format("cliff_maps[{}].", i);
        if (const auto problem = name_problem(m.variant); !problem.empty()) refuse(at + "variant", m.variant, problem);
        // The axis and the architecture name baseline rows and files.
        if (const auto problem = name_problem(m.axis); !problem.empty()) refuse(at + "axis", m.axis, problem);
        if (!m.arch.empty() && (!find_arch_limits(m.arch) || !name_problem(m.arch).empty()))
            refuse(at + "arch", m.arch, "is not an architecture the harness knows");
        if (m.values.size() != m.x.size() || (!m.noise.empty() && m.noise.size() != m.x.size()))
            refuse(at + "values", m.figure,
                   fmt::format("has {} values and {} noise figures for {} points", m.values.size(), m.noise.size(),
                               m.x.size()));
    }
}

} // namespace

RunReport read_results_json(const std::filesystem::path& file)
{
    const std::string name = file.string();
    const std::string text = read_input_file(file, max_results_file_bytes, "results file");
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        throw Error(ErrorKind::bad_input, fmt::format("{}: not valid JSON: {}", name, e.what()));
    }
    const auto* schema = j.is_object() && j.contains("schema") ? &j["schema"] : nullptr;
    if (!schema || !schema->is_string() || schema->get<std::string>() != schema_name)
        throw Error(ErrorKind::bad_input,
                    fmt::format("{}: not a harness results file (schema is not '{}')", name, schema_name));
    const auto* version = j.contains("schema_version") ? &j["schema_version"] : nullptr;
    if (!version || !version->is_number_integer() || version->get<std::int64_t>() < oldest_results_schema_version ||
        version->get<std::int64_t>() > results_schema_version)
        throw Error(ErrorKind::bad_input,
                    fmt::format("{}: results schema version {} (this harness reads versions {} to {})", name,
                                version ? version->dump() : std::string("missing"), oldest_results_schema_version,
                                results_schema_version));
    RunReport report;
    try {
        report = j.get<RunReport>();
    } catch (const nlohmann::json::exception& e) {
        throw Error(ErrorKind::bad_input, fmt::format("{}: {}", name, e.what()));
    } catch (const Error& e) {
        throw Error(ErrorKind::bad_input, fmt::format("{}: {}", name, e.what()));
    }
    check_names(report, name);
    return report;
}

std::string ShardInfo::text() const
{
    return sharded() ? fmt::format("{}/{}", fmt::join(indices, ","), count) : "";
}

bool verdict_blocks_baseline_update(Verdict verdict)
{
    switch (verdict) {
    case Verdict::regressed:
    case Verdict::expect_failed:
    case Verdict::not_measured:
    case Verdict::waived: return true;
    case Verdict::passed:
    case Verdict::improved:
    case Verdict::drifted:
    case Verdict::no_baseline:
    case Verdict::not_gated:
    case Verdict::skipped: return false;
    }
    return false;
}

bool has_regressions(const RunReport& report)
{
    return std::any_of(report.results.begin(), report.results.end(), [](const CaseResult& r) {
        return case_status_fails(r.status) ||
               std::any_of(r.verdicts.begin(), r.verdicts.end(),
                           [](const MetricVerdict& v) { return verdict_blocks_baseline_update(v.verdict); });
    });
}

Totals totals(const RunReport& report, bool fail_on_improvement)
{
    Totals t;
    for (const auto& r : report.results) {
        if (r.status == CaseStatus::skipped) {
            ++t.skipped;
            if (r.unchanged) ++t.unchanged;
            continue;
        }
        if (case_status_fails(r.status)) {
            ++t.failed;
            continue;
        }
        bool regressed = false, ungated = false, improved = false, waived = false;
        for (const auto& v : r.verdicts) {
            const bool fails = verdict_fails(v.verdict, fail_on_improvement);
            const bool unjudged = v.verdict == Verdict::not_gated || v.verdict == Verdict::not_measured;
            regressed = regressed || (fails && !unjudged);
            ungated = ungated || (fails && unjudged);
            improved = improved || v.verdict == Verdict::improved;
            waived = waived || v.verdict == Verdict::waived;
        }
        if (regressed) {
            ++t.regressed;
        } else if (ungated) {
            ++t.not_gated;
        } else {
            ++t.passed;
            if (improved) ++t.improved;
            if (waived) ++t.waived;
        }
    }
    // A case removed from the suite may be in several files (an architecture's, a GPU model's): once.
    std::set<std::pair<std::string, std::string>> removed, failing;
    for (const auto& r : report.removed) {
        removed.emplace(r.variant, r.params_text);
        if (r.fails) failing.emplace(r.variant, r.params_text);
    }
    t.removed = removed.size();
    t.removed_failing = failing.size();
    return t;
}

GateCounts gate_counts(const RunReport& report)
{
    GateCounts c;
    for (const auto& r : report.results)
        for (const auto& v : r.verdicts) {
            switch (v.verdict) {
            case Verdict::no_baseline:
            case Verdict::not_gated:
            case Verdict::skipped: ++c.not_gated; continue;
            case Verdict::not_measured: ++c.not_measured; continue;
            case Verdict::drifted: ++c.reported; continue;
            case Verdict::passed:
            case Verdict::regressed:
            case Verdict::improved:
            case Verdict::waived:
            case Verdict::expect_failed: break;
            }
            switch (v.source) {
            case VerdictSource::expectation: ++c.expected; break;
            case VerdictSource::drift: ++c.reported; break;
            case VerdictSource::baseline: ++c.compared; break;
            }
        }
    return c;
}

std::string gate_counts_text(const GateCounts& c)
{
    return fmt::format("{} figures compared with a baseline, {} checked by expect:, {} reported only, {} not "
                       "measured, {} not gated",
                       c.compared, c.expected, c.reported, c.not_measured, c.not_gated);
}

} // namespace harness
