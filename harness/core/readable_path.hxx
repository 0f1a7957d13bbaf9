#pragma once
// The one rule for every file the tool reads on a kernel's behalf or quotes into a report: a
// kernel's includes, the folders a confined compiler may read, a suite's include folders, the
// source lines of a hotspot, the files a module's line table and source manifest name, a Triton
// export's source. A path counts as it resolves (every symbolic link followed), must lie in one
// of the folders allowed for it, never in a `.git` folder (a CI checkout keeps its remote's
// credentials in .git/config), and a project file must not be a hard link (a second name, inside
// the project, for a file that may lie anywhere on the same file system). Git checkouts make
// neither, so nothing a checkout needs is refused.

#include <filesystem>
#include <string>
#include <vector>

namespace harness {

/// The folders a file may be read from.
struct ReadableFolders {
    std::vector<std::filesystem::path> project; ///< the project, the suite's include folders, a source's folder
    std::vector<std::filesystem::path> toolkit; ///< the CUDA toolkit's headers: trusted, hard links allowed
};

enum class PathVerdict {
    readable,
    outside,          ///< resolves outside every allowed folder
    in_git_folder,    ///< lies in a `.git` folder of an allowed folder
    hard_link,        ///< a project file with more than one name
    missing,          ///< inside, but nothing is there
    not_regular_file, ///< inside, but a folder, device or pipe
};

/// What the rule says of reading `path` and where it resolves to. The file is looked at (stat)
/// only once it lies inside an allowed folder and outside `.git`, so that the verdict on a file
/// elsewhere says nothing of whether it exists.
struct PathCheck {
    PathVerdict verdict = PathVerdict::outside;
    std::filesystem::path resolved; ///< absolute, links resolved where they exist
};

/// The rule for reading `path` as a file.
PathCheck check_readable_file(const std::filesystem::path& path, const ReadableFolders& folders);

/// The rule for granting `folder` whole (a suite's include folder, a confined compiler's folder):
/// readable when it resolves inside one of `project` and outside every `.git` folder of it;
/// missing when nothing is there yet; not_regular_file when it is no folder.
PathCheck check_readable_folder(const std::filesystem::path& folder, const std::vector<std::filesystem::path>& project);

/// `path` with every link that exists resolved, absolute; lexically normalised when it cannot be.
std::filesystem::path resolved_path(const std::filesystem::path& path);

/// Whether `resolved` (absolute, resolved) lies in a `.git` folder below `root`, or is one.
bool in_git_folder(const std::filesystem::path& resolved, const std::filesystem::path& root);

/// Why the rule refuses `path`: "lies outside the project", "lies in the project's .git folder ...".
/// Empty for readable.
std::string path_refusal(PathVerdict verdict);

} // namespace harness
