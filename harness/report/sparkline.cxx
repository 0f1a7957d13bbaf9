#include "harness/report/sparkline.hxx"

#include "harness/report/html_text.hxx"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace harness::report {

namespace {

/// U+2581 .. U+2588, lowest to highest.
constexpr const char* blocks[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};

struct Range {
    double lo = 0.0, hi = 0.0;
    /// Where `v` lies, 0 at lo and 1 at hi; one half when the range is empty.
    double at(double v) const { return hi > lo ? (v - lo) / (hi - lo) : 0.5; }
};

Range range_of(const std::vector<double>& values, std::optional<double> with)
{
    Range r;
    bool first = true;
    const auto take = [&](double v) {
        if (!std::isfinite(v)) return;
        r.lo = first ? v : std::min(r.lo, v);
        r.hi = first ? v : std::max(r.hi, v);
        first = false;
    };
    for (const double v : values) take(v);
    if (with) take(*with);
    return r;
}

std::string block_of(const Range& r, double v)
{
    if (!std::isfinite(v)) return " ";
    const auto level = static_cast<long>(std::lround(r.at(v) * 7.0));
    return blocks[std::clamp(level, 0L, 7L)];
}

std::string with_unit(double v, std::string_view unit)
{
    return unit.empty() ? fmt::format("{:.4g}", v) : fmt::format("{:.4g} {}", v, unit);
}

} // namespace

std::string block_sparkline(const std::vector<double>& values, std::optional<double> scale_with)
{
    const Range r = range_of(values, scale_with);
    std::string out;
    for (const double v : values) out += block_of(r, v);
    return out;
}

std::string markdown_sparkline(const std::vector<double>& recent, std::optional<double> current, std::string_view unit)
{
    if (recent.empty()) return {};
    const Range history = range_of(recent, std::nullopt);
    std::string out = fmt::format("history ({} commit{}): {}", recent.size(), recent.size() == 1 ? "" : "s",
                                  block_sparkline(recent, current));
    if (current && std::isfinite(*current)) out += " → **" + block_of(range_of(recent, current), *current) + "**";
    out += fmt::format(" · min {} · max {}", with_unit(history.lo, ""), with_unit(history.hi, unit));
    return out;
}

std::string svg_sparkline(const std::vector<double>& recent, std::optional<double> current, std::string_view unit,
                          std::string_view current_color)
{
    if (recent.empty()) return {};
    constexpr double width = 132, height = 26, pad = 4;
    const bool has_current = current && std::isfinite(*current);
    const Range r = range_of(recent, has_current ? current : std::nullopt);
    const std::size_t n = recent.size() + (has_current ? 1 : 0);
    const auto x = [&](std::size_t i) { return n == 1 ? width / 2 : pad + (width - 2 * pad) * i / double(n - 1); };
    const auto y = [&](double v) { return height - pad - (height - 2 * pad) * r.at(v); };

    std::string points;
    for (std::size_t i = 0; i < recent.size(); ++i)
        if (std::isfinite(recent[i]))
            points += fmt::format("{}{:.1f},{:.1f}", points.empty() ? "" : " ", x(i), y(recent[i]));
    const Range history = range_of(recent, std::nullopt);
    std::string title =
        fmt::format("last {} commit{} on the default branch: min {}, max {}", recent.size(),
                    recent.size() == 1 ? "" : "s", with_unit(history.lo, unit), with_unit(history.hi, unit));
    if (has_current) title += fmt::format("; now {}", with_unit(*current, unit));

    std::string svg =
        fmt::format("<svg class=\"spark\" data-sparkline=\"recent\" data-points=\"{}\" viewBox=\"0 0 {} {}\" "
                    "width=\"{}\" height=\"{}\" role=\"img\" aria-label=\"{}\"><title>{}</title>",
                    recent.size(), width, height, width, height, html_escape(title), html_escape(title));
    svg += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"#78909c\" stroke-width=\"1.5\"/>", points);
    if (has_current) {
        const double last_x = x(recent.size() - 1), now_x = x(recent.size());
        if (std::isfinite(recent.back()))
            svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
                               "stroke-width=\"1.5\" stroke-dasharray=\"2 2\"/>",
                               last_x, y(recent.back()), now_x, y(*current), current_color);
        svg += fmt::format("<circle class=\"now\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"/>", now_x,
                           y(*current), current_color);
    }
    return svg + "</svg>";
}

} // namespace harness::report
