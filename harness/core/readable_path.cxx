#include "harness/core/readable_path.hxx"

#include <algorithm>
#include <sys/stat.h>

namespace harness {

namespace fs = std::filesystem;

namespace {

bool lies_in(const fs::path& path, const fs::path& root)
{
    auto p = path.begin();
    for (auto r = root.begin(); r != root.end(); ++r, ++p) {
        if (r->empty()) continue; // a trailing separator
        if (p == path.end() || *p != *r) return false;
    }
    return true;
}

const fs::path* containing(const fs::path& resolved, const std::vector<fs::path>& roots,
                           std::vector<fs::path>& resolved_roots)
{
    resolved_roots.clear();
    for (const auto& root : roots) resolved_roots.push_back(resolved_path(root));
    for (const auto& root : resolved_roots)
        if (lies_in(resolved, root)) return &root;
    return nullptr;
}

} // namespace

fs::path resolved_path(const fs::path& path)
{
    std::error_code ec;
    const fs::path absolute = fs::absolute(path, ec);
    if (ec) return path.lexically_normal();
    fs::path out = fs::weakly_canonical(absolute, ec);
    return ec ? absolute.lexically_normal() : out;
}

bool in_git_folder(const fs::path& resolved, const fs::path& root)
{
    if (!lies_in(resolved, root)) return false;
    const fs::path below = resolved.lexically_relative(root);
    return std::any_of(below.begin(), below.end(), [](const fs::path& part) { return part == ".git"; });
}

PathCheck check_readable_file(const fs::path& path, const ReadableFolders& folders)
{
    PathCheck check;
    check.resolved = resolved_path(path);
    std::vector<fs::path> roots;
    const fs::path* project = containing(check.resolved, folders.project, roots);
    std::vector<fs::path> toolkit_roots;
    const bool in_toolkit = containing(check.resolved, folders.toolkit, toolkit_roots) != nullptr;
    if (!project && !in_toolkit) return check; // outside
    // A project folder may hold the toolkit (or the other way round): .git counts in either.
    for (const auto& root : roots)
        if (in_git_folder(check.resolved, root)) {
            check.verdict = PathVerdict::in_git_folder;
            return check;
        }
    for (const auto& root : toolkit_roots)
        if (in_git_folder(check.resolved, root)) {
            check.verdict = PathVerdict::in_git_folder;
            return check;
        }
    struct stat st {};
    if (::stat(check.resolved.c_str(), &st) != 0) {
        check.verdict = PathVerdict::missing;
        return check;
    }
    if (!S_ISREG(st.st_mode)) {
        check.verdict = PathVerdict::not_regular_file;
        return check;
    }
    // Package managers install toolkits as hard links; a checkout never makes one.
    check.verdict = !in_toolkit && st.st_nlink > 1 ? PathVerdict::hard_link : PathVerdict::readable;
    return check;
}

PathCheck check_readable_folder(const fs::path& folder, const std::vector<fs::path>& project)
{
    PathCheck check;
    check.resolved = resolved_path(folder);
    std::vector<fs::path> roots;
    if (!containing(check.resolved, project, roots)) return check;
    for (const auto& root : roots)
        if (in_git_folder(check.resolved, root)) {
            check.verdict = PathVerdict::in_git_folder;
            return check;
        }
    struct stat st {};
    if (::stat(check.resolved.c_str(), &st) != 0)
        check.verdict = PathVerdict::missing;
    else
        check.verdict = S_ISDIR(st.st_mode) ? PathVerdict::readable : PathVerdict::not_regular_file;
    return check;
}

std::string path_refusal(PathVerdict verdict)
{
    switch (verdict) {
    case PathVerdict::readable: return "";
    case PathVerdict::outside: return "lies outside the project once its links are resolved";
    case PathVerdict::in_git_folder:
        return "lies in the project's .git folder, which is never read (a checkout keeps its remote's credentials "
               "there)";
    case PathVerdict::hard_link:
        return "is a hard link (a second name for a file that may lie outside the project; a git checkout never "
               "makes one)";
    case PathVerdict::missing: return "does not exist";
    case PathVerdict::not_regular_file: return "is not a regular file";
    }
    return "";
}

} // namespace harness
