#pragma once
// Confining a compiler process to the files it may read. The process that runs NVRTC on a
// project's kernels is restricted, through Linux's Landlock, to reading the project, the include
// folders the suite declares and the CUDA toolkit, and to writing nothing at all, so that no
// #include (however it names its file: a macro, a link, /proc) can read a file elsewhere. Where
// Landlock is missing too, the process has no environment to read and works in an empty folder.

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

/// Restricts the calling process and its future children, for good: files under `readable` (folders,
/// or single files) may be read, files under `executable` read and mapped as code (shared libraries
/// loaded later), nothing may be written, created or removed anywhere. Returns what the kernel
/// supports; when Landlock is unavailable nothing is restricted (the include scan then stands
/// alone, with isolate_compiler_process()). Throws Error (internal) when Landlock is available but
/// refuses the rules.
ConfinementSupport confine_to(const std::vector<std::filesystem::path>& readable,
                              const std::vector<std::filesystem::path>& executable);

/// A fresh folder that holds nothing and that nobody may write to, for compiler processes to work
/// in: NVRTC looks for `#include "..."` in its working folder before the include paths. Removed
/// with this object; one a killed command left is removed by a later one, a day on.
class EmptyFolder {
public:
    EmptyFolder(); ///< throws Error (environment) when no folder can be made in the temp folder
    ~EmptyFolder();
    EmptyFolder(const EmptyFolder&) = delete;
    EmptyFolder& operator=(const EmptyFolder&) = delete;
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

/// Leaves the calling process (a compiler process, for good) with an empty environment, its
/// variables and the bytes /proc/self/environ shows alike, and `working_folder` as its working
/// folder, so that a file read past the include scan has nothing of the job's to show. Throws
/// Error (environment) when the folder cannot be entered.
void isolate_compiler_process(const std::filesystem::path& working_folder);

/// Whether the command refuses, where compilation cannot be confined, to compile kernels that
/// include project files (see refuse_unconfined_project_includes).
bool unconfined_project_includes_refused();

/// Set by a command for the compilations it starts: in CI mode, unless the user passed
/// --allow-unconfined-compile, compile_suite() compiles no kernel that includes files of its
/// project where Landlock is missing (an environment error), since the include scan would then
/// stand alone between the kernel and every file the job can read.
void refuse_unconfined_project_includes(bool refuse);

/// The option that allows what refuse_unconfined_project_includes() refuses.
inline constexpr const char* allow_unconfined_option = "--allow-unconfined-compile";

} // namespace harness::compile
