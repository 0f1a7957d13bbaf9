#pragma once
// The resource figures of a case, from its kernels' launches: the static tier reads them from the
// cubin, a GPU run from the driver; both report them the same way.

#include "harness/compile/occupancy.hxx"
#include "harness/core/case_result.hxx"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace harness::compile {

/// What one launch of a case uses and allows.
struct LaunchResources {
    int registers = 0;
    int static_shared_bytes = 0;
    int dynamic_shared_bytes = 0;
    int local_bytes = 0;
    std::optional<int> barriers{};          ///< named barriers, where the source reports them
    std::optional<int> spill_store_bytes{}; ///< from ptxas' report, where the source has one
    std::optional<int> spill_load_bytes{};
    int blocks_per_sm = 0;
    double occupancy = 0.0;
    std::optional<OccupancyLimiter> limiter{}; ///< what caps blocks_per_sm, where known
    std::string impossible_reason{};           ///< why no block fits, when blocks_per_sm is 0
};

/// A multi-launch variant reports its most demanding kernel: the largest of each resource and the
/// launch with the least occupancy; and each launch's own figures under its label
/// ("registers@rstd_kernel"), so that a change in any launch is judged as a single kernel's is.
class ResourceTotals {
public:
    /// `label` names the launch's own figures; empty for a variant of one launch.
    void add(const LaunchResources& launch, const std::string& label = {});
    /// Sets the resource metrics (only those every launch reported), the occupancy limiter, and
    /// each labelled launch's own figures and limiter (in `result.launches`, matched by label).
    void write(CaseResult& result) const;
    /// The launch with the least occupancy, once one was added.
    const std::optional<LaunchResources>& least_occupied() const { return least_; }

private:
    LaunchResources max_;
    std::optional<LaunchResources> least_;
    std::vector<std::pair<std::string, LaunchResources>> labelled_;
};

} // namespace harness::compile
