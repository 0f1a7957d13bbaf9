#pragma once
// Sparklines of a figure's recent history (MetricVerdict::recent) beside its verdict: Unicode
// blocks for summary.md, a small inline SVG for report.html. Both scale the history and the
// current value together, so a step at the newest commit stands out.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace harness::report {

/// One block per value, ▁ for the lowest of `values` and `scale_with` together up to █ for the
/// highest; all ▄ when they are equal.
std::string block_sparkline(const std::vector<double>& values, std::optional<double> scale_with = std::nullopt);

/// "history (12 commits): ▁▂▂▁▂▁▂ → **█** · min 1.21 · max 1.3 us": the recent values, the
/// current one in bold, and the history's range; "" without history. Markdown.
std::string markdown_sparkline(const std::vector<double>& recent, std::optional<double> current, std::string_view unit);

/// `<svg class="spark" data-sparkline="recent" ...>` (not a chart of the page: no marks): the recent values as a line,
/// the current one as a marked last point in `current_color`, a hover title with the range; "" without history.
std::string svg_sparkline(const std::vector<double>& recent, std::optional<double> current, std::string_view unit,
                          std::string_view current_color);

} // namespace harness::report
