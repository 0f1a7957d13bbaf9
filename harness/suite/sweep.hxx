#pragma once
// Expands a suite's parameter sweep into cases: every variant at every point.

#include "harness/suite/suite.hxx"

#include <cstdint>
#include <map>
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

/// Every point a case runs at, each once: the cartesian product of the parameters, in
/// declaration order (the last varies fastest), each parameter taking the suite's values and then
/// the variants' own values (VariantSpec::params) the suite does not have, keeping only the points
/// of the suite's product and of each variant's own. Cases of different variants at the same
/// values share the point's index. Only those points are built: the work is the sum of the
/// products' sizes (product_size), never the product of every value.
std::vector<Bindings> sweep_points(const Suite& suite);

/// How many points the product of `variant`'s values holds (its own, or else the suite's), which
/// are its cases unless it is the reference; counted without building them, any count beyond
/// `limit` (below SIZE_MAX) given as limit + 1.
std::size_t product_size(const Suite& suite, const VariantSpec& variant, std::size_t limit);

/// Whether `variant` has a case at `point` (one of sweep_points): the reference runs at every
/// point, so that each variant's output is verified at its own values; another variant where each
/// parameter takes one of its own values, or else one of the suite's.
bool runs_at(const Suite& suite, const VariantSpec& variant, const Bindings& point);

/// "N=256 K=64" for a point, in the suite's parameter order.
std::string params_text(const Suite& suite, const Bindings& point);

/// The values of the parameters other than `axis` at `point`, by name: the place of a cliff map
/// along a scanned axis (CliffMap::other_params).
std::map<std::string, std::int64_t> other_params(const Bindings& point, std::string_view axis);

/// The same values as text, "K=64 M=128" (params_text without the axis; "" when there are none).
std::string others_text(const Suite& suite, const Bindings& point, std::string_view axis);

/// The params_text of the point at `x` along `axis` whose other parameters have the values
/// `others` (other_params).
std::string point_text(const Suite& suite, std::string_view axis, std::int64_t x,
                       const std::map<std::string, std::int64_t>& others);

/// All cases, grouped by point, the reference variant first within each point so that its output
/// is at hand when the others are verified; a variant only at the points it runs_at.
std::vector<Case> expand_cases(const Suite& suite);

} // namespace harness::suite
