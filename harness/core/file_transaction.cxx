#include "harness/core/file_transaction.hxx"

#include "harness/core/error.hxx"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <random>
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

/// A name beside `path` that no one can predict: ".<name>.<tag>.<random>".
fs::path unique_sibling(const fs::path& path, const char* tag)
{
    static thread_local std::mt19937_64 random{std::random_device{}()};
    return path.parent_path() / fmt::format(".{}.{}.{:016x}", path.filename().string(), tag, random());
}

/// Creates a new file beside `path` with `content`, flushed to disk; returns its name.
fs::path stage(const fs::path& path, const std::string& content)
{
    for (int attempt = 0;; ++attempt) {
        const fs::path temp = unique_sibling(path, "new");
        const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0) {
            if (errno == EEXIST && attempt < 16) continue;
            fail("create a file beside", path, errno);
        }
        std::size_t written = 0;
        int error = 0;
        while (written < content.size()) {
            const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                error = n < 0 ? errno : EIO;
                break;
            }
            written += static_cast<std::size_t>(n);
        }
        if (error == 0 && ::fsync(fd) != 0) error = errno;
        if (::close(fd) != 0 && error == 0) error = errno;
        if (error != 0) {
            ::unlink(temp.c_str());
            fail("write", path, error);
        }
        return temp;
    }
}

/// A second name for the file at `path` (a hard link), to put it back if the change is undone.
fs::path keep(const fs::path& path)
{
    for (int attempt = 0;; ++attempt) {
        const fs::path backup = unique_sibling(path, "old");
        if (::link(path.c_str(), backup.c_str()) == 0) return backup;
        if (errno == EEXIST && attempt < 16) continue;
        fail("keep the current", path, errno);
    }
}

} // namespace

void replace_files_together(const std::vector<std::pair<fs::path, std::string>>& files)
{
    struct Step {
        fs::path target, staged, backup;
        bool replaced = false;
    };
    std::vector<Step> steps;
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
            if (!s.staged.empty() && !s.replaced) ::unlink(s.staged.c_str());
        }
    };
    try {
        for (const auto& [path, content] : files) {
            std::error_code ec;
            if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
            if (ec) fail("create the folder of", path, ec.value());
            Step step{path, {}, {}, false};
            struct stat st {};
            if (::lstat(path.c_str(), &st) == 0) {
                if (!S_ISREG(st.st_mode))
                    throw Error(ErrorKind::environment,
                                fmt::format("cannot replace {}: it is not a regular file", path.string()));
                step.backup = keep(path);
            }
            steps.push_back(step);
            steps.back().staged = stage(path, content);
        }
        for (auto& s : steps) {
            if (::rename(s.staged.c_str(), s.target.c_str()) != 0) fail("replace", s.target, errno);
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
