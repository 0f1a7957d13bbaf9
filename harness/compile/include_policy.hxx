#pragma once
// Which project files a kernel may not read even though they lie inside its project: anything in
// a `.git` folder (CI checkouts keep credentials in .git/config) and hard links (a second name,
// inside the project, for a file that may live anywhere on the same file system). Git checkouts
// create neither, so a kernel that needs one is not a kernel of a checkout.

#include <filesystem>
#include <string>
#include <vector>

namespace harness::compile {

/// Throws CompileError when `file` (canonical), a project file a compilation would read, lies in a
/// `.git` folder below one of `project_roots` or is a regular file with more than one link; files
/// inside `toolkit_roots` are exempt (package managers install toolkits as hard links). `where`
/// begins the message: the including file and line and the directive, or the source file.
void check_project_file(const std::filesystem::path& file, const std::vector<std::filesystem::path>& project_roots,
                        const std::vector<std::filesystem::path>& toolkit_roots, const std::string& where);

/// The folders a confined compiler may read (Landlock grants whole folders), from `folders` as
/// they resolve: a folder in a `.git` folder of `project_roots` is left out, and one that holds a
/// `.git` entry is replaced by its other entries that are not symbolic links, so that a confined
/// compiler may read the project but neither its repository nor what a committed link points to.
std::vector<std::filesystem::path> confined_readable_folders(const std::vector<std::filesystem::path>& folders,
                                                             const std::vector<std::filesystem::path>& project_roots);

} // namespace harness::compile
