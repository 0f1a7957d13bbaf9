#include "harness/core/atomic_file.hxx"

#include "harness/core/error.hxx"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <fstream>
#include <random>
#include <string>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace harness {

namespace fs = std::filesystem;

namespace {

Error write_error(const std::string& what, const fs::path& path, int error_number)
{
    return Error(ErrorKind::environment,
                 fmt::format("cannot {} {}: {}", what, path.string(), std::strerror(error_number)));
}

/// The process's umask, read without changing it: umask(2) can only be read by setting it, which
/// would race with threads creating files meanwhile.
mode_t current_umask()
{
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
        if (line.starts_with("Umask:")) return static_cast<mode_t>(std::strtoul(line.c_str() + 6, nullptr, 8));
    return 022;
}

constexpr std::string_view staged_infix = ".tmp.";
constexpr std::size_t suffix_length = 12;

/// Twelve random characters: about 71 bits, which nobody can guess in advance.
std::string random_suffix()
{
    static constexpr char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    std::random_device random;
    std::string suffix;
    for (std::size_t i = 0; i < suffix_length; ++i) suffix += alphabet[random() % (sizeof(alphabet) - 1)];
    return suffix;
}

} // namespace

StagedFile::StagedFile(const fs::path& target) : target_(target)
{
    for (int attempt = 0; attempt < 100; ++attempt) {
        name_ = target;
        name_ += std::string(staged_infix) + random_suffix();
        fd_ = ::open(name_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd_ >= 0) {
            // Held until the file is closed, or the process dies: a later writer removes a staged
            // file nobody holds (a killed writer's), never one being written.
            ::flock(fd_, LOCK_EX | LOCK_NB);
            return;
        }
        if (errno != EEXIST) throw write_error("create a temporary file for", target, errno);
    }
    throw Error(ErrorKind::environment,
                fmt::format("cannot create a temporary file for {}: every name tried exists", target.string()));
}

StagedFile::~StagedFile()
{
    if (fd_ >= 0) ::close(fd_);
    if (!renamed_) ::unlink(name_.c_str());
}

void StagedFile::write(std::string_view content)
{
    while (!content.empty()) {
        const ssize_t written = ::write(fd_, content.data(), content.size());
        if (written < 0 && errno == EINTR) continue;
        if (written < 0) throw write_error("write", target_, errno);
        content.remove_prefix(static_cast<std::size_t>(written));
    }
}

void StagedFile::finish()
{
    if (fd_ < 0) return;
    if (::fchmod(fd_, 0644 & ~current_umask()) != 0) throw write_error("set the mode of", target_, errno);
    if (::fsync(fd_) != 0) throw write_error("flush", target_, errno);
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) throw write_error("write", target_, errno);
}

void StagedFile::rename_over_target()
{
    finish();
    if (::rename(name_.c_str(), target_.c_str()) != 0) throw write_error("replace", target_, errno);
    renamed_ = true;
}

std::string unguessable_suffix()
{
    return random_suffix();
}

namespace {

/// Writes `content` to the open descriptor `fd`, all of it.
void write_all(int fd, std::string_view content, const fs::path& path)
{
    while (!content.empty()) {
        const ssize_t written = ::write(fd, content.data(), content.size());
        if (written < 0 && errno == EINTR) continue;
        if (written < 0) throw write_error("write", path, errno);
        content.remove_prefix(static_cast<std::size_t>(written));
    }
}

/// The descriptor that `path` names when it names one of this process's own streams:
/// /dev/stdout, /dev/stderr, or /dev/fd/N and /proc/self/fd/N where N is an open pipe, socket or
/// character device (`-o >(gzip > report.html.gz)`). -1 for any other path. Those names are links
/// the system keeps, read here as the shell means them rather than replaced.
int own_stream(const fs::path& path)
{
    std::error_code ec;
    const std::string text = fs::absolute(path, ec).lexically_normal().string();
    if (ec) return -1;
    if (text == "/dev/stdout") return STDOUT_FILENO;
    if (text == "/dev/stderr") return STDERR_FILENO;
    std::string_view number;
    for (const std::string_view folder : {"/dev/fd/", "/proc/self/fd/"})
        if (text.starts_with(folder)) number = std::string_view(text).substr(folder.size());
    int fd = -1;
    if (number.empty() || number.size() > 6 ||
        std::from_chars(number.data(), number.data() + number.size(), fd).ptr != number.data() + number.size())
        return -1;
    // A descriptor of the tool's own (an open file, a database) is never written into by name.
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISCHR(st.st_mode))) return -1;
    return fd;
}

