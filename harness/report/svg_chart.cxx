#include "harness/report/svg_chart.hxx"

#include "harness/report/html_text.hxx"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace harness::report {

namespace {

double position(const Axis& axis, double value)
{
    if (axis.scale == Scale::log)
        return (std::log10(value) - std::log10(axis.lo)) / (std::log10(axis.hi) - std::log10(axis.lo));
    return (value - axis.lo) / (axis.hi - axis.lo);
}

std::string tick_text(const Axis& axis, double value)
{
    if (!axis.categories.empty()) {
        const auto i = static_cast<std::size_t>(std::lround(value));
        return i < axis.categories.size() ? axis.categories[i] : std::string();
    }
    return format_tick(value) + axis.unit_suffix;
}

std::string number(double v)
{
    return fmt::format("{:.1f}", v);
}

} // namespace

Axis fit_axis(std::string label, const std::vector<double>& values, double log_when_span, bool include_zero)
{
    Axis axis;
    axis.label = std::move(label);
    double lo = INFINITY, hi = -INFINITY, positive_lo = INFINITY;
    for (const double v : values) {
        if (!std::isfinite(v)) continue;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
        if (v > 0) positive_lo = std::min(positive_lo, v);
    }
    if (lo > hi) return axis; // no data: [0, 1]
    if (log_when_span > 0 && lo > 0 && hi / lo > log_when_span) {
        axis.scale = Scale::log;
        axis.lo = lo / 1.5;
        axis.hi = hi * 1.5;
        return axis;
    }
    if (include_zero) {
        lo = std::min(lo, 0.0);
        hi = std::max(hi, 0.0);
    }
    const double span = hi - lo;
    const double pad = span > 0 ? span * 0.08 : (hi != 0 ? std::fabs(hi) * 0.1 : 1.0);
    axis.lo = (include_zero && lo == 0) ? 0.0 : lo - pad;
    axis.hi = (include_zero && hi == 0) ? 0.0 : hi + pad;
    return axis;
}

Axis category_axis(std::string label, std::vector<std::string> categories)
{
    Axis axis;
    axis.label = std::move(label);
    axis.lo = -0.5;
    axis.hi = static_cast<double>(categories.size()) - 0.5;
    axis.categories = std::move(categories);
    return axis;
}

std::vector<double> axis_ticks(const Axis& axis)
{
    std::vector<double> ticks;
    if (!axis.categories.empty()) {
        for (std::size_t i = 0; i < axis.categories.size(); ++i) ticks.push_back(static_cast<double>(i));
        return ticks;
    }
    if (axis.scale == Scale::log) {
        const int first = static_cast<int>(std::floor(std::log10(axis.lo)));
        const int last = static_cast<int>(std::ceil(std::log10(axis.hi)));
        const double decades = std::log10(axis.hi / axis.lo);
        const int every = decades > 8 ? 2 : 1;
        for (int e = first; e <= last; e += every)
            for (const double m : {1.0, 2.0, 5.0}) {
                if (m != 1.0 && decades > 2.5) continue;
                const double v = m * std::pow(10.0, e);
                if (v >= axis.lo * 0.999 && v <= axis.hi * 1.001) ticks.push_back(v);
            }
        return ticks;
    }
    const double raw = (axis.hi - axis.lo) / 5;
    if (!(raw > 0)) return {axis.lo};
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    const double r = raw / magnitude;
    const double step = (r < 1.5 ? 1 : r < 3 ? 2 : r < 7 ? 5 : 10) * magnitude;
    for (double v = std::ceil(axis.lo / step) * step; v <= axis.hi + step * 1e-9; v += step)
        ticks.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
    return ticks;
}

SvgChart::SvgChart(std::string name, int width, int height, Axis x, Axis y)
    : name_(std::move(name)), width_(width), height_(height), x_(std::move(x)), y_(std::move(y))
{
    left_ = 70;
    right_ = width_ - 18;
    top_ = 14;
    std::size_t longest = 0;
    for (const auto& c : x_.categories) longest = std::max(longest, c.size());
    // Rotated category labels need room below the plot.
    const double label_room = x_.categories.empty() ? 0.0 : std::min<double>(static_cast<double>(longest), 26) * 5.2;
    bottom_ = height_ - 44 - label_room;
}

double SvgChart::x_px(double x) const
{
    return left_ + position(x_, x) * (right_ - left_);
}

double SvgChart::y_px(double y) const
{
    return bottom_ - position(y_, y) * (bottom_ - top_);
}

