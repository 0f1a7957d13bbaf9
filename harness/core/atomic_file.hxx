#pragma once
// Writing files so that a reader never sees half a file: a temporary file of a name nobody can
// guess, created exclusively and flushed to disk, then renamed over the target.

#include <filesystem>
#include <string_view>

namespace harness {

/// Replaces `path` with `content` atomically, creating parent folders; throws Error on failure
/// and leaves any previous file intact and no temporary file behind. A symbolic link at `path` is
/// replaced by the file, never written through. The file gets mode 0644 less the umask.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

} // namespace harness
