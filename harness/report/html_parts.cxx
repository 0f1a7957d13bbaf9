#include "harness/report/html_parts.hxx"

#include "harness/core/enum_names.hxx"
#include "harness/report/html_text.hxx"

#include <cmath>
#include <fmt/format.h>
#include <set>

namespace harness::report::html {

const char* verdict_color(Verdict v)
{
    switch (v) {
    case Verdict::regressed:
    case Verdict::not_gated:
    case Verdict::not_measured:
    case Verdict::expect_failed: return color_bad;
    case Verdict::improved: return color_good;
    case Verdict::waived: return color_waived;
    case Verdict::passed: return color_neutral;
    case Verdict::drifted: return "#90a4ae";
    case Verdict::no_baseline:
    case Verdict::skipped: return "#b0bec5";
    }
    return color_neutral;
}

const char* verdict_label(Verdict v)
{
    // clang-format off
    constexpr EnumName<Verdict> labels[] = {
        {Verdict::passed, "within tolerance"}, {Verdict::regressed, "regressed"}, {Verdict::improved, "improved"},
        {Verdict::waived, "waived"}, {Verdict::expect_failed, "expect failed"}, {Verdict::no_baseline, "no baseline"},
        {Verdict::skipped, "not compared"}, {Verdict::drifted, "moved (reported, not gated)"},
        {Verdict::not_gated, "not gated (no baseline; CI mode)"},
        {Verdict::not_measured, "not measured (the baseline holds it)"}};
    // clang-format on
    return enum_name(labels, v);
}

std::string case_label(const CaseResult& r)
{
    return r.params_text.empty() ? r.variant : r.variant + " " + r.params_text;
}

std::string value_text(std::optional<double> value, const std::string& unit)
{
    return value ? format_with_unit(*value, unit) : std::string("–");
}

/// A table cell whose sort key is a number.
std::string number_cell(std::optional<double> value, const std::string& text, std::string_view css_class)
{
    return fmt::format("<td class=\"{}\" data-value=\"{}\">{}</td>", css_class,
                       value && std::isfinite(*value) ? fmt::format("{}", *value) : "", html_escape(text));
}

std::string text_cell(std::string_view text, std::string_view css_class)
{
    return css_class.empty() ? fmt::format("<td>{}</td>", html_escape(text))
                             : fmt::format("<td class=\"{}\">{}</td>", css_class, html_escape(text));
}

std::string header_row(std::initializer_list<std::string_view> columns)
{
    std::string row = "<thead><tr>";
    for (const auto c : columns) row += fmt::format("<th>{}</th>", html_escape(c));
    return row + "</tr></thead>";
}

/// Change from the baseline in percent; nullopt without both figures, infinite from a zero baseline.
std::optional<double> change_percent(const MetricVerdict& v)
{
    if (!v.baseline || !v.value) return std::nullopt;
    if (*v.baseline == 0) return *v.value == 0 ? 0.0 : std::copysign(INFINITY, *v.value);
    return (*v.value - *v.baseline) / std::fabs(*v.baseline) * 100.0;
}

std::string change_text(const MetricVerdict& v, const std::string& unit)
{
    if (!v.baseline || !v.value) return "–";
    const double diff = *v.value - *v.baseline;
    const std::string absolute = (diff >= 0 ? "+" : "−") + format_with_unit(std::fabs(diff), unit);
    const auto pct = change_percent(v);
    if (!pct || !std::isfinite(*pct)) return *v.baseline == 0 && diff != 0 ? absolute + " (from 0)" : absolute;
    if (*v.baseline != 0 && std::fabs(*v.value / *v.baseline) >= 3)
        return fmt::format("{} ({}×)", absolute, format_number(*v.value / *v.baseline));
    return fmt::format("{} ({}{} %)", absolute, *pct >= 0 ? "+" : "−", format_number(std::fabs(*pct)));
}

/// The half-width of a verdict's tolerance band in percent of the baseline, where its rule has one.
std::optional<double> tolerance_percent(const MetricVerdict& v)
{
    if (!v.tolerance) return std::nullopt;
    switch (v.tolerance->kind) {
    case ToleranceBand::Kind::relative: return v.tolerance->amount;
    case ToleranceBand::Kind::absolute:
        if (!v.baseline || *v.baseline == 0) return std::nullopt;
        return v.tolerance->amount / std::fabs(*v.baseline) * 100.0;
    }
    return std::nullopt;
}

std::string figure_caption(std::string_view title, std::string_view note)
{
    return fmt::format("<h3>{}</h3>{}", html_escape(title),
                       note.empty() ? std::string() : fmt::format("<p class=\"note\">{}</p>", html_escape(note)));
}

bool several_archs(const RunReport& report)
{
    std::set<std::string> archs;
    for (const auto& r : report.results) archs.insert(r.arch);
    return archs.size() > 1;
}

} // namespace harness::report::html
