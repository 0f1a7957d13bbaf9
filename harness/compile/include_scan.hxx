#pragma once
// What a kernel source may include: files of the project (and the folders the suite declares),
// and the CUDA toolkit's headers. The scan follows every #include of the project's own files
// (and of the toolkit headers they reach, which must stay in the toolkit)
// before the compiler sees them, so that an include reaching elsewhere (an absolute path, a "../"
// climb, a link out of the project, a macro naming the file) is refused with the including file
// and line, and the file it names is never read.

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace harness::compile {

/// What of a source's lexical rules depends on the language standard it is compiled with
/// (NVRTC's -std=, C++17 when none is given).
struct SourceLanguage {
    bool trigraphs = false;       ///< C++14 and older: ??= is #, ??/ a backslash (a line splice), before anything else
    bool raw_strings = true;      ///< C++11 and newer: R"x(...)x"
    bool digit_separators = true; ///< C++14 and newer: 1'000
};

/// The language rules of a compilation with these NVRTC options (the last -std= counts).
SourceLanguage source_language(const std::vector<std::string>& nvrtc_options);

/// Where a compilation may read from, and the include search it uses.
struct IncludeSearch {
    std::filesystem::path source;                     ///< the kernel file
    std::vector<std::filesystem::path> include_dirs;  ///< in NVRTC's search order, the source's folder first
    std::vector<std::filesystem::path> toolkit_dirs;  ///< the CUDA toolkit's header folders, searched last
    std::vector<std::filesystem::path> project_roots; ///< folders whose files may be read and are scanned
    SourceLanguage language;                          ///< the standard the files are compiled with
};

/// The largest source or header file the scan reads.
inline constexpr std::size_t max_source_file_bytes = 16 * 1024 * 1024;

/// One place in a source file where the compiler's preprocessor looks for a file: an #include
/// directive or a __has_include.
struct IncludeDirective {
    int line = 0;        ///< 1-based, of the directive's first physical line
    std::string keyword; ///< include, include_next, import, embed, __has_include, __has_include_next
    std::string name;    ///< the quoted or bracketed name; empty for a computed one (a macro)
    bool angled = false; ///< <name>
    /// Why the text from here on cannot be read as the compiler reads it (a malformed raw
    /// string); the last entry then, with no keyword.
    std::string problem;
};

/// Where `text` makes the compiler look for files, read through translation phases 1 to 3 as
/// NVRTC does for `language`: trigraphs, line splices, comments, every string and character
/// literal form (prefixes, raw strings, user-defined suffixes), pp-numbers with digit separators
/// and header names. A directive hidden from a line-by-line reading (`#/**/include`,
/// `#inc\<newline>lude`, `??=include`) is found, and nothing inside a literal or comment is.
std::vector<IncludeDirective> include_directives(std::string_view text, const SourceLanguage& language = {});

/// The project files a compilation reads (the source first), each once, canonical. The toolkit's
/// headers are followed too, in the compiler's search order, so that a project file one of them
/// would read is found. Throws CompileError naming the including file, its line and the reason
/// when an include or a __has_include of a project file reaches outside the project roots and the
/// toolkit (whether or not the file exists), is computed by a macro, or names a file that is not a
/// regular file or is too large (the named file is then not read), or when a project file would
/// stand in for a toolkit header (found by a search of the include folders where the toolkit has
/// that header, or read by a toolkit header).
std::vector<std::filesystem::path> scan_includes(const IncludeSearch& search);

/// Whether `path` (canonical) lies in one of `roots` (canonical).
bool inside_any(const std::filesystem::path& path, const std::vector<std::filesystem::path>& roots);

/// A compile log with every diagnostic located in a file outside `readable_roots` reduced to its
/// location: the message and the source lines quoted under it could carry that file's content.
std::string withhold_outside_diagnostics(std::string_view log,
                                         const std::vector<std::filesystem::path>& readable_roots);

} // namespace harness::compile
