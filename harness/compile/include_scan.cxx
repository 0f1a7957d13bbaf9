#include "harness/compile/include_scan.hxx"

#include "harness/compile/nvrtc_compiler.hxx"

#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace harness::compile {

namespace fs = std::filesystem;

namespace {

bool is_identifier_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/// The text as the preprocessor's translation phases 2 and 3 leave it for directives: line
/// splices removed, each comment replaced by one space, literals kept; and for every line of
/// that text, the physical line it starts on.
struct LogicalText {
    std::string text;
    std::vector<int> line_starts; ///< physical line (1-based) of each logical line
};

LogicalText logical_text(std::string_view source)
{
    // Phase 2: remove backslash-newline, remembering where each physical line went.
    std::string spliced;
    std::vector<int> physical_line_of_newline; // physical line that follows each kept '\n'
    spliced.reserve(source.size());
    int physical = 1;
    for (std::size_t i = 0; i < source.size(); ++i) {
        const char c = source[i];
        if (c == '\\') {
            std::size_t j = i + 1;
            if (j < source.size() && source[j] == '\r') ++j;
            if (j < source.size() && source[j] == '\n') {
                ++physical;
                i = j;
                continue;
            }
        }
        spliced.push_back(c);
        if (c == '\n') physical_line_of_newline.push_back(++physical);
    }

    LogicalText out;
    out.text.reserve(spliced.size());
    out.line_starts.push_back(1);
    std::size_t newline_index = 0;
    auto keep_newline = [&] {
        out.text.push_back('\n');
        out.line_starts.push_back(physical_line_of_newline[newline_index++]);
    };
    const std::size_t n = spliced.size();
    for (std::size_t i = 0; i < n;) {
        const char c = spliced[i];
        if (c == '\n') {
            keep_newline();
            ++i;
        } else if (c == '/' && i + 1 < n && spliced[i + 1] == '/') {
            while (i < n && spliced[i] != '\n') ++i;
            out.text.push_back(' ');
        } else if (c == '/' && i + 1 < n && spliced[i + 1] == '*') {
            // One space for the whole comment: a directive after "*/" on a later line begins where
            // the comment began. The newlines it swallows still count physical lines.
            std::size_t end = spliced.find("*/", i + 2);
            end = end == std::string::npos ? n : end + 2;
            for (std::size_t k = i; k < end; ++k)
                if (spliced[k] == '\n') ++newline_index;
            out.text.push_back(' ');
            i = end;
        } else if (c == '"' && i > 0 && spliced[i - 1] == 'R' &&
                   (i < 2 || !is_identifier_char(spliced[i - 2]) ||
                    ((spliced[i - 2] == 'u' || spliced[i - 2] == 'U' || spliced[i - 2] == 'L' ||
                      spliced[i - 2] == '8') &&
                     (i < 3 || !is_identifier_char(spliced[i - 3]) || spliced[i - 3] == 'u')))) {
            // A raw string R"delim(...)delim": no escapes, may span lines.
            const std::size_t open = spliced.find('(', i + 1);
            if (open == std::string::npos || open - i - 1 > 16) {
                out.text.push_back(c);
                ++i;
                continue;
            }
            const std::string close = ")" + spliced.substr(i + 1, open - i - 1) + "\"";
            std::size_t end = spliced.find(close, open + 1);
            end = end == std::string::npos ? n : end + close.size();
            for (std::size_t k = i; k < end; ++k)
                if (spliced[k] == '\n') ++newline_index;
            out.text += "\"\"";
            i = end;
        } else if (c == '"' || (c == '\'' && !(i > 0 && is_identifier_char(spliced[i - 1]) && i + 1 < n &&
                                               is_identifier_char(spliced[i + 1])))) {
            // A string or character literal (a quote between two digits is a digit separator);
            // it cannot span lines.
            std::size_t k = i + 1;
            while (k < n && spliced[k] != c && spliced[k] != '\n') k += spliced[k] == '\\' && k + 1 < n ? 2 : 1;
            const std::size_t end = k < n && spliced[k] == c ? k + 1 : k;
            out.text.append(spliced, i, end - i);
            i = end;
        } else {
            out.text.push_back(c);
            ++i;
        }
    }
    return out;
}

std::string read_source(const fs::path& file, const fs::path& including, int line)
{
    const std::string where = including.empty() ? file.string() : fmt::format("{}:{}", including.string(), line);
    std::error_code ec;
    const auto status = fs::status(file, ec);
    if (ec || !fs::is_regular_file(status))
        throw CompileError(fmt::format("{}: #include names {}, which is not a regular file", where, file.string()), "");
    if (fs::file_size(file, ec) > max_source_file_bytes)
        throw CompileError(
            fmt::format("{}: {} is larger than {} MiB", where, file.string(), max_source_file_bytes >> 20), "");
    std::ifstream in(file, std::ios::binary);
    if (!in) throw CompileError(fmt::format("{}: cannot read {}", where, file.string()), "");
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

fs::path canonical_or_lexical(const fs::path& path)
{
    std::error_code ec;
    fs::path canonical = fs::weakly_canonical(path, ec);
    return ec ? path.lexically_normal() : canonical;
}

} // namespace

std::vector<IncludeDirective> include_directives(std::string_view text)
{
    const LogicalText logical = logical_text(text);
    std::vector<IncludeDirective> directives;
    std::size_t line_index = 0;
    std::istringstream lines(logical.text);
    for (std::string line; std::getline(lines, line); ++line_index) {
        std::size_t i = line.find_first_not_of(" \t\f\v\r");
        if (i == std::string::npos) continue;
        if (line[i] == '#')
            ++i;
        else if (line.compare(i, 2, "%:") == 0)
            i += 2;
        else
            continue;
        i = line.find_first_not_of(" \t\f\v\r", i);
        if (i == std::string::npos) continue;
        std::size_t end = i;
        while (end < line.size() && is_identifier_char(line[end])) ++end;
        const std::string keyword = line.substr(i, end - i);
        if (keyword != "include" && keyword != "include_next" && keyword != "import" && keyword != "embed") continue;
        IncludeDirective d;
        d.line = logical.line_starts[std::min(line_index, logical.line_starts.size() - 1)];
        d.keyword = keyword;
        i = line.find_first_not_of(" \t\f\v\r", end);
        if (i != std::string::npos && (line[i] == '"' || line[i] == '<')) {
            const char close = line[i] == '"' ? '"' : '>';
            const std::size_t stop = line.find(close, i + 1);
            if (stop != std::string::npos) {
                d.angled = close == '>';
                d.name = line.substr(i + 1, stop - i - 1);
            }
        }
        directives.push_back(std::move(d));
    }
    return directives;
}

bool inside_any(const fs::path& path, const std::vector<fs::path>& roots)
{
    return std::any_of(roots.begin(), roots.end(), [&](const fs::path& root) {
        auto [r, p] = std::mismatch(root.begin(), root.end(), path.begin(), path.end());
        return r == root.end() || (std::next(r) == root.end() && r->empty());
    });
}

std::vector<fs::path> scan_includes(const IncludeSearch& search)
{
    std::vector<fs::path> project_roots, toolkit_roots;
    for (const auto& root : search.project_roots) project_roots.push_back(canonical_or_lexical(root));
    for (const auto& root : search.toolkit_dirs) toolkit_roots.push_back(canonical_or_lexical(root));
    std::vector<fs::path> readable = project_roots;
    readable.insert(readable.end(), toolkit_roots.begin(), toolkit_roots.end());
    const std::string allowed = "kernels may include files of their project, of the folders the suite's `include:` "
                                "names and the CUDA toolkit's headers";

    std::vector<fs::path> order;
    std::set<fs::path> seen;
    struct Pending {
        fs::path file, including;
        int line = 0;
    };
    std::vector<Pending> pending = {{canonical_or_lexical(search.source), {}, 0}};
    while (!pending.empty()) {
        const Pending next = pending.back();
        pending.pop_back();
        if (!seen.insert(next.file).second) continue;
        order.push_back(next.file);
        for (const IncludeDirective& d : include_directives(read_source(next.file, next.including, next.line))) {
            const std::string where = fmt::format("{}:{}", next.file.string(), d.line);
            if (d.keyword == "import" || d.keyword == "embed")
                throw CompileError(fmt::format("{}: #{} is not supported in kernels; use #include", where, d.keyword),
                                   "");
            if (d.name.empty())
                throw CompileError(fmt::format("{}: a computed #{} (a macro naming the file) cannot be checked before "
                                               "compiling; name the header in quotes or angle brackets",
                                               where, d.keyword),
                                   "");
            const fs::path named(d.name);
            std::vector<fs::path> candidates;
            if (named.is_absolute()) {
                candidates.push_back(named);
            } else {
                if (!d.angled) candidates.push_back(next.file.parent_path() / named);
                for (const auto& dir : search.include_dirs) candidates.push_back(dir / named);
                for (const auto& dir : search.toolkit_dirs) candidates.push_back(dir / named);
            }
            for (const auto& candidate : candidates) {
                std::error_code ec;
                const auto status = fs::status(candidate, ec);
                if (ec || !fs::exists(status)) continue;
                const fs::path resolved = canonical_or_lexical(candidate);
                if (!inside_any(resolved, readable))
                    throw CompileError(fmt::format("{}: #{} \"{}\" reaches outside the project ({}); {}", where,
                                                   d.keyword, d.name,
                                                   named.is_absolute() ? "an absolute path"
                                                   : fs::is_symlink(fs::symlink_status(candidate, ec)) ||
                                                           resolved != candidate.lexically_normal()
                                                       ? "through a symbolic link or \"..\""
                                                       : "a \"..\" path",
                                                   allowed),
                                       "");
                if (fs::is_directory(status)) continue; // the preprocessor looks on
                if (!fs::is_regular_file(status))
                    throw CompileError(
                        fmt::format("{}: #{} \"{}\" names a file that is not a regular file", where, d.keyword, d.name),
                        "");
                // The toolkit's headers are trusted and many; project files are followed.
                if (inside_any(resolved, project_roots)) pending.push_back({resolved, next.file, d.line});
                break;
            }
            // A name found nowhere is one of NVRTC's built-in headers, or an error the compiler reports.
        }
    }
    return order;
}

std::string withhold_outside_diagnostics(std::string_view log, const std::vector<fs::path>& readable_roots)
{
    static const std::regex diagnostic(R"(^(.+)\((\d+)\): ([a-z ]*(error|warning|remark|note))(\s*#?\w*)?: )");
    std::vector<fs::path> roots;
    for (const auto& root : readable_roots) roots.push_back(canonical_or_lexical(root));
    std::string out;
    bool withholding = false;
    std::size_t start = 0;
    while (start < log.size()) {
        std::size_t end = log.find('\n', start);
        const std::string line(log.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
        start = end == std::string_view::npos ? log.size() : end + 1;
        std::smatch m;
        if (std::regex_search(line, m, diagnostic)) {
            const fs::path file(m[1].str());
            withholding = file.is_absolute() && !inside_any(canonical_or_lexical(file), roots);
            if (withholding) {
                out += fmt::format("{}({}): {}: [withheld: the file lies outside the project]\n", m[1].str(),
                                   m[2].str(), m[3].str());
                continue;
            }
        } else if (withholding && (line.empty() || line.front() == ' ' || line.front() == '\t')) {
            continue; // a source line quoted under a withheld diagnostic, or its caret
        } else {
            withholding = false;
        }
        out += line;
        if (end != std::string_view::npos) out += '\n';
    }
    return out;
}

} // namespace harness::compile
