#include "harness/core/cliff_map.hxx"

namespace harness {

namespace {

constexpr CliffCause every_cause[] = {CliffCause::waves,     CliffCause::tiles,     CliffCause::alignment,
                                      CliffCause::footprint, CliffCause::occupancy, CliffCause::unexplained};

} // namespace

const char* cliff_cause_name(CliffCause cause)
{
    // No default: a new cause without a name is a compiler warning.
    switch (cause) {
    case CliffCause::waves: return "waves";
    case CliffCause::tiles: return "tiles";
    case CliffCause::alignment: return "alignment";
    case CliffCause::footprint: return "footprint";
    case CliffCause::occupancy: return "occupancy";
    case CliffCause::unexplained: return "unexplained";
    }
    return "unexplained";
}

std::optional<CliffCause> cliff_cause_from_name(const std::string& name)
{
    for (const CliffCause cause : every_cause)
        if (name == cliff_cause_name(cause)) return cause;
    return std::nullopt;
}

} // namespace harness
