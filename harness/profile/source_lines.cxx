#include "harness/profile/source_lines.hxx"

#include <cstdlib>
#include <cupti_pcsampling.h>

namespace harness::profile {

std::optional<SourcePosition> SourceMap::find(const std::string& function, std::uint32_t pc_offset)
{
    const auto key = std::make_pair(function, pc_offset);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;

    CUpti_GetSassToSourceCorrelationParams p{};
    p.size = CUpti_GetSassToSourceCorrelationParamsSize;
    p.cubin = cubin_.data();
    p.cubinSize = cubin_.size();
    p.functionName = function.c_str();
    p.pcOffset = pc_offset;
    std::optional<SourcePosition> found;
    // A failure means "not in this cubin" (e.g. a library kernel) or "no line info": not an error.
    if (cuptiGetSassToSourceCorrelation(&p) == CUPTI_SUCCESS && p.lineNumber > 0) {
        found =
            SourcePosition{p.fileName ? p.fileName : "", p.dirName ? p.dirName : "", static_cast<int>(p.lineNumber)};
    }
    std::free(p.fileName); // CUPTI allocates these for the caller
    std::free(p.dirName);
    cache_[key] = found;
    return found;
}

} // namespace harness::profile
