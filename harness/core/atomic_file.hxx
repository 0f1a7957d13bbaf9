#pragma once
// Writing files so that a reader never sees half a file: temporary file, then rename.

#include <filesystem>
#include <string_view>

namespace harness {

/// Replaces `path` with `content` atomically, creating parent folders; throws Error on failure
/// and leaves any previous file intact.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

} // namespace harness
