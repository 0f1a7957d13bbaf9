#pragma once
// A small SVG chart writer for the HTML report: numeric axes (linear or log) or categories, ticks,
// grid, legend, and marks (lines, points, bars, bands) with native hover titles.
// Charts are drawn here, in C++, so the report reads without a browser script (artifact viewers that
// block scripts still show every chart) and so unit tests can check the SVG text itself.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace harness::report {

enum class Scale { linear, log };

/// One axis: a numeric domain on a linear or log scale, or named categories placed at 0, 1, 2...
struct Axis {
    std::string label;
    Scale scale = Scale::linear;
    double lo = 0.0;
    double hi = 1.0;
    std::vector<std::string> categories; ///< non-empty for a category axis
    std::string unit_suffix;             ///< appended to tick labels, e.g. "%"
};

/// An axis covering `values` with a little room; log when the positive values span more than
/// `log_when_span` (0: never log); `include_zero` pins a linear axis to zero.
Axis fit_axis(std::string label, const std::vector<double>& values, double log_when_span = 30.0,
              bool include_zero = false);

/// An axis of named categories.
Axis category_axis(std::string label, std::vector<std::string> categories);

/// Tick positions of an axis (for categories: 0..n-1).
std::vector<double> axis_ticks(const Axis& axis);

/// One legend entry: the text and its colour.
struct LegendEntry {
    std::string text;
    std::string color;
    bool dashed = false;
};

/// Builds one `<svg data-chart="name">`. Marks carry class "mark" and are counted in data-marks,
/// which is how the page's script and the tests tell a chart with data from an empty frame.
class SvgChart {
public:
    SvgChart(std::string name, int width, int height, Axis x, Axis y);

    double x_px(double x) const;
    double y_px(double y) const;
    bool in_x(double x) const;
    bool in_y(double y) const;

    /// A polyline through the points that lie on the axes' domains.
    void line(const std::vector<std::pair<double, double>>& points, std::string_view color, std::string_view title,
              bool dashed = false);
    /// A circle (or a hollow one) with a hover title.
    void point(double x, double y, std::string_view color, std::string_view title, bool hollow = false,
               double radius = 4.5);
    /// A rectangle in data coordinates; `is_mark` false for backgrounds such as tolerance bands.
    void rect(double x0, double x1, double y0, double y1, std::string_view fill, std::string_view stroke,
              std::string_view title, bool is_mark = true, double fill_opacity = 1.0);
    /// A shaded area between two lines in data coordinates, each in axis order (a noise band):
    /// background, not data.
    void area(const std::vector<std::pair<double, double>>& upper, const std::vector<std::pair<double, double>>& lower,
              std::string_view fill, std::string_view title, double fill_opacity = 0.3);
    /// A line in data coordinates that is not data (ceilings, baselines, error bars).
    void guide(double x0, double y0, double x1, double y1, std::string_view color, bool dashed = false,
               double width = 1.0);
    /// Text at a data position; `css_class` picks the style ("label", "note", "ceiling-label"...).
    void label(double x, double y, std::string_view text, std::string_view anchor = "start",
               std::string_view css_class = "label", double dx = 0, double dy = 0, double rotate = 0);
    void legend(std::vector<LegendEntry> entries) { legend_ = std::move(entries); }

    int marks() const { return marks_; }
    /// The finished SVG element.
    std::string svg(std::string_view aria_label) const;

private:
    std::string name_;
    int width_, height_;
    Axis x_, y_;
    double left_, right_, top_, bottom_;
    std::string background_, marks_svg_, overlay_;
    std::vector<LegendEntry> legend_;
    int marks_ = 0;
};

} // namespace harness::report
