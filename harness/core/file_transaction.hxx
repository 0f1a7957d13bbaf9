#pragma once
// Replacing several files as one change: every file gets its new content, or none changes. Used
// for baselines, where half an update would leave one architecture's figures out of step with
// another's.

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace harness {

/// New content for each path. Every new text is first written beside its file (created
/// exclusively, never through a symbolic link) and flushed; only then are the files renamed into
/// place, and a rename that fails puts back every file already replaced. Throws Error
/// (environment) naming the file and the system's reason; nothing is left behind but the old files.
void replace_files_together(const std::vector<std::pair<std::filesystem::path, std::string>>& files);

/// An exclusive advisory lock (flock) on a folder, held for the object's lifetime, so that
/// concurrent updates of the same files take turns. Creates the folder if needed.
class FolderLock {
public:
    explicit FolderLock(const std::filesystem::path& folder);
    ~FolderLock();
    FolderLock(const FolderLock&) = delete;
    FolderLock& operator=(const FolderLock&) = delete;

private:
    int fd_ = -1;
};

} // namespace harness
