#include "harness/core/atomic_file.hxx"

#include "harness/core/error.hxx"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <fstream>
#include <random>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

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

/// Twelve random characters: about 71 bits, which nobody can guess in advance.
std::string random_suffix()
{
    static constexpr char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    std::random_device random;
    std::string suffix;
    for (int i = 0; i < 12; ++i) suffix += alphabet[random() % (sizeof(alphabet) - 1)];
    return suffix;
}

} // namespace

StagedFile::StagedFile(const fs::path& target) : target_(target)
{
    for (int attempt = 0; attempt < 100; ++attempt) {
        name_ = target;
        name_ += ".tmp." + random_suffix();
        fd_ = ::open(name_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd_ >= 0) return;
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

/// Where `path` is a stream rather than a file (a FIFO or a character device such as /dev/null,
/// or /dev/stdout and /dev/stderr, which are links to this process's streams), `content` is
/// written into it, as a shell redirection would: renaming a file over it would replace the
/// device or the pipe (as root, /dev/null itself) while its reader gets nothing. Returns false
/// for anything else. A link to a stream elsewhere is not followed: links are replaced, not
/// written through (a planted link must not reach a device).
bool write_into_stream(const fs::path& path, std::string_view content)
{
    const std::string text = path.lexically_normal().string();
    if (text == "/dev/stdout" || text == "/dev/stderr") {
        std::fflush(nullptr);
        write_all(text == "/dev/stdout" ? STDOUT_FILENO : STDERR_FILENO, content, path);
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

} // namespace

void write_file_atomically(const fs::path& path, std::string_view content)
{
    if (write_into_stream(path, content)) return;
    std::error_code ec;
    if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
    if (ec)
        throw Error(ErrorKind::environment,
                    fmt::format("cannot create {}: {}", path.parent_path().string(), ec.message()));
    StagedFile staged(path);
    staged.write(content);
    staged.rename_over_target();
}

} // namespace harness
