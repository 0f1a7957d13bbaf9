#include "harness/core/metrics.hxx"

#include <algorithm>
#include <fmt/format.h>

namespace harness {

namespace {

/// The table every lookup reads: the rows of metric_table.hxx, or a ScopedMetricTable's.
std::span<const MetricInfo> current_table = metric_rows::table;

} // namespace

std::span<const MetricInfo> metric_table()
{
    return current_table;
}

ScopedMetricTable::ScopedMetricTable(std::span<const MetricInfo> table) : previous_(current_table)
{
    current_table = table;
}

ScopedMetricTable::~ScopedMetricTable()
{
    current_table = previous_;
}

std::optional<MetricInfo> find_metric(std::string_view name)
{
    name = split_launch_metric(name).first;
    for (const auto& m : metric_table())
        if (m.name == name) return m;
    return std::nullopt;
}

std::vector<MetricInfo> report_metrics(ReportPlace MetricRoles::*place)
{
    std::vector<MetricInfo> shown;
    for (const auto& m : metric_table())
        if ((m.roles.*place).order > 0) shown.push_back(m);
    std::stable_sort(shown.begin(), shown.end(), [&](const MetricInfo& a, const MetricInfo& b) {
        return (a.roles.*place).order < (b.roles.*place).order;
    });
    return shown;
}

bool is_noisy_counter(std::string_view name)
{
    const auto info = find_metric(name);
    if (!info || info->stability != Stability::noisy) return false;
    return info->collector == Collector::range_profiler || info->roles.from_noisy_counters;
}

bool is_predicted(std::string_view name)
{
    const auto info = find_metric(name);
    return info && info->collector == Collector::access_model;
}

std::string launch_metric_name(std::string_view metric, std::string_view label)
{
    return std::string(metric) + "@" + std::string(label);
}

std::pair<std::string_view, std::string_view> split_launch_metric(std::string_view name)
{
    // '@' appears in no metric name and in no C++ identifier, so the first one splits.
    const auto at = name.find('@');
    if (at == std::string_view::npos) return {name, {}};
    return {name.substr(0, at), name.substr(at + 1)};
}

const char* to_string(Direction direction)
{
    switch (direction) {
    case Direction::lower_is_better: return "lower is better";
    case Direction::higher_is_better: return "higher is better";
    case Direction::neither: return "neither";
    }
    return "?";
}

const char* to_string(Stability stability)
{
    switch (stability) {
    case Stability::exact: return "exact";
    case Stability::noisy: return "noisy";
    }
    return "?";
}

const char* to_string(Collector collector)
{
    switch (collector) {
    case Collector::timing: return "timing";
    case Collector::resources: return "resources";
    case Collector::verification: return "verification";
    case Collector::range_profiler: return "range_profiler";
    case Collector::sass_metrics: return "sass_metrics";
    case Collector::derived: return "derived";
    case Collector::access_model: return "access_model";
    case Collector::disassembly: return "disassembly";
    }
    return "?";
}

std::string metric_table_markdown()
{
    std::string out = "| metric | unit | figure | better | default rule | default set | from | description |\n"
                      "|---|---|---|---|---|---|---|---|\n";
    for (const auto& m : metric_table())
        out += fmt::format("| `{}` | {} | {} | {} | `{}` | {} | {}: `{}` | {} |\n", m.name, m.unit,
                           to_string(m.stability), to_string(m.direction), m.default_rule,
                           m.in_default_set ? "yes" : "no", to_string(m.collector), m.source, m.description);
    return out;
}

std::string metric_table_text()
{
    std::string out = fmt::format("{:<30} {:<16} {:<6} {:<17} {:<22} {}\n", "metric", "unit", "figure", "better",
                                  "default rule", "from");
    for (const auto& m : metric_table())
        out += fmt::format("{:<30} {:<16} {:<6} {:<17} {:<22} {}{}\n", m.name, m.unit, to_string(m.stability),
                           to_string(m.direction), m.default_rule, to_string(m.collector),
                           m.in_default_set ? "" : " (not in the default set)");
    return out;
}

} // namespace harness
