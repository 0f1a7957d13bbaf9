#include "harness/core/case_figures.hxx"

namespace harness {

std::vector<std::pair<MetricInfo, std::string>> case_figure_names(const CaseResult& r)
{
    std::vector<std::pair<MetricInfo, std::string>> names;
    for (const auto& info : metric_table()) names.emplace_back(info, std::string(info.name));
    for (const auto& l : r.launches)
        if (!l.label.empty())
            for (const auto& info : metric_table()) names.emplace_back(info, launch_metric_name(info.name, l.label));
    return names;
}

} // namespace harness
