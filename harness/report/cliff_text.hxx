#pragma once
// How every report names a cliff map and writes a cliff's place, depth, significance and verdicts,
// so that the console, summary.md, results.csv and report.html say the same thing the same way.

#include "harness/core/cliff_map.hxx"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace harness::report {

/// "gemm_tiled time_per_work vs N (K=64, sm_90)": what a map shows, for headings and lines.
std::string cliff_map_title(const CliffMap& map);

/// "N 4,096 → 4,097": the last point before a step and the first after it.
std::string cliff_position_text(const CliffMap& map, double x_before, double x_after, std::string_view arrow = "→");
std::string cliff_position_text(const CliffMap& map, const Cliff& cliff, std::string_view arrow = "→");

/// "1.2 → 1.66 us/unit": the series' level on either side of the step.
std::string cliff_levels_text(const CliffMap& map, const Cliff& cliff, std::string_view arrow = "→");

/// "+38 %", "-25 %": how far a level moves across a step of this depth.
std::string cliff_depth_text(double depth);

/// "41× noise", or "exact" for a step of an exact series (infinite significance).
std::string cliff_significance_text(const Cliff& cliff);

/// "waves +38 %": the label a chart puts on the step.
std::string cliff_label(const Cliff& cliff);

/// The map's deepest cliff (largest |depth|); nullptr when it has none.
const Cliff* deepest_cliff(const CliffMap& map);

/// Whether `verdict` judges the whole map (a map the baseline does not hold) rather than a place.
bool judges_whole_map(const CliffVerdict& verdict);

/// The gate's verdicts on `cliff`: those at its place (against the baseline, by `expect:` rules);
/// empty while the map is not compared.
std::vector<const CliffVerdict*> cliff_verdicts(const CliffMap& map, const Cliff& cliff);

/// The verdicts at no cliff of this run, in the map's order: cliffs the baseline holds that
/// vanished, and verdicts on the whole map.
std::vector<const CliffVerdict*> verdicts_without_cliff(const CliffMap& map);

/// The most serious of `verdicts`, in the order worst_verdict uses; nullopt for none.
std::optional<Verdict> worst_cliff_verdict(const std::vector<const CliffVerdict*>& verdicts);

/// "1 regressed, 1 improved": the map's verdicts other than passed, by kind, most serious first;
/// "" when every cliff passed or the map is not compared.
std::string cliff_verdict_counts(const CliffMap& map);

} // namespace harness::report
