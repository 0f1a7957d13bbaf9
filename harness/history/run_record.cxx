#include "harness/history/run_record.hxx"

#include "harness/compare/baseline_update.hxx"
#include "harness/core/error.hxx"
#include "harness/core/input_files.hxx"
#include "harness/core/stats.hxx"
#include "harness/core/text.hxx"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>

namespace harness::history {

namespace {

using nlohmann::json;

constexpr const char* schema_name = "harness-history-run";

/// Times are kept to 0.1 ns: far below any noise, and short in the file.
double round_time(double us)
{
    return std::round(us * 1e4) / 1e4;
}

/// Integral figures (counters, bytes) as JSON integers: "32", not "32.0".
json number(double value)
{
    if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 9.0e15)
        return static_cast<std::int64_t>(value);
    if (!std::isfinite(value)) return nullptr;
    return value;
}

std::string text_field(const json& j, const char* key, const std::string& what)
{
    const auto it = j.find(key);
    if (it == j.end() || !it->is_string())
        throw Error(ErrorKind::bad_input, fmt::format("{}: '{}' is missing or not text", what, key));
    return it->get<std::string>();
}

} // namespace

std::optional<double> CaseFigures::figure(std::string_view metric) const
{
    for (const auto& [name, value] : figures)
        if (name == metric) return value;
    return std::nullopt;
}

std::optional<TimeSummary> summarize_time(std::vector<double> samples_us)
{
    std::erase_if(samples_us, [](double v) { return !std::isfinite(v); });
    if (samples_us.empty()) return std::nullopt;
    std::sort(samples_us.begin(), samples_us.end());
    TimeSummary t;
    t.samples = samples_us.size();
    t.median_us = round_time(sorted_quantile(samples_us, 0.5));
    t.iqr_us = round_time(sorted_quantile(samples_us, 0.75) - sorted_quantile(samples_us, 0.25));
    // The same evenly spaced quantiles a baseline keeps, fewer of them.
    for (double q : compare::baseline_samples(samples_us, max_time_quantiles)) t.quantiles_us.push_back(round_time(q));
    return t;
}

RunRecord record_from_report(const RunReport& report, std::string commit, std::string commit_date,
                             std::string results_path)
{
    RunRecord r;
    r.suite = report.suite;
    r.timestamp = report.timestamp;
    r.commit = std::move(commit);
    r.commit_date = commit_date.empty() ? report.timestamp : std::move(commit_date);
    r.arch = report.arch;
    r.gpu = report.device_name;
    r.driver = report.driver_version;
    r.cuda = report.cuda_version;
    r.harness_version = report.harness_version;
    r.results_path = std::move(results_path);
    r.mode = report.mode;
    for (const auto& c : report.results) {
        CaseFigures f;
        f.variant = c.variant;
        f.params = c.params_text;
        f.arch = c.arch;
        f.status = c.status;
        if (c.status == CaseStatus::passed) {
            for (const auto& m : c.metrics)
                if (std::isfinite(m.value)) f.figures.emplace_back(m.name, m.value);
            f.time = summarize_time(c.time_samples_us);
        }
        r.cases.push_back(std::move(f));
    }
    return r;
}

