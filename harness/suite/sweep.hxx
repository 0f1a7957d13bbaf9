#pragma once
// Expands a suite's parameter sweep into cases: every variant at every point.

#include "harness/suite/suite.hxx"

#include <string>
#include <string_view>
#include <vector>

namespace harness::suite {

/// One variant at one parameter point.
struct Case {
    std::size_t variant = 0; ///< index into Suite::variants
    std::size_t point = 0;   ///< index of the parameter point
    Bindings params;
    std::string params_text; ///< "M=256 N=256", in declaration order
};

/// The cartesian product of the parameters, in declaration order (the last varies fastest).
std::vector<Bindings> sweep_points(const Suite& suite);

/// "N=256 K=64" for a point, in the suite's parameter order.
std::string params_text(const Suite& suite, const Bindings& point);

/// The values of the parameters other than `axis` at `point`, "K=64 M=128" (params_text without
/// the axis; "" when there are none): the place of a cliff map along a scanned axis.
std::string others_text(const Suite& suite, const Bindings& point, std::string_view axis);

/// The params_text of the point at `x` along `axis` whose other parameters have the values that
/// `others` (others_text) names.
std::string point_text(const Suite& suite, std::string_view axis, std::int64_t x, const std::string& others);

/// All cases, grouped by point, the reference variant first within each point so that its output
/// is at hand when the others are verified.
std::vector<Case> expand_cases(const Suite& suite);

} // namespace harness::suite
