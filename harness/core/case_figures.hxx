#pragma once
// The names of a case's figures in report order: the variant's own, in metric-table order, then
// each labelled launch's ("registers@rstd_kernel"), launch by launch, in table order. Comparison and
// reports walk the same list, so that a launch's figure is judged and shown wherever its
// variant's is.

#include "harness/core/case_result.hxx"
#include "harness/core/metrics.hxx"

#include <string>
#include <utility>
#include <vector>

namespace harness {

/// Every figure name `r` may hold, each with its metric's row (whether or not `r` has a value).
std::vector<std::pair<MetricInfo, std::string>> case_figure_names(const CaseResult& r);

} // namespace harness
