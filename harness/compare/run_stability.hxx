#pragma once
// Repeated runs of one suite side by side: do the exact figures repeat, and how far do the noisy
// ones move? (`harness stability`, ci/repeat-check.sh)

#include "harness/core/metrics.hxx"
#include "harness/core/run_report.hxx"

#include <algorithm>
#include <string>
#include <vector>

namespace harness::compare {

/// How one metric varied over the runs, across every case that passed in all of them.
struct MetricSpread {
    std::string metric;
    Stability stability = Stability::exact;
    std::size_t cases = 0;     ///< cases that have the metric in every run
    std::size_t differing = 0; ///< of those, cases whose values are not all equal
    double worst_spread = 0.0; ///< largest (max - min) / |max| over the cases
    std::string worst_case;    ///< "variant params [arch]" of that spread
    double worst_min = 0.0, worst_max = 0.0;
};

/// An exact figure that did not repeat: the case, the metric and its value in each run.
struct ExactDifference {
    std::string case_name;
    std::string metric;
    std::vector<double> values;
    /// Whether the suite's rules compare it: false for a figure that no run gave a verdict for
    /// while it judged others of the case (rule `ignore`: shown, never gated). Such a difference
    /// is listed but does not fail (instrumented SASS sector counts of cp.async loads vary by a
    /// few sectors between processes).
    bool gated = true;
};

struct StabilityReport {
    std::string suite;
    std::size_t runs = 0;
    std::size_t cases = 0;                 ///< compared: passed in every run
    std::vector<std::string> not_compared; ///< "case: why" (absent or not passed in some run)
    std::vector<MetricSpread> metrics;     ///< in metric-table order, then unknown names
    std::vector<ExactDifference> differences;

    /// Whether every exact figure the suite gates repeated.
    bool exact_figures_repeat() const
    {
        return std::none_of(differences.begin(), differences.end(), [](const ExactDifference& d) { return d.gated; });
    }
};

/// Compares the results of runs of one suite on one GPU (or static runs for the same
/// architectures). Throws Error(bad_input) for fewer than two runs or runs of different suites,
/// modes or GPUs; `names` label the runs in messages.
StabilityReport run_stability(const std::vector<harness::RunReport>& runs, const std::vector<std::string>& names);

/// A plain-text summary: exact metrics that repeat, differences, and the spread of noisy ones.
std::string format_stability(const StabilityReport& report);

} // namespace harness::compare
