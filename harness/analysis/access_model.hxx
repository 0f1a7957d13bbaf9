#pragma once
// Without a GPU, what the GPU would count: the addresses every memory instruction of a kernel's PTX
// issues at one launch, warp by warp, and from them global sectors per request and shared-memory
// wavefronts against their ideals, per instruction (with its source line and the buffer it
// addresses) and for the whole launch. An address that depends on loaded data, an atomic's result
// or an instruction the model does not evaluate is not predicted, with the reason; never guessed.

#include "harness/analysis/ptx_module.hxx"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace harness::analysis {

/// One kernel argument as launched: a buffer's device address or a scalar's bits.
struct KernelArgument {
    enum class Kind : std::uint8_t { scalar, buffer };
    Kind kind = Kind::scalar;
    std::string name;        ///< the suite's buffer name, or the scalar's spelling
    std::uint64_t value = 0; ///< the address (buffers) or the value's bits, little-endian (scalars)
};

/// The launch the accesses are evaluated at.
struct LaunchShape {
    std::array<std::uint32_t, 3> grid{1, 1, 1};
    std::array<std::uint32_t, 3> block{1, 1, 1};
    std::uint32_t dynamic_shared_bytes = 0;
    std::vector<KernelArgument> args; ///< one per kernel parameter, in order
};

/// A buffer's device address as the harness allocates it: every allocation starts on a 256-byte
/// boundary (cudaMalloc's alignment), `index` apart so that no two buffers overlap.
std::uint64_t model_buffer_address(std::size_t index);

/// What one evaluation may spend; beyond it the kernel is not predicted, saying which ran out.
struct EvaluationBudget {
    std::uint64_t instructions_per_warp = 1u << 18;
    std::uint64_t instructions_per_kernel = 1u << 22;
    std::size_t max_registers = 1u << 16;
    /// Loops whose iterations provably repeat (integer values affine in the iteration, every access
    /// translated by whole sectors or banks) are skipped ahead to their next change, with their
    /// figures added per iteration skipped; false: every iteration is evaluated.
    bool skip_loops = true;
};

enum class AccessKind : std::uint8_t {
    global_load,
    global_store,
    global_atomic,
    shared_load,
    shared_store,
    shared_atomic,
    local,
    other
};
const char* to_string(AccessKind kind);
bool is_global(AccessKind kind);
bool is_shared(AccessKind kind);

/// One memory instruction of the kernel and its figures over the whole launch.
struct AccessPrediction {
    int instruction = 0; ///< index in the kernel's instructions
    int ptx_line = 0;
    std::string file; ///< source file of the instruction's .loc, empty when none
    int line = 0;
    AccessKind kind = AccessKind::other;
    std::string opcode; ///< "ld.global.nc.v4.f32"
    std::uint32_t bytes_per_lane = 0;
    std::string buffer; ///< the kernel parameter or shared variable the address derives from
    int order = 0;      ///< its rank among the kernel's accesses of the same buffer and kind
    bool predicted = true;
    std::string reason;          ///< why not, when not predicted
    double requests = 0;         ///< warp-level executions with at least one lane active
    double sectors = 0;          ///< global: 32-byte sectors touched
    double ideal_sectors = 0;    ///< global: the same bytes, aligned and contiguous
    double wavefronts = 0;       ///< shared
    double ideal_wavefronts = 0; ///< shared: without bank conflicts
    double excess() const { return is_shared(kind) ? wavefronts - ideal_wavefronts : sectors - ideal_sectors; }
};

/// The kernel's figures at one launch, as the GPU's metrics of the same names measure them.
struct PredictedTotals {
    double global_ld_requests = 0, global_ld_sectors = 0;
    double global_st_requests = 0, global_st_sectors = 0;
    double global_sectors = 0, global_sectors_ideal = 0; ///< loads, stores and atomics
    double shared_wavefronts = 0, shared_wavefronts_ideal = 0;
    bool operator==(const PredictedTotals&) const = default;
};

/// Everything predicted for one kernel at one launch.
struct KernelPrediction {
    std::string kernel;
    /// Every access predicted and every sampled warp followed to its end: the totals stand for the
    /// launch. Otherwise `reasons` says what was not.
    bool complete = true;
    /// Blocks that stand for others gave figures equal to one another, so the scaled totals are
    /// exact; false: they are the mean of the samples, scaled.
    bool exact = true;
    std::vector<std::string> reasons;
    std::vector<AccessPrediction> accesses;
    PredictedTotals totals;
    std::string sampling; ///< how the launch was sampled, in words
    std::uint64_t warps_evaluated = 0;
    std::uint64_t instructions_evaluated = 0;    ///< warp-level
    std::uint64_t instructions_extrapolated = 0; ///< warp-level, of loop iterations skipped ahead
};

/// Evaluates `kernel` at `launch`. Throws harness::Error (bad input) when the launch does not fit
/// the kernel (arguments of another number than its parameters).
KernelPrediction predict_accesses(const PtxModule& module, const PtxKernel& kernel, const LaunchShape& launch,
                                  const EvaluationBudget& budget = {});

/// Wavefronts one shared-memory access of a warp takes, and the conflict-free ideal, with the
/// hardware's rules: 32 banks of 4 bytes; 64-bit accesses processed per half-warp and 128-bit
/// per quarter-warp; lanes reading the same word are served together. `addresses[i]` is lane i's,
/// `active` the lanes that access.
struct Wavefronts {
    std::uint32_t actual = 0, ideal = 0;
};
Wavefronts shared_wavefronts(const std::array<std::uint64_t, 32>& addresses, std::uint32_t active,
                             std::uint32_t bytes_per_lane);

/// Sectors one global access of a warp touches and the ideal for the same bytes.
struct Sectors {
    std::uint32_t actual = 0, ideal = 0;
};
Sectors global_sectors(const std::array<std::uint64_t, 32>& addresses, std::uint32_t active,
                       std::uint32_t bytes_per_lane);

} // namespace harness::analysis
