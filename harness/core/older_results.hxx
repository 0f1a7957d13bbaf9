#pragma once
// Results files of schema version 3 or older kept some facts only as the text the reports showed:
// a verdict's tolerance in its rule ("rel 5%", "samples 5% (p = 0.41)"), why it was not compared
// after the ':' of its message, a launch that repeats a kernel as the '#' of its label, a cliff
// map's other parameters in its "K=64 M=128". Such a file is read with those facts taken from that
// text here, once; a file of a later version carries them as fields and nothing reads text back.

#include "harness/core/case_result.hxx"
#include "harness/core/cliff_map.hxx"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace harness {

/// The first results schema version whose verdicts and launches carry those facts as fields.
inline constexpr int results_version_with_facts = 4;

/// The band of a verdict's rule as version 3 or older wrote it: the rule's text less a trailing
/// " (...)" (the p-value of "samples", "(--strict)"), read by the rule syntax; none for text that is
/// no baseline rule ("expect <= 64", "cliffs (min_depth 0.05)", "measured", "sass").
std::optional<ToleranceBand> tolerance_of_older_rule(std::string_view rule);

/// Why a skipped verdict of version 3 or older was not compared: its message after the first ':'
/// ("registers: not predicted: ..." -> "not predicted: ..."), or the whole message without one.
std::string not_compared_of_older_message(std::string_view message);

/// The other parameters of a cliff map of version 3 or older, from its `others` ("K=64 M=128");
/// a word that is no name=integer is left out.
std::map<std::string, std::int64_t> other_params_of_older_text(std::string_view others);

/// Fills what the cases and cliff maps of a file of version 3 or older lack: each verdict's
/// tolerance and reason for not being compared (the cases' and the maps'), each launch's
/// `repeated`, each map's `other_params`.
void read_facts_of_older_results(std::vector<CaseResult>& results, std::vector<CliffMap>& maps);

} // namespace harness
