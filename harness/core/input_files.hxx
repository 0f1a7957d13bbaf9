#pragma once
// Reading input files and turning names read from them into paths, so that no suite, results or
// baseline file can make the tool read or write outside the folders it belongs to.

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace harness {

/// The longest name (suite, variant, baseline key) that may become part of a path.
inline constexpr std::size_t max_name_length = 100;

/// Why `name` cannot name a file or folder, or "" when it can: 1 to 100 letters, digits, '_',
/// '.' and '-', starting with a letter, digit or '_' (so never ".", ".." or a hidden file).
std::string name_problem(std::string_view name);

/// `dir / (name + extension)` once `name` passes name_problem; throws Error (bad_input) saying
/// which `what` ("suite name", "baseline key") was refused.
std::filesystem::path child_path(const std::filesystem::path& dir, std::string_view name, std::string_view what,
                                 std::string_view extension = "");

/// Whether `path` lies inside `root` (or is it) once both are made absolute and every symbolic
/// link along them that exists is resolved.
bool is_inside(const std::filesystem::path& path, const std::filesystem::path& root);

/// Throws Error (environment) when `folder`, or a folder between `top` and it, is a symbolic link,
/// so that a link committed to a project (reports/<suite> -> /elsewhere) cannot send writes outside
/// it. `top` and the folders above it are not looked at; a folder that does not exist yet is fine.
void refuse_linked_folders(const std::filesystem::path& top, const std::filesystem::path& folder);

/// The project a suite file belongs to: the nearest folder, from the suite's own upwards (the
/// filesystem root excluded), that holds `kernels/`, `baselines/` or `.git`; else the suite's folder.
std::filesystem::path project_root(const std::filesystem::path& suite_file);

/// The offset of the first byte of `text` that is not part of valid UTF-8, or npos.
std::size_t invalid_utf8_offset(std::string_view text);

/// 1-based line and column of byte `offset` in `text`.
std::pair<int, int> line_and_column(std::string_view text, std::size_t offset);

/// The whole content of a regular file of at most `max_bytes`; throws InputError naming the file
/// and `what` it is ("suite file") when it cannot be read, is not a regular file or is too large.
std::string read_input_file(const std::filesystem::path& path, std::size_t max_bytes, std::string_view what);

} // namespace harness
