#pragma once
// Writing files so that a reader never sees half a file: a temporary file of a name nobody can
// guess, created exclusively and flushed to disk, then renamed over the target.

#include <filesystem>
#include <string>
#include <string_view>

namespace harness {

/// The new content of one file, written beside it under a name nobody can guess (created
/// exclusively, never through a link) and removed unless it was renamed into place.
class StagedFile {
public:
    explicit StagedFile(const std::filesystem::path& target);
    ~StagedFile();
    StagedFile(const StagedFile&) = delete;
    StagedFile& operator=(const StagedFile&) = delete;

    void write(std::string_view content);
    /// Gives the file mode 0644 less the umask and flushes it to disk, so that a crash after the
    /// rename leaves the new content, not an empty file.
    void finish();
    /// finish(), then renames the file over its target (a link there is replaced, not followed).
    void rename_over_target();

private:
    std::filesystem::path target_;
    std::filesystem::path name_;
    int fd_ = -1;
    bool renamed_ = false;
};

/// Twelve random letters and digits (about 71 bits), for names nobody can predict.
std::string unguessable_suffix();

/// Replaces `path` with `content` atomically, creating parent folders; throws Error on failure
/// and leaves any previous file intact and no temporary file behind. A symbolic link at `path` is
/// replaced by the file, never written through. The file gets mode 0644 less the umask. A stream
/// (a FIFO, a character device, /dev/stdout, /dev/fd/N) is written into instead; a folder is an
/// error. Temporary files of `path` that a killed writer left are removed first.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

} // namespace harness
