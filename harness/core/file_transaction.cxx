#include "harness/core/file_transaction.hxx"

#include "harness/core/atomic_file.hxx"
#include "harness/core/error.hxx"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <memory>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace harness {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const std::string& what, const fs::path& path, int error)
{
    throw Error(ErrorKind::environment, fmt::format("cannot {} {}: {}", what, path.string(), std::strerror(error)));
}

/// A second name for the file at `path` (a hard link), to put it back if the change is undone.
fs::path keep(const fs::path& path)
{
    for (int attempt = 0;; ++attempt) {
        fs::path backup = path;
        backup += ".old." + unguessable_suffix();
        // link(2) does not follow a symbolic link: a link at `path` is kept as the link it is.
        if (::link(path.c_str(), backup.c_str()) == 0) return backup;
        if (errno == EEXIST && attempt < 16) continue;
        fail("keep the current", path, errno);
    }
}

} // namespace

void replace_files_together(const std::vector<std::pair<fs::path, std::string>>& files)
{
    struct Step {
        fs::path target, backup;
        std::unique_ptr<StagedFile> staged;
        bool replaced = false;
    };
    std::vector<Step> steps;
    // On failure: the files already renamed get their old content (or go, if they were new);
    // staged files not renamed remove themselves.
    const auto undo = [&] {
        for (auto& s : steps) {
            if (s.replaced) {
                if (!s.backup.empty())
                    ::rename(s.backup.c_str(), s.target.c_str());
                else
                    ::unlink(s.target.c_str());
            } else if (!s.backup.empty()) {
                ::unlink(s.backup.c_str());
            }
        }
        steps.clear();
    };
    try {
        for (const auto& [path, content] : files) {
            std::error_code ec;
            if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
            if (ec) fail("create the folder of", path, ec.value());
            Step& step = steps.emplace_back();
            step.target = path;
            struct stat st {};
            if (::lstat(path.c_str(), &st) == 0) {
                if (S_ISDIR(st.st_mode))
                    throw Error(ErrorKind::environment,
                                fmt::format("cannot replace {}: it is a folder", path.string()));
                step.backup = keep(path);
            }
            step.staged = std::make_unique<StagedFile>(path);
            step.staged->write(content);
            step.staged->finish();
        }
        for (auto& s : steps) {
            s.staged->rename_over_target();
            s.replaced = true;
        }
    } catch (...) {
        undo();
        throw;
    }
    for (const auto& s : steps)
        if (!s.backup.empty()) ::unlink(s.backup.c_str());
}

FolderLock::FolderLock(const fs::path& folder)
{
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec) fail("create", folder, ec.value());
    fd_ = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ < 0) fail("open", folder, errno);
    while (::flock(fd_, LOCK_EX) != 0) {
        if (errno == EINTR) continue;
        const int error = errno;
        ::close(fd_);
        fail("lock", folder, error);
    }
}

FolderLock::~FolderLock()
{
    if (fd_ >= 0) ::close(fd_);
}

} // namespace harness
