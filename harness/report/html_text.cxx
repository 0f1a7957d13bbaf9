#include "harness/report/html_text.hxx"

#include "harness/core/cliff_map.hxx"
#include "harness/core/metrics.hxx"
#include "harness/core/text.hxx"

#include <cmath>
#include <fmt/format.h>

namespace harness::report {

namespace {

/// Whether XML 1.0 and HTML take code point `c` as text: not a control character but tab, line
/// feed and carriage return (XML forbids C0, HTML C0, DEL and C1), and not a noncharacter (XML
/// forbids U+FFFE and U+FFFF, HTML every one).
bool is_text_character(char32_t c)
{
    if (c < 0x20) return c == '\t' || c == '\n' || c == '\r';
    if (c >= 0x7F && c <= 0x9F) return false;
    if (c >= 0xFDD0 && c <= 0xFDEF) return false;
    return (c & 0xFFFE) != 0xFFFE;
}

/// Markup characters escaped; characters that are not text (compiler logs and kernel files hold
/// some) and bytes that are not UTF-8 replaced by U+FFFD, so that every parser reads the file.
std::string escape_markup(std::string_view text, bool xml)
{
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const auto point = utf8_code_point(text, i);
        if (!point || !is_text_character(point->first)) {
            out += "&#xFFFD;";
            i += point ? point->second : 1;
            continue;
        }
        switch (text[i]) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += xml ? "&apos;" : "&#39;"; break;
        default: out.append(text.substr(i, point->second));
        }
        i += point->second;
    }
    return out;
}

} // namespace

std::string html_escape(std::string_view text)
{
    return escape_markup(text, false);
}

std::string xml_escape(std::string_view text)
{
    return escape_markup(text, true);
}

namespace {

/// "1234567" -> "1,234,567"; keeps a leading minus sign.
std::string group_digits(std::string_view digits)
{
    std::string out;
    if (!digits.empty() && digits[0] == '-') {
        out += '-';
        digits.remove_prefix(1);
    }
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

} // namespace

std::string format_number(double value)
{
    if (!std::isfinite(value)) return std::isnan(value) ? "n/a" : (value > 0 ? "inf" : "-inf");
    const double magnitude = std::fabs(value);
    if (magnitude >= 1e15) return fmt::format("{:.3e}", value);
    if (magnitude >= 1000 || value == std::round(value)) return group_digits(fmt::format("{:.0f}", value));
    if (magnitude >= 100) return fmt::format("{:.1f}", value);
    if (magnitude >= 1) return fmt::format("{:.2f}", value);
    if (magnitude >= 0.001) return fmt::format("{:.3g}", value);
    return fmt::format("{:.2e}", value);
}

std::string format_with_unit(double value, std::string_view unit)
{
    if (unit == "fraction") return format_number(value * 100) + " %";
    if (unit.empty()) return format_number(value);
    if (unit == "%") return format_number(value) + " %";
    return fmt::format("{} {}", format_number(value), unit);
}

std::string format_in_unit(double value, std::string_view unit)
{
    return format_number(unit == "fraction" ? value * 100 : value);
}

std::string display_unit(std::string_view unit)
{
    return unit == "fraction" ? "%" : std::string(unit);
}

std::string metric_unit(std::string_view metric)
{
    // A cliff's verdict carries its depth (level after / level before - 1), so it reads in percent.
    if (is_cliff_verdict_metric(metric)) return "fraction";
    const auto info = find_metric(metric);
    return info ? std::string(info->unit) : std::string();
}

std::string format_tick(double value)
{
    if (value == 0) return "0";
    const double magnitude = std::fabs(value);
    const auto trimmed = [](double v, const char* suffix) {
        std::string text = fmt::format("{:.2f}", v);
        while (text.back() == '0') text.pop_back();
        if (text.back() == '.') text.pop_back();
        return text + suffix;
    };
    if (magnitude >= 1e12) return trimmed(value / 1e12, "T");
    if (magnitude >= 1e9) return trimmed(value / 1e9, "G");
    if (magnitude >= 1e6) return trimmed(value / 1e6, "M");
    if (magnitude >= 1e4) return trimmed(value / 1e3, "k");
    if (magnitude >= 0.01) return trimmed(value, "");
    return fmt::format("{:.0e}", value);
}

} // namespace harness::report