/// Where `path` is a stream rather than a file (a FIFO or a character device such as /dev/null,
/// or /dev/stdout and /dev/stderr, which are links to this process's streams), `content` is
/// written into it, as a shell redirection would: renaming a file over it would replace the
/// device or the pipe (as root, /dev/null itself) while its reader gets nothing. Returns false
/// for anything else. A link to a stream elsewhere is not followed: links are replaced, not
/// written through (a planted link must not reach a device).
bool write_into_stream(const fs::path& path, std::string_view content)
{
    if (const int fd = own_stream(path); fd >= 0) {
        std::fflush(nullptr);
        write_all(fd, content, path);
        return true;
    }
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return false;
    if (S_ISDIR(st.st_mode))
        throw Error(ErrorKind::environment, fmt::format("cannot write {}: it is a folder", path.string()));
    if (!S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode)) {
        if (S_ISBLK(st.st_mode) || S_ISSOCK(st.st_mode))
            throw Error(ErrorKind::environment, fmt::format("cannot write {}: it is a {}, not a file", path.string(),
                                                            S_ISBLK(st.st_mode) ? "block device" : "socket"));
        return false;
    }
    // Non-blocking, so that a FIFO nobody reads is an error rather than a hang; then blocking
    // again, so that a slow reader gets every byte.
    const int fd = ::open(path.c_str(), O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0 && errno == ENXIO)
        throw Error(ErrorKind::environment,
                    fmt::format("cannot write {}: it is a FIFO that nothing reads", path.string()));
    if (fd < 0) throw write_error("open", path, errno);
    if (const int flags = ::fcntl(fd, F_GETFL); flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    try {
        write_all(fd, content, path);
    } catch (...) {
        ::close(fd);
        throw;
    }
    if (::close(fd) != 0) throw write_error("write", path, errno);
    return true;
}

/// Whether `name` is a staged file of `target_name`: "<target_name>.tmp." and twelve letters or
/// digits, the names StagedFile makes and no other.
bool is_staged_name_of(std::string_view name, std::string_view target_name)
{
    if (name.size() != target_name.size() + staged_infix.size() + suffix_length || !name.starts_with(target_name))
        return false;
    name.remove_prefix(target_name.size());
    if (!name.starts_with(staged_infix)) return false;
    name.remove_prefix(staged_infix.size());
    for (const char c : name)
        if (!std::isalnum(static_cast<unsigned char>(c))) return false;
    return true;
}

/// Removes the staged files of `target` that a writer killed mid-write (SIGKILL, a crash, a power
/// cut) left beside it. Only a regular file of this user with the staged-file name of `target`
/// goes, and only one nobody holds locked and that has not changed for a minute: a writer holds
/// its lock from the moment it creates the file until it has written and flushed it (the rename
/// follows at once), and the minute covers the instants before the lock and after it. Best
/// effort: a file that cannot be removed stays.
void remove_abandoned_staged_files(const fs::path& target)
{
    const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
    const std::string target_name = target.filename().string();
    const int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return;
    DIR* listing = ::fdopendir(dir);
    if (!listing) {
        ::close(dir);
        return;
    }
    const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::vector<std::string> names;
    while (const dirent* entry = ::readdir(listing))
        if (is_staged_name_of(entry->d_name, target_name)) names.emplace_back(entry->d_name);
    for (const auto& name : names) {
        struct stat st {};
        if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
            st.st_uid != ::geteuid() || now - st.st_mtime < 60)
            continue;
        const int fd = ::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) continue;
        struct stat opened {};
        if (::flock(fd, LOCK_EX | LOCK_NB) == 0 && ::fstat(fd, &opened) == 0 && opened.st_ino == st.st_ino &&
            opened.st_dev == st.st_dev)
            ::unlinkat(dir, name.c_str(), 0);
        ::close(fd);
    }
    ::closedir(listing);
}

} // namespace

void write_file_atomically(const fs::path& path, std::string_view content)
{
    if (write_into_stream(path, content)) return;
    std::error_code ec;
    if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
    if (ec)
        throw Error(ErrorKind::environment,
                    fmt::format("cannot create {}: {}", path.parent_path().string(), ec.message()));
    remove_abandoned_staged_files(path);
    StagedFile staged(path);
    staged.write(content);
    staged.rename_over_target();
}

} // namespace harness
