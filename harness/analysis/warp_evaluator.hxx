#pragma once
// One warp of a launch run through a kernel's PTX lane by lane (access_model.cxx samples the warps):
// integer values that derive from thread index, launch and scalar arguments are exact, anything
// else is unknown, and every memory instruction's lanes' addresses become sectors or wavefronts.

#include "harness/analysis/access_model.hxx"

#include <memory>

namespace harness::analysis {

/// What the warps evaluated so far found at one memory instruction, summed over them.
struct AccessTally {
    std::uint64_t requests = 0, sectors = 0, ideal_sectors = 0, wavefronts = 0, ideal_wavefronts = 0;
    bool unpredicted = false;
    std::string reason;
    AccessKind kind = AccessKind::other; ///< as the first execution resolved it (generic addresses)
    std::string buffer;
    bool operator==(const AccessTally&) const = default;
};

/// How one warp's evaluation ended.
struct WarpOutcome {
    bool followed = true; ///< to its last instruction; false: `reason` says where it stopped
    std::string reason;
    std::uint64_t instructions = 0;  ///< evaluated
    std::uint64_t extrapolated = 0;  ///< instructions of loop iterations skipped ahead (loop_skip in the .cxx)
    std::uint64_t loops_skipped = 0; ///< times a loop was skipped ahead
};

/// Evaluates the warps of one kernel at one launch; each run() adds to the tallies of the kernel's
/// memory instructions, listed by accesses().
class WarpEvaluator {
public:
    WarpEvaluator(const PtxModule& module, const PtxKernel& kernel, const LaunchShape& launch,
                  const EvaluationBudget& budget);
    ~WarpEvaluator();
    WarpEvaluator(const WarpEvaluator&) = delete;
    WarpEvaluator& operator=(const WarpEvaluator&) = delete;

    /// The kernel's memory instructions, in program order, without figures.
    const std::vector<AccessPrediction>& accesses() const;
    /// A reason that stops every warp before it starts (too many registers, a call), else empty.
    const std::string& unsupported() const;
    /// Warp `warp` of block `block`, for at most `instructions` warp-level instructions; `tallies`
    /// has one entry per access.
    WarpOutcome run(const std::array<std::uint32_t, 3>& block, std::uint32_t warp, std::vector<AccessTally>& tallies,
                    std::uint64_t instructions);

private:
    struct State;
    std::unique_ptr<State> state_;
};

} // namespace harness::analysis