std::string run_file_text(const RunRecord& r)
{
    // Metric names once per file; each case holds its values in that order (null where absent).
    std::vector<std::string> metrics;
    std::map<std::string, std::size_t> column;
    for (const auto& c : r.cases)
        for (const auto& [name, value] : c.figures)
            if (column.emplace(name, metrics.size()).second) metrics.push_back(name);
    json cases = json::array();
    for (const auto& c : r.cases) {
        json values = json::array();
        if (!c.figures.empty()) {
            values = json(std::vector<json>(metrics.size(), nullptr));
            for (const auto& [name, value] : c.figures) values[column.at(name)] = number(value);
        }
        json time = nullptr;
        if (c.time) {
            json q = json::array();
            for (double v : c.time->quantiles_us) q.push_back(number(v));
            time = json::array({number(c.time->median_us), number(c.time->iqr_us), c.time->samples, std::move(q)});
        }
        cases.push_back(
            json::array({c.variant, c.params, c.arch, case_status_name(c.status), std::move(values), std::move(time)}));
    }
    json j = {{"schema", schema_name},
              {"schema_version", run_file_schema_version},
              {"suite", r.suite},
              {"commit", r.commit},
              {"commit_date", r.commit_date},
              {"timestamp", r.timestamp},
              {"arch", r.arch},
              {"gpu", r.gpu},
              {"driver", r.driver},
              {"cuda", r.cuda},
              {"harness", r.harness_version},
              {"results", r.results_path},
              {"mode", mode_name(r.mode)}, // keys are written sorted: the order here is not the file's
              {"metrics", metrics},
              {"cases", std::move(cases)}};
    return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

RunRecord parse_run_file(std::string_view text, const std::string& what)
{
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception& e) {
        throw Error(ErrorKind::bad_input, fmt::format("{}: not JSON: {}", what, e.what()));
    }
    if (!j.is_object() || j.value("schema", "") != schema_name)
        throw Error(ErrorKind::bad_input, fmt::format("{}: not a harness history run file", what));
    const auto version = j.value("schema_version", 0);
    if (version < 1 || version > run_file_schema_version)
        throw Error(ErrorKind::bad_input, fmt::format("{}: schema_version {} is not one this harness reads (1 to {})",
                                                      what, version, run_file_schema_version));
    RunRecord r;
    r.suite = text_field(j, "suite", what);
    r.commit = text_field(j, "commit", what);
    r.commit_date = text_field(j, "commit_date", what);
    r.timestamp = text_field(j, "timestamp", what);
    const std::string mode = text_field(j, "mode", what);
    if (const auto known = mode_from_name(mode))
        r.mode = *known;
    else
        throw Error(ErrorKind::bad_input, fmt::format("{}: mode '{}' is neither 'gpu' nor 'static'", what,
                                                      escape_control_characters(mode.substr(0, max_name_length))));
    r.arch = text_field(j, "arch", what);
    r.gpu = text_field(j, "gpu", what);
    r.driver = text_field(j, "driver", what);
    r.cuda = text_field(j, "cuda", what);
    r.harness_version = text_field(j, "harness", what);
    r.results_path = text_field(j, "results", what);
    try {
        const auto metrics = j.at("metrics").get<std::vector<std::string>>();
        for (const auto& c : j.at("cases")) {
            CaseFigures f;
            f.variant = c.at(0).get<std::string>();
            f.params = c.at(1).get<std::string>();
            f.arch = c.at(2).get<std::string>();
            const auto status = c.at(3).get<std::string>();
            try {
                f.status = case_status_from_name(status);
            } catch (const Error& e) {
                throw Error(ErrorKind::bad_input, fmt::format("{}: a case of {}: {}", what, f.variant, e.what()));
            }
            const auto& values = c.at(4);
            if (!values.empty() && values.size() != metrics.size())
                throw Error(ErrorKind::bad_input, fmt::format("{}: a case of {} holds {} values for {} metrics", what,
                                                              f.variant, values.size(), metrics.size()));
            for (std::size_t k = 0; k < values.size(); ++k)
                if (values[k].is_number()) f.figures.emplace_back(metrics[k], values[k].get<double>());
            if (const auto& t = c.at(5); !t.is_null())
                f.time = TimeSummary{t.at(0).get<double>(), t.at(1).get<double>(), t.at(2).get<std::size_t>(),
                                     t.at(3).get<std::vector<double>>()};
            r.cases.push_back(std::move(f));
        }
    } catch (const json::exception& e) {
        throw Error(ErrorKind::bad_input, fmt::format("{}: bad metrics or cases: {}", what, e.what()));
    }
    if (const std::string problem = record_problem(r); !problem.empty())
        throw Error(ErrorKind::bad_input, fmt::format("{}: {}", what, problem));
    return r;
}

std::string record_problem(const RunRecord& r)
{
    if (const auto p = name_problem(r.suite); !p.empty())
        return fmt::format("suite name '{}' {}", r.suite.substr(0, max_name_length), p);
    // The commit becomes part of a file name: a hash, or a label that is one.
    if (const auto p = name_problem(r.commit); !p.empty())
        return fmt::format("commit '{}' {}", r.commit.substr(0, max_name_length), p);
    return "";
}

} // namespace harness::history
