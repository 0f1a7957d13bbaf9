#pragma once
// Pieces the sections of report.html share: colours, cells, value and change text, chart captions.
// Internal to report/: html_report.cxx (the page, its tables) and html_charts.cxx (its charts).

#include "harness/core/run_report.hxx"

#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace harness::report::html {

// Colours: red and green are reserved for regressed and improved; variants get the others.
inline constexpr const char* variant_palette[] = {"#3366cc", "#e8871e", "#8e5cc4", "#1b9aaa", "#b5548a",
                                                  "#7a8b2e", "#8d6e63", "#c9a227", "#455a64", "#00897b"};
inline constexpr const char* color_bad = "#c62828";
inline constexpr const char* color_good = "#2e7d32";
inline constexpr const char* color_waived = "#ef6c00";
inline constexpr const char* color_neutral = "#78909c";

const char* verdict_color(Verdict v);
const char* verdict_label(Verdict v);
std::string case_label(const CaseResult& r);
std::string value_text(std::optional<double> value, const std::string& unit);
std::string number_cell(std::optional<double> value, const std::string& text, std::string_view css_class = "num");
std::string text_cell(std::string_view text, std::string_view css_class = "");
std::string header_row(std::initializer_list<std::string_view> columns);
std::optional<double> change_percent(const MetricVerdict& v);
std::string change_text(const MetricVerdict& v, const std::string& unit);
/// The half-width of the verdict's tolerance band (MetricVerdict::tolerance) in percent of its baseline.
std::optional<double> tolerance_percent(const MetricVerdict& v);
std::string figure_caption(std::string_view title, std::string_view note);
bool several_archs(const RunReport& report);

/// Stable colours per variant, in the order variants first appear.
class VariantColors {
public:
    explicit VariantColors(const RunReport& report)
    {
        for (const auto& r : report.results)
            if (!index_.contains(r.variant)) {
                index_[r.variant] = order_.size();
                order_.push_back(r.variant);
            }
    }
    const char* operator()(const std::string& variant) const
    {
        const auto it = index_.find(variant);
        const std::size_t i = it == index_.end() ? 0 : it->second;
        return variant_palette[i % std::size(variant_palette)];
    }

private:
    std::map<std::string, std::size_t> index_;
    std::vector<std::string> order_;
};

/// The charts: value against the baseline per metric, time and throughput against the problem
/// size, the roofline, occupancy (html_charts.cxx).
std::string baseline_section(const RunReport& report);
std::string scaling_section(const RunReport& report, const VariantColors& colors);
std::string roofline_section(const RunReport& report, const VariantColors& colors);
std::string occupancy_section(const RunReport& report);
/// Each cliff map: its series, every step marked with its cause and depth, and a table of the
/// steps (html_cliff_maps.cxx); "" for a run without maps.
std::string cliff_maps_section(const RunReport& report);

} // namespace harness::report::html
