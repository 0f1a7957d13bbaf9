#include "harness/compile/include_policy.hxx"

#include "harness/compile/include_scan.hxx"
#include "harness/compile/nvrtc_compiler.hxx"

#include <algorithm>
#include <fmt/format.h>
#include <sys/stat.h>

namespace harness::compile {

namespace fs = std::filesystem;

namespace {

/// Whether `file` lies in a `.git` folder (or is a `.git` file) below `root`; `root` itself may
/// lie anywhere, a checkout inside another folder named .git included.
bool inside_git_folder(const fs::path& file, const fs::path& root)
{
    if (!inside_any(file, {root})) return false;
    const fs::path below = file.lexically_relative(root);
    return std::any_of(below.begin(), below.end(), [](const fs::path& part) { return part == ".git"; });
}

} // namespace

void check_project_file(const fs::path& file, const std::vector<fs::path>& project_roots,
                        const std::vector<fs::path>& toolkit_roots, const std::string& where)
{
    if (inside_any(file, toolkit_roots)) return;
    for (const auto& root : project_roots)
        if (inside_git_folder(file, root))
            throw CompileError(fmt::format("{}: {} lies in the project's .git folder, which kernels may not read "
                                           "(a checkout keeps its remote's credentials there)",
                                           where, file.string()),
                               "");
    struct stat st {};
    if (::stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink > 1)
        throw CompileError(fmt::format("{}: {} is a hard link ({} names for one file): its other names may lie "
                                       "outside the project, and a git checkout never makes one; copy the file "
                                       "instead",
                                       where, file.string(), st.st_nlink),
                           "");
}

std::vector<fs::path> without_git_folders(const std::vector<fs::path>& folders)
{
    std::vector<fs::path> out;
    for (const auto& folder : folders) {
        std::error_code ec;
        if (!fs::exists(fs::symlink_status(folder / ".git", ec))) {
            out.push_back(folder);
            continue;
        }
        for (const auto& entry : fs::directory_iterator(folder, ec))
            if (entry.path().filename() != ".git") out.push_back(entry.path());
    }
    return out;
}

} // namespace harness::compile
