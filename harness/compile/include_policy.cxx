#include "harness/compile/include_policy.hxx"

#include "harness/compile/compile_error.hxx"
#include "harness/core/readable_path.hxx"

#include <fmt/format.h>
#include <sys/stat.h>

namespace harness::compile {

namespace fs = std::filesystem;

void check_project_file(const fs::path& file, const std::vector<fs::path>& project_roots,
                        const std::vector<fs::path>& toolkit_roots, const std::string& where)
{
    const PathCheck check = check_readable_file(file, {project_roots, toolkit_roots});
    if (check.verdict == PathVerdict::in_git_folder)
        throw CompileError(fmt::format("{}: {} lies in the project's .git folder, which kernels may not read "
                                       "(a checkout keeps its remote's credentials there)",
                                       where, file.string()),
                           "");
    if (check.verdict == PathVerdict::hard_link) {
        struct stat st {};
        ::stat(check.resolved.c_str(), &st);
        throw CompileError(fmt::format("{}: {} is a hard link ({} names for one file): its other names may lie "
                                       "outside the project, and a git checkout never makes one; copy the file "
                                       "instead",
                                       where, file.string(), st.st_nlink),
                           "");
    }
}

std::vector<fs::path> confined_readable_folders(const std::vector<fs::path>& folders,
                                                const std::vector<fs::path>& project_roots)
{
    std::vector<fs::path> out;
    for (const auto& folder : folders) {
        // Granted as it resolves: Landlock follows a link given to it, so a folder that is a link
        // (or lies below one) is granted at its target, and only when that target may be read.
        const fs::path resolved = resolved_path(folder);
        const PathCheck check = check_readable_folder(resolved, project_roots);
        // Outside the project is fine here: the toolkit, and include folders the user allowed elsewhere.
        if (check.verdict == PathVerdict::in_git_folder || check.verdict == PathVerdict::missing) continue;
        std::error_code ec;
        if (!fs::exists(fs::symlink_status(resolved / ".git", ec))) {
            out.push_back(resolved);
            continue;
        }
        // A folder that holds .git is granted entry by entry, .git left out. A link among them is
        // never granted: one to a file of the project is granted through that file's own entry,
        // and one to anything else (`rootlink -> /`) must grant nothing.
        for (const auto& entry : fs::directory_iterator(resolved, ec)) {
            if (entry.path().filename() == ".git") continue;
            if (fs::is_symlink(fs::symlink_status(entry.path(), ec))) continue;
            out.push_back(entry.path());
        }
    }
    return out;
}

} // namespace harness::compile