bool SvgChart::in_x(double x) const
{
    return std::isfinite(x) && (x_.scale != Scale::log || x > 0) && x >= x_.lo && x <= x_.hi;
}

bool SvgChart::in_y(double y) const
{
    return std::isfinite(y) && (y_.scale != Scale::log || y > 0) && y >= y_.lo && y <= y_.hi;
}

void SvgChart::line(const std::vector<std::pair<double, double>>& points, std::string_view color,
                    std::string_view title, bool dashed)
{
    std::string coords;
    int n = 0;
    for (const auto& [x, y] : points) {
        if (!in_x(x) || !in_y(y)) continue;
        coords += fmt::format("{}{},{}", n++ ? " " : "", number(x_px(x)), number(y_px(y)));
    }
    if (n < 2) return;
    marks_svg_ +=
        fmt::format("<polyline class=\"mark series\" points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}>"
                    "<title>{}</title></polyline>\n",
                    coords, color, dashed ? " stroke-dasharray=\"5 3\"" : "", html_escape(title));
    ++marks_;
}

void SvgChart::point(double x, double y, std::string_view color, std::string_view title, bool hollow, double radius)
{
    if (!in_x(x) || !in_y(y)) return;
    marks_svg_ += fmt::format("<circle class=\"mark point\" cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\" stroke=\"{}\" "
                              "stroke-width=\"{}\"><title>{}</title></circle>\n",
                              number(x_px(x)), number(y_px(y)), radius, hollow ? "#fff" : color, color, hollow ? 2 : 1,
                              html_escape(title));
    ++marks_;
}

void SvgChart::rect(double x0, double x1, double y0, double y1, std::string_view fill, std::string_view stroke,
                    std::string_view title, bool is_mark, double fill_opacity)
{
    const auto clamp_x = [&](double v) { return std::clamp(v, x_.lo, x_.hi); };
    const auto clamp_y = [&](double v) {
        if (y_.scale == Scale::log && v <= 0) return y_.lo;
        return std::clamp(v, y_.lo, y_.hi);
    };
    const double px0 = x_px(clamp_x(std::min(x0, x1))), px1 = x_px(clamp_x(std::max(x0, x1)));
    const double py0 = y_px(clamp_y(std::max(y0, y1))), py1 = y_px(clamp_y(std::min(y0, y1)));
    const std::string element =
        fmt::format("<rect class=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" fill-opacity=\"{}\" "
                    "stroke=\"{}\"><title>{}</title></rect>\n",
                    is_mark ? "mark bar" : "band", number(px0), number(py0), number(std::max(px1 - px0, 1.0)),
                    number(std::max(py1 - py0, is_mark ? 1.0 : 0.0)), fill, fill_opacity,
                    stroke.empty() ? "none" : stroke, html_escape(title));
    if (is_mark) {
        marks_svg_ += element;
        ++marks_;
    } else {
        background_ += element;
    }
}

void SvgChart::area(const std::vector<std::pair<double, double>>& upper,
                    const std::vector<std::pair<double, double>>& lower, std::string_view fill, std::string_view title,
                    double fill_opacity)
{
    // Out along the upper line, back along the lower one; the plot's clip path trims what lies
    // beyond the axes.
    std::string coords;
    const auto add = [&](double x, double y) {
        const double px = x_px(x), py = y_px(y);
        if (!std::isfinite(px) || !std::isfinite(py)) return;
        coords += fmt::format("{}{},{}", coords.empty() ? "" : " ", number(px), number(py));
    };
    for (const auto& [x, y] : upper) add(x, y);
    for (auto it = lower.rbegin(); it != lower.rend(); ++it) add(it->first, it->second);
    if (coords.empty()) return;
    background_ += fmt::format("<polygon class=\"band\" points=\"{}\" fill=\"{}\" fill-opacity=\"{}\" "
                               "stroke=\"none\"><title>{}</title></polygon>\n",
                               coords, fill, fill_opacity, html_escape(title));
}

void SvgChart::guide(double x0, double y0, double x1, double y1, std::string_view color, bool dashed, double width)
{
    background_ += fmt::format("<line class=\"guide\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" "
                               "stroke-width=\"{}\"{}/>\n",
                               number(x_px(x0)), number(y_px(y0)), number(x_px(x1)), number(y_px(y1)), color, width,
                               dashed ? " stroke-dasharray=\"4 3\"" : "");
}

