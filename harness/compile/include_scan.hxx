#pragma once
// What a kernel source may include: files of the project (and the folders the suite declares),
// and the CUDA toolkit's headers. The scan follows every #include of the project's own files
// before the compiler sees them, so that an include reaching elsewhere (an absolute path, a "../"
// climb, a link out of the project, a macro naming the file) is refused with the including file
// and line, and the file it names is never read.

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace harness::compile {

/// Where a compilation may read from, and the include search it uses.
struct IncludeSearch {
    std::filesystem::path source;                     ///< the kernel file
    std::vector<std::filesystem::path> include_dirs;  ///< in NVRTC's search order, the source's folder first
    std::vector<std::filesystem::path> toolkit_dirs;  ///< the CUDA toolkit's header folders, searched last
    std::vector<std::filesystem::path> project_roots; ///< folders whose files may be read and are scanned
};

/// The largest source or header file the scan reads.
inline constexpr std::size_t max_source_file_bytes = 16 * 1024 * 1024;

/// One #include directive of a source file, as the compiler's preprocessor sees it.
struct IncludeDirective {
    int line = 0;        ///< 1-based, of the directive's first physical line
    std::string keyword; ///< include, include_next, import, embed
    std::string name;    ///< the quoted or bracketed name; empty for a computed include
    bool angled = false; ///< <name>
};

/// The #include directives of `text`: comments, string and raw-string literals and line splices
/// are handled as the preprocessor does, so a directive hidden from a line-by-line reading
/// (`#/**/include`, `#inc\<newline>lude`) is still found.
std::vector<IncludeDirective> include_directives(std::string_view text);

/// The project files a compilation reads (the source first), each once, canonical. Throws
/// CompileError naming the including file, its line and the reason when an include reaches outside
/// the project roots and the toolkit, is computed by a macro, or names a file that is not a
/// regular file or is too large; the named file is then not read.
std::vector<std::filesystem::path> scan_includes(const IncludeSearch& search);

/// Whether `path` (canonical) lies in one of `roots` (canonical).
bool inside_any(const std::filesystem::path& path, const std::vector<std::filesystem::path>& roots);

/// A compile log with every diagnostic located in a file outside `readable_roots` reduced to its
/// location: the message and the source lines quoted under it could carry that file's content.
std::string withhold_outside_diagnostics(std::string_view log,
                                         const std::vector<std::filesystem::path>& readable_roots);

} // namespace harness::compile
