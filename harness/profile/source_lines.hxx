#pragma once
// Instruction -> source line, from the line table NVRTC writes with -lineinfo.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

namespace harness::profile {

/// Where an instruction came from, as recorded in the cubin.
struct SourcePosition {
    std::string file;      ///< the name NVRTC was given (the kernel file's name) or an include path
    std::string directory; ///< often empty for NVRTC programs
    int line = 0;
};

/// Looks up and remembers source positions of one cubin's instructions. Needs no GPU.
class SourceMap {
public:
    explicit SourceMap(const std::string& cubin) : cubin_(cubin) {}
    /// nullopt when the function is not in this cubin or the PC has no line information.
    std::optional<SourcePosition> find(const std::string& function, std::uint32_t pc_offset);

private:
    const std::string& cubin_;
    std::map<std::pair<std::string, std::uint32_t>, std::optional<SourcePosition>> cache_;
};

} // namespace harness::profile
