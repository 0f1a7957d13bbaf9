#pragma once
// Metrics computed from other metrics (the `derived` rows of the metric table).

#include "harness/core/case_result.hxx"

#include <string>
#include <vector>

namespace harness::profile {

/// Adds every derived metric whose inputs `r` has; leaves out those with a zero denominator.
void add_derived_metrics(CaseResult& r);

/// The measured metrics a derived metric needs (empty for a metric that is not derived).
std::vector<std::string> inputs_of(const std::string& derived_metric);

} // namespace harness::profile
