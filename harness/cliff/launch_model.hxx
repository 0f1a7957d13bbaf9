#pragma once
// Why a series steps between two adjacent points of a scanned axis, from a model of each point's
// launch on the GPU it ran on (or the architecture the static tier compiled for): waves of blocks
// over the SMs, a grid's ceil-division by a tile, a pitch against 32-byte sectors, a row's footprint
// in 128-byte lines and 32-byte sectors, resident blocks per SM.

#include "harness/core/cliff_map.hxx"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace harness::cliff {

/// The unit of global memory the alignment cause counts in: a pitch that is no multiple of it
/// starts rows inside a sector.
inline constexpr std::uint64_t sector_bytes = 32;
/// The unit the caches fetch and keep: a row spanning one more of them costs one more fetch per row.
inline constexpr std::uint64_t line_bytes = 128;

/// One point's launch, as the run (or the static tier) knows it.
struct LaunchShape {
    double x = 0; ///< the axis value
    std::array<std::uint64_t, 3> grid{1, 1, 1};
    std::array<std::uint64_t, 3> block{1, 1, 1};
    int blocks_per_sm = 0;          ///< resident blocks per SM (the occupancy calculator); 0: unknown
    std::string limiter;            ///< what limits blocks_per_sm: "registers", "shared memory", ...; "" unknown
    int registers_per_thread = 0;   ///< 0: unknown
    std::uint64_t shared_bytes = 0; ///< per block, static + dynamic
    /// A row pitch or offset in bytes that the suite names for the axis (`scan: {pitch: ...}`);
    /// nullopt where it names none.
    std::optional<std::uint64_t> pitch_bytes;
    /// Global sectors per request measured at this point (profiled either side of a step to
    /// confirm an alignment cause); nullopt where not measured.
    std::optional<double> sectors_per_request;
};

/// What the model needs of the GPU.
struct GpuShape {
    int sm_count = 0; ///< 0: unknown (the static tier): waves are not judged
};

/// A step's cause and the sentence that shows it.
struct Explanation {
    CliffCause cause = CliffCause::unexplained;
    std::string text; ///< "wave quantisation: 264 -> 265 blocks, 2 -> 3 waves of 132 SMs x 2 blocks"
};

/// The cause of a step between `before` and `after` (adjacent points of one axis). Checked in
/// order: occupancy (blocks per SM changed, both known), waves (the number of waves changed;
/// needs the SM count and blocks per SM), tiles (a grid dimension gained a block without the
/// axis value growing in proportion), alignment (the pitch's remainder by 32 bytes changed from
/// or to 0; "confirmed" when both points' sectors per request are known and differ, "not
/// confirmed" when known and equal), footprint (the pitch, as aligned as before, spans one more
/// 128-byte line or, failing that, one more 32-byte sector); else unexplained. `axis` names the scanned parameter in
/// the text ("tile of 32 along N").
Explanation explain_step(const LaunchShape& before, const LaunchShape& after, const GpuShape& gpu,
                         std::string_view axis = "x");

/// Whether counters measured either side of an alignment step bear it out: more sectors per
/// request across a step where the pitch left sector alignment (the step is slower:
/// `rise_expected`), fewer across one where it came back.
bool alignment_confirmed(double sectors_before, double sectors_after, bool rise_expected);

/// What those counters add to the step's explanation: "; confirmed: sectors per request 4.0 -> 5.0",
/// or "; not confirmed by counters (...)" when they are equal or moved the other way.
std::string alignment_confirmation(double sectors_before, double sectors_after, bool rise_expected);

/// Explains `cliff` (found along the axis whose points' launches are `shapes`, in axis order) from
/// the adjacent pairs of points from x_before to x_after, or, where the model changes in none of
/// them, the pair either side (the step finder placed the edge one point off); the first cause in
/// explain_step's order wins, the earlier pair on a tie. Fills its cause and explanation.
void explain_cliff(Cliff& cliff, const std::vector<LaunchShape>& shapes, const GpuShape& gpu,
                   std::string_view axis = "x");

} // namespace harness::cliff
