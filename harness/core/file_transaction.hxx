#pragma once
// Replacing several files as one change: every file gets its new content, or none changes. Used
// for baselines, where half an update would leave one architecture's figures out of step with
// another's.
//
// The files share a folder (the nearest one that holds them all). Their new texts are written into
// a staging folder inside it, `.harness-staging.<random>/`, with a journal that lists them; renaming
// the journal to `.harness-journal` commits the change, in one step. The new files are then renamed
// into place, and the journal and the staging folder removed. A process killed after the commit
// leaves the journal, and the next FolderLock or FolderReadLock on the folder renames the rest; one
// killed before it leaves only a staging folder, which that lock removes. Readers that take a
// FolderReadLock therefore see every file old or every file new, and no leftovers.

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace harness {

/// Called before each change that replace_files_together or recover_replacement makes to the file
/// system, with a few words naming it ("commit", "rename sm_90.csv"): tests stop or fail the
/// process there, at every step in turn.
using TransactionStep = std::function<void(std::string_view step)>;

/// New content for each path, all at once. Nothing is written through a symbolic link: a link at a
/// path is replaced by the file, and a link among the folders below the shared folder is refused.
/// Callers that may race with other writers hold a FolderLock on the shared folder. Throws Error
/// (environment) naming the file and the system's reason; before the commit the files are left as
/// they were, after it (a rename that fails) the journal stays, and the next lock completes it.
void replace_files_together(const std::vector<std::pair<std::filesystem::path, std::string>>& files,
                            const TransactionStep& before_step = {});

/// Completes the replacement that a killed process committed in `folder`, or removes the staging
/// folders of one that it had not; does nothing when none is there. For callers that hold the
/// folder's FolderLock (which calls this) or are alone; throws Error (environment).
void recover_replacement(const std::filesystem::path& folder, const TransactionStep& before_step = {});

/// Whether `folder` holds a committed replacement that is not complete yet (its journal).
bool replacement_pending(const std::filesystem::path& folder);

/// An exclusive advisory lock (flock) on a folder, held for the object's lifetime, so that
/// concurrent updates of the same files take turns. Creates the folder if needed, and completes
/// or removes what a killed replacement left there (recover_replacement).
class FolderLock {
public:
    explicit FolderLock(const std::filesystem::path& folder);
    ~FolderLock();
    FolderLock(const FolderLock&) = delete;
    FolderLock& operator=(const FolderLock&) = delete;

private:
    int fd_ = -1;
};

/// A shared advisory lock on a folder, held while several of its files are read as one state: an
/// update lands before the reads or after them, never between. What a killed replacement left is
/// completed or removed first, under the exclusive lock. A missing folder is not created, and
/// found() is false: there is nothing to read.
class FolderReadLock {
public:
    explicit FolderReadLock(const std::filesystem::path& folder);
    ~FolderReadLock();
    FolderReadLock(const FolderReadLock&) = delete;
    FolderReadLock& operator=(const FolderReadLock&) = delete;

    bool found() const { return fd_ >= 0; }

private:
    int fd_ = -1;
};

} // namespace harness