void SvgChart::label(double x, double y, std::string_view text, std::string_view anchor, std::string_view css_class,
                     double dx, double dy, double rotate)
{
    const double px = x_px(x) + dx, py = y_px(y) + dy;
    overlay_ += fmt::format("<text class=\"{}\" x=\"{}\" y=\"{}\" text-anchor=\"{}\"{}>{}</text>\n", css_class,
                            number(px), number(py), anchor,
                            rotate != 0 ? fmt::format(" transform=\"rotate({} {} {})\"", rotate, number(px), number(py))
                                        : std::string(),
                            html_escape(text));
}

std::string SvgChart::svg(std::string_view aria_label) const
{
    std::string axes;
    // Grid and ticks.
    for (const double t : axis_ticks(y_)) {
        const double py = y_px(t);
        axes += fmt::format("<line class=\"grid\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>"
                            "<text class=\"tick\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n",
                            number(left_), number(py), number(right_), number(py), number(left_ - 6), number(py + 3.5),
                            html_escape(tick_text(y_, t)));
    }
    const bool rotate_x = !x_.categories.empty();
    for (const double t : axis_ticks(x_)) {
        const double px = x_px(t);
        if (!rotate_x)
            axes += fmt::format("<line class=\"grid\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>", number(px),
                                number(top_), number(bottom_));
        axes += fmt::format("<line class=\"tickmark\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>", number(px),
                            number(bottom_), number(bottom_ + 4));
        if (rotate_x)
            axes += fmt::format("<text class=\"tick\" x=\"{0}\" y=\"{1}\" text-anchor=\"end\" "
                                "transform=\"rotate(-35 {0} {1})\">{2}</text>\n",
                                number(px + 3), number(bottom_ + 12), html_escape(tick_text(x_, t)));
        else
            axes += fmt::format("<text class=\"tick\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", number(px),
                                number(bottom_ + 16), html_escape(tick_text(x_, t)));
    }
    axes += fmt::format("<line class=\"frame\" x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\"/>"
                        "<line class=\"frame\" x1=\"{0}\" y1=\"{3}\" x2=\"{0}\" y2=\"{1}\"/>\n",
                        number(left_), number(bottom_), number(right_), number(top_));
    const auto scale_note = [](const Axis& a) { return a.scale == Scale::log ? " (log scale)" : ""; };
    axes += fmt::format("<text class=\"axis-label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}{}</text>\n",
                        number((left_ + right_) / 2), height_ - 8, html_escape(x_.label), scale_note(x_));
    axes += fmt::format("<text class=\"axis-label\" x=\"14\" y=\"{0}\" text-anchor=\"middle\" "
                        "transform=\"rotate(-90 14 {0})\">{1}{2}</text>\n",
                        number((top_ + bottom_) / 2), html_escape(y_.label), scale_note(y_));

    std::string legend;
    if (!legend_.empty()) {
        legend = "<div class=\"legend\">";
        for (const auto& e : legend_)
            legend += fmt::format("<span class=\"key\"><i class=\"swatch{}\" style=\"--c:{}\"></i>{}</span>",
                                  e.dashed ? " dashed" : "", e.color, html_escape(e.text));
        legend += "</div>";
    }
    return fmt::format(
        "<figure class=\"chart\">{legend}<svg class=\"plot\" data-chart=\"{name}\" data-marks=\"{marks}\" "
        "viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" role=\"img\" aria-label=\"{aria}\">\n"
        "<defs><clipPath id=\"clip-{name}\"><rect x=\"{l}\" y=\"{t}\" width=\"{pw}\" "
        "height=\"{ph}\"/></clipPath></defs>\n"
        "<g class=\"axes\">{axes}</g>\n<g clip-path=\"url(#clip-{name})\">{background}</g>\n<g>{marks_svg}</g>\n"
        "<g>{overlay}</g>\n</svg></figure>\n",
        fmt::arg("legend", legend), fmt::arg("name", html_escape(name_)), fmt::arg("marks", marks_),
        fmt::arg("w", width_), fmt::arg("h", height_), fmt::arg("aria", html_escape(aria_label)),
        fmt::arg("l", number(left_)), fmt::arg("t", number(top_)), fmt::arg("pw", number(right_ - left_)),
        fmt::arg("ph", number(bottom_ - top_)), fmt::arg("axes", axes), fmt::arg("background", background_),
        fmt::arg("marks_svg", marks_svg_), fmt::arg("overlay", overlay_));
}

} // namespace harness::report
