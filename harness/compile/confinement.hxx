#pragma once
// Confining a compiler process to the files it may read. The process that runs NVRTC on a
// project's kernels is restricted, through Linux's Landlock, to reading the project, the include
// folders the suite declares and the CUDA toolkit, and to writing nothing at all, so that no
// #include (however it names its file: a macro, a link, /proc) can read a file elsewhere.

#include <filesystem>
#include <string>
#include <vector>

namespace harness::compile {

/// Whether this kernel can confine a process, and how.
struct ConfinementSupport {
    bool available = false;
    int abi = 0;        ///< Landlock ABI version, 0 without
    std::string reason; ///< why not, when unavailable
};

/// Asks the kernel (no change to this process).
ConfinementSupport confinement_support();

/// Restricts the calling process and its future children, for good: files under `readable` may be
/// read, files under `executable` read and mapped as code (shared libraries loaded later), nothing
/// may be written, created or removed anywhere. Returns what the kernel supports; when Landlock is
/// unavailable nothing is restricted (the include scan then stands alone). Throws Error (internal)
/// when Landlock is available but refuses the rules.
ConfinementSupport confine_to(const std::vector<std::filesystem::path>& readable,
                              const std::vector<std::filesystem::path>& executable);

} // namespace harness::compile
