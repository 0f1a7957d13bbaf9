#include "harness/compile/include_scan.hxx"

#include "harness/compile/compile_error.hxx"
#include "harness/compile/include_policy.hxx"
#include "harness/core/text.hxx"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

namespace harness::compile {

namespace fs = std::filesystem;

namespace {

/// A space within a line. NVRTC reads a NUL byte in a header as one (the program's own text ends
/// at its first NUL).
bool is_horizontal_space(char c)
{
    return c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\r' || c == '\0';
}

/// Translation phases 1 and 2: trigraphs replaced where the standard has them, line splices
/// removed. NVRTC splices only a backslash right before the newline (no spaces between).
struct SplicedText {
    std::string text;
    std::vector<std::size_t> line_begins; ///< offset in `text` where each physical line begins
    /// (offset in `text`, offset in the source) after each replaced trigraph and removed splice:
    /// a raw string is read in the source as written, its trigraphs and splices undone.
    std::vector<std::pair<std::size_t, std::size_t>> anchors = {{0, 0}};

    int physical_line(std::size_t offset) const
    {
        return static_cast<int>(std::upper_bound(line_begins.begin(), line_begins.end(), offset) - line_begins.begin());
    }

    std::size_t source_offset(std::size_t offset) const
    {
        const auto anchor = std::prev(std::upper_bound(anchors.begin(), anchors.end(), std::pair{offset, SIZE_MAX}));
        return anchor->second + (offset - anchor->first);
    }

    std::size_t text_offset(std::size_t source) const
    {
        const auto anchor = std::prev(std::upper_bound(anchors.begin(), anchors.end(), source,
                                                       [](std::size_t s, const auto& a) { return s < a.second; }));
        const std::size_t offset = anchor->first + (source - anchor->second);
        return std::next(anchor) == anchors.end() ? offset : std::min(offset, std::next(anchor)->first);
    }
};

char trigraph_replacement(char c)
{
    switch (c) {
    case '=': return '#';
    case '/': return '\\';
    case '\'': return '^';
    case '(': return '[';
    case ')': return ']';
    case '!': return '|';
    case '<': return '{';
    case '>': return '}';
    case '-': return '~';
    default: return 0;
    }
}

SplicedText spliced_text(std::string_view source, bool trigraphs)
{
    SplicedText out;
    out.text.reserve(source.size());
    out.line_begins.push_back(0);
    for (std::size_t i = 0; i < source.size();) {
        const char trigraph = trigraphs && i + 2 < source.size() && source[i] == '?' && source[i + 1] == '?'
                                  ? trigraph_replacement(source[i + 2])
                                  : 0;
        const char c = trigraph ? trigraph : source[i];
        i += trigraph ? 3 : 1;
        if (c == '\\') {
            std::size_t newline = i;
            if (newline < source.size() && source[newline] == '\r') ++newline;
            if (newline < source.size() && source[newline] == '\n') {
                i = newline + 1;
                out.line_begins.push_back(out.text.size());
                out.anchors.emplace_back(out.text.size(), i);
                continue;
            }
        }
        out.text.push_back(c);
        if (c == '\n') out.line_begins.push_back(out.text.size());
        if (trigraph) out.anchors.emplace_back(out.text.size(), i);
    }
    return out;
}

/// Translation phase 3 as far as includes need it: a tokenizer that knows where comments, string
/// and character literals (every prefix, raw strings, user-defined suffixes), pp-numbers (with
/// digit separators) and identifiers begin and end, so that it finds every directive and every
/// __has_include the compiler will act on, and nothing inside a literal or comment.
class DirectiveReader {
public:
    DirectiveReader(std::string_view source, const SourceLanguage& language)
        : source_(source), spliced_(spliced_text(source, language.trigraphs)), text_(spliced_.text), language_(language)
    {
    }

    std::vector<IncludeDirective> read()
    {
        bool line_start = true;         // nothing but spaces and comments since the last newline
        bool import_may_follow = false; // `export` began this line
        while (at_ < text_.size() && !stopped_) {
            const char c = text_[at_];
            if (c == '\n') {
                line_start = true;
                import_may_follow = false;
                line_begin_ = ++at_;
                continue;
            }
            if (is_horizontal_space(c)) {
                ++at_;
                continue;
            }
            if (const std::size_t comment = at_; skip_comment()) {
                // NVRTC counts a comment holding a newline as one: a "#" after it begins a directive.
                const std::size_t newline = text_.rfind('\n', at_ - 1);
                if (!line_start && newline != std::string::npos && newline >= comment) {
                    line_start = true;
                    line_begin_ = newline + 1;
                }
                continue;
            }
            const bool first_on_line = line_start;
            line_start = false;
            if (first_on_line && (c == '#' || text_.compare(at_, 2, "%:") == 0)) {
                at_ += c == '#' ? 1 : 2;
                read_directive(line_begin_);
                continue;
            }
            if (starts_identifier(at_)) {
                const std::size_t begin = at_;
                const std::string identifier = read_identifier();
                read_after_identifier(begin, identifier, first_on_line || import_may_follow);
                import_may_follow = first_on_line && identifier == "export";
                note_token(identifier);
                continue;
            }
            import_may_follow = false;
            if (is_digit(c) || (c == '.' && at_ + 1 < text_.size() && is_digit(text_[at_ + 1]))) {
                const std::size_t begin = at_;
                read_pp_number();
                refuse_suffix_before_string(begin);
                note_token("0");
            } else if (c == '"' || c == '\'') {
                const std::size_t begin = at_;
                read_quoted(c);
                read_suffix(begin);
                note_token("\"");
            } else {
                ++at_;
                note_token(std::string(1, c));
            }
        }
        return std::move(directives_);
    }

private:
    static bool is_digit(char c) { return c >= '0' && c <= '9'; }

    void note_token(std::string token)
    {
        previous_previous_ = std::move(previous_);
        previous_ = std::move(token);
    }

    int line_of(std::size_t offset) const { return spliced_.physical_line(offset); }

    /// A comment at `at_` is skipped (one space, as phase 3 makes it); false when none begins there.
    bool skip_comment()
    {
        if (text_.compare(at_, 2, "//") == 0) {
            const std::size_t end = text_.find('\n', at_);
            at_ = end == std::string::npos ? text_.size() : end;
            return true;
        }
        if (text_.compare(at_, 2, "/*") == 0) {
            const std::size_t end = text_.find("*/", at_ + 2);
            at_ = end == std::string::npos ? text_.size() : end + 2;
            return true;
        }
        return false;
    }

    /// Skips spaces and comments; newlines too where `across_lines`.
    void skip_space(bool across_lines)
    {
        while (at_ < text_.size()) {
            if (is_horizontal_space(text_[at_]) || (across_lines && text_[at_] == '\n'))
                ++at_;
            else if (!skip_comment())
                return;
        }
    }

    /// The length of a universal character name (\uXXXX, \UXXXXXXXX) at `offset`, 0 if none. NVRTC
    /// reads one as a letter of an identifier, and one cut short (\u8) as well: \u8R"( begins no
    /// raw string.
    std::size_t universal_character_length(std::size_t offset) const
    {
        if (text_.compare(offset, 2, "\\u") != 0 && text_.compare(offset, 2, "\\U") != 0) return 0;
        const std::size_t digits = text_[offset + 1] == 'u' ? 4 : 8;
        std::size_t length = 2;
        while (length < 2 + digits && offset + length < text_.size() &&
               std::isxdigit(static_cast<unsigned char>(text_[offset + length])))
            ++length;
        return length;
    }

    bool starts_identifier(std::size_t offset) const
    {
        const char c = text_[offset];
        return (is_identifier_char(c) && !is_digit(c)) || universal_character_length(offset) > 0;
    }

    /// Letters, digits, underscores and universal character names from `at_` on.
    std::string read_identifier()
    {
        const std::size_t begin = at_;
        while (at_ < text_.size()) {
            if (is_identifier_char(text_[at_]))
                ++at_;
            else if (const std::size_t ucn = universal_character_length(at_))
                at_ += ucn;
            else
                break;
        }
        return text_.substr(begin, at_ - begin);
    }

    /// A pp-number: a digit (or "." and a digit) followed by letters, digits, ".", an exponent's
    /// sign and, from C++14 on, digit separators (1'000, 0x1'ff). A quote anywhere else begins a
    /// character literal: return'a' is a name and a literal.
    void read_pp_number()
    {
        ++at_;
        while (at_ < text_.size()) {
            const char c = text_[at_];
            if ((c == '+' || c == '-') && std::strchr("eEpP", text_[at_ - 1]))
                ++at_;
            else if (c == '.' || is_identifier_char(c))
                ++at_;
            else if (const std::size_t ucn = universal_character_length(at_))
                at_ += ucn;
            else if (c == '\'' && language_.digit_separators)
                ++at_; // NVRTC takes every quote inside a number for a separator, 1'/* as much as 1'000
            else
                break;
        }
    }

    /// A string or character literal from its opening quote: escapes, and no newline inside.
    void read_quoted(char quote)
    {
        ++at_;
        while (at_ < text_.size() && text_[at_] != quote && text_[at_] != '\n')
            at_ += text_[at_] == '\\' && at_ + 1 < text_.size() && text_[at_ + 1] != '\n' ? 2 : 1;
        if (at_ < text_.size() && text_[at_] == quote) ++at_;
    }

    /// A user-defined literal's suffix ("text"_id, 'c'R): part of the literal, so an R there
    /// begins no raw string.
    void read_suffix(std::size_t literal_begin)
    {
        if (at_ < text_.size() && starts_identifier(at_)) read_identifier();
        refuse_suffix_before_string(literal_begin);
    }

    /// A literal or number whose suffix ends in R right before a quote ('a'u8R"(...)"): NVRTC
    /// takes it for a suffix or for a raw string's prefix depending on the literal. No kernel
    /// needs one.
    void refuse_suffix_before_string(std::size_t literal_begin)
    {
        if (at_ < text_.size() && text_[at_] == '"' && text_[at_ - 1] == 'R')
            stop(literal_begin, "a literal whose suffix ends in R right before a string (1R\"...\" or 'a'R\"...\") "
                                "cannot be checked for includes");
    }

    /// A raw string from the quote after its prefix: R"delimiter( ... )delimiter", lines and all,
    /// read in the source as written (the standard undoes trigraphs and splices inside one).
    void read_raw_string(std::size_t prefix_begin)
    {
        const std::size_t open = spliced_.source_offset(at_);
        std::size_t paren = open + 1;
        while (paren < source_.size() && paren - open - 1 <= 16 && source_[paren] != '(' &&
               !std::strchr(" )\\\t\v\f\n\r", source_[paren]))
            ++paren;
        if (paren >= source_.size() || source_[paren] != '(' || paren - open - 1 > 16) {
            // NVRTC's recovery from a malformed delimiter does not follow the standard's grammar:
            // it reads past lines some of the time. No valid kernel has one.
            stop(prefix_begin, "a raw string whose delimiter is malformed (at most 16 characters, no spaces, "
                               "parentheses or backslashes) cannot be checked for includes");
            return;
        }
        std::string close = ")";
        close.append(source_.substr(open + 1, paren - open - 1)).push_back('"');
        const std::size_t end = source_.find(close, paren + 1);
        const std::string_view body = source_.substr(paren, end == std::string_view::npos ? end : end - paren);
        if (language_.trigraphs &&
            (body.find("?\?/\n") != std::string_view::npos || body.find("?\?/\r\n") != std::string_view::npos)) {
            // NVRTC ends the raw string early at ??/ before CR LF and a blank line; at ??/ before LF it
            // does not. Either way it undoes the splice inconsistently.
            stop(prefix_begin, "a raw string holding ?\?/ at the end of a line cannot be checked for includes "
                               "under C++14 and older, where ?\?/ is a backslash");
            return;
        }
        at_ = end == std::string_view::npos ? text_.size() : spliced_.text_offset(end + close.size());
        read_suffix(prefix_begin);
    }

    void read_after_identifier(std::size_t begin, const std::string& identifier, bool may_be_import)
    {
        static const std::set<std::string> raw_prefixes = {"R", "u8R", "uR", "UR", "LR"};
        if (at_ < text_.size() && text_[at_] == '"' && language_.raw_strings && raw_prefixes.count(identifier)) {
            read_raw_string(begin);
        } else if (identifier == "__has_include" || identifier == "__has_include_next") {
            read_has_include(begin, identifier);
        } else if (identifier == "import" && may_be_import) {
            // A C++20 header-unit import (`import "file.h";`) opens the file as #include does.
            const std::size_t after = at_;
            skip_space(false);
            if (at_ < text_.size() && (text_[at_] == '"' || text_[at_] == '<')) add(at(begin, "import"));
            at_ = after;
        }
    }

    /// `__has_include ( "name" )` or `( <name> )`: the name is a file the compiler looks for.
    /// Any other operand (a macro) is recorded as computed; `defined(__has_include)` needs none.
    void read_has_include(std::size_t begin, const std::string& keyword)
    {
        const std::size_t after = at_;
        skip_space(true);
        IncludeDirective d = at(begin, keyword);
        if (at_ >= text_.size() || text_[at_] != '(') {
            at_ = after;
            if (previous_ != "defined" && !(previous_ == "(" && previous_previous_ == "defined") &&
                previous_ != "ifdef" && previous_ != "ifndef")
                add(d); // an alias macro; the scan cannot tell what it will be applied to
            return;
        }
        ++at_;
        skip_space(true);
        if (at_ < text_.size() && (text_[at_] == '"' || text_[at_] == '<')) {
            const char close = text_[at_] == '"' ? '"' : '>';
            const std::size_t stop = text_.find_first_of(std::string{close, '\n'}, at_ + 1);
            if (stop != std::string::npos && text_[stop] == close) {
                std::string name = text_.substr(at_ + 1, stop - at_ - 1);
                // Whether NVRTC reads "\" as an escape or "/*" as a comment here is its own
                // choice; names with them are not read as a name at all.
                if (name.find_first_of("\\") == std::string::npos && name.find("/*") == std::string::npos &&
                    name.find("//") == std::string::npos) {
                    d.name = std::move(name);
                    d.angled = close == '>';
                }
            }
        }
        at_ = after;
        add(d);
    }

    /// The directive whose line begins at `line_begin` (a comment before its "#" may span lines).
    void read_directive(std::size_t line_begin)
    {
        skip_space(false);
        const std::size_t keyword_begin = at_;
        while (at_ < text_.size() && is_identifier_char(text_[at_])) ++at_;
        const std::string keyword = text_.substr(keyword_begin, at_ - keyword_begin);
        note_token(keyword);
        if (keyword != "include" && keyword != "include_next" && keyword != "import" && keyword != "embed") return;
        IncludeDirective d = at(line_begin, keyword);
        skip_space(false);
        // A header name is read before comments: <a/*b.h> names the file "a/*b.h".
        if (at_ < text_.size() && (text_[at_] == '"' || text_[at_] == '<')) {
            const char close = text_[at_] == '"' ? '"' : '>';
            const std::size_t stop = text_.find_first_of(std::string{close, '\n'}, at_ + 1);
            if (stop != std::string::npos && text_[stop] == close) {
                d.name = text_.substr(at_ + 1, stop - at_ - 1);
                d.angled = close == '>';
                at_ = stop + 1;
            }
        }
        add(d);
    }

    IncludeDirective at(std::size_t offset, const std::string& keyword) const
    {
        IncludeDirective d;
        d.line = line_of(offset);
        d.keyword = keyword;
        return d;
    }

    void add(IncludeDirective d) { directives_.push_back(std::move(d)); }

    void stop(std::size_t offset, std::string problem)
    {
        IncludeDirective d = at(offset, "");
        d.problem = std::move(problem);
        directives_.push_back(std::move(d));
        stopped_ = true;
    }

    std::string_view source_; ///< as written
    SplicedText spliced_;
    const std::string& text_;
    SourceLanguage language_;
    std::size_t at_ = 0;
    std::size_t line_begin_ = 0; ///< where the current line began
    bool stopped_ = false;
    std::string previous_, previous_previous_; ///< the last two tokens (identifiers, or one character)
    std::vector<IncludeDirective> directives_;
};

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

/// The directive as written, for messages: #include "name", __has_include(<name>).
std::string spelling(const IncludeDirective& d)
{
    const std::string name = d.angled ? "<" + d.name + ">" : "\"" + d.name + "\"";
    return d.keyword.starts_with("__has_include") ? fmt::format("{}({})", d.keyword, name)
                                                  : fmt::format("#{} {}", d.keyword, name);
}

fs::path canonical_or_lexical(const fs::path& path)
{
    std::error_code ec;
    fs::path canonical = fs::weakly_canonical(path, ec);
    return ec ? path.lexically_normal() : canonical;
}

} // namespace

std::vector<IncludeDirective> include_directives(std::string_view text, const SourceLanguage& language)
{
    return DirectiveReader(text, language).read();
}

SourceLanguage source_language(const std::vector<std::string>& nvrtc_options)
{
    // NVRTC takes the last -std= (C++17 when none): c++03, c++11, c++14, c++17 or c++20.
    std::string standard = "c++17";
    for (const auto& option : nvrtc_options)
        for (const std::string prefix : {"-std=", "--std="})
            if (option.starts_with(prefix)) standard = option.substr(prefix.size());
    SourceLanguage language;
    language.trigraphs = standard == "c++03" || standard == "c++11" || standard == "c++14";
    language.raw_strings = standard != "c++03";
    language.digit_separators = standard != "c++03" && standard != "c++11";
    return language;
}

bool inside_any(const fs::path& path, const std::vector<fs::path>& roots)
{
    return std::any_of(roots.begin(), roots.end(), [&](const fs::path& root) {
        auto [r, p] = std::mismatch(root.begin(), root.end(), path.begin(), path.end());
        return r == root.end() || (std::next(r) == root.end() && r->empty());
    });
}

namespace {

/// A directive of a toolkit header and where it leads within the toolkit: to a file beside the
/// header (a quoted name found there, which no include folder can shadow) or to the first of the
/// toolkit's folders that holds it. Where it leads otherwise depends on the project's include
/// folders, which are searched before the toolkit's.
struct ToolkitDirective {
    IncludeDirective directive;
    fs::path beside;  ///< canonical, or empty
    fs::path toolkit; ///< canonical, or empty
};

/// The directives of a toolkit header, read and resolved in the toolkit once per process: the
/// toolkit does not change under a running command, and every kernel that includes cuda/std or
/// CUB meets the same files.
const std::vector<ToolkitDirective>& toolkit_directives(const fs::path& file, const IncludeSearch& search)
{
    static std::mutex mutex;
    static std::map<std::tuple<fs::path, bool, std::vector<fs::path>>, std::vector<ToolkitDirective>> read;
    const std::lock_guard lock(mutex);
    const auto key = std::tuple{file, search.language.trigraphs, search.toolkit_dirs};
    if (auto found = read.find(key); found != read.end()) return found->second;
    std::vector<ToolkitDirective> directives;
    try {
        for (auto& d : include_directives(read_source(file, {}, 0), search.language)) {
            if (!d.problem.empty() || d.name.empty()) continue; // the compiler's to report
            ToolkitDirective t{std::move(d), {}, {}};
            const fs::path named(t.directive.name);
            std::error_code ec;
            const auto found = [&](const fs::path& candidate) {
                const auto status = fs::status(candidate, ec);
                return !ec && fs::is_regular_file(status);
            };
            if (named.is_absolute()) {
                if (found(named)) t.beside = canonical_or_lexical(named);
            } else {
                if (!t.directive.angled && found(file.parent_path() / named))
                    t.beside = canonical_or_lexical(file.parent_path() / named);
                for (const auto& dir : search.toolkit_dirs)
                    if (found(dir / named)) {
                        t.toolkit = canonical_or_lexical(dir / named);
                        break;
                    }
            }
            directives.push_back(std::move(t));
        }
    } catch (const CompileError&) {
        // A toolkit file the scan cannot read is the compiler's to report.
    }
    return read.emplace(key, std::move(directives)).first->second;
}

/// A project file that a search of the include folders finds where the toolkit has a header of
/// the same name, or that a toolkit header would read: the compiler would read it in place of the
/// toolkit's own header.
struct Shadow {
    std::string where, directive;
    fs::path file;
};

/// One scan: the files met so far and the files still to read.
class IncludeScan {
public:
    explicit IncludeScan(const IncludeSearch& search) : search_(search)
    {
        for (const auto& root : search.project_roots) project_roots_.push_back(canonical_or_lexical(root));
        for (const auto& root : search.toolkit_dirs) toolkit_roots_.push_back(canonical_or_lexical(root));
        readable_ = project_roots_;
        readable_.insert(readable_.end(), toolkit_roots_.begin(), toolkit_roots_.end());
    }

    std::vector<fs::path> run()
    {
        pending_.push_back({canonical_or_lexical(search_.source), {}, 0, false});
        while (!pending_.empty()) {
            const Pending next = pending_.back();
            pending_.pop_back();
            if (!seen_.insert(next.file).second) continue;
            if (next.toolkit) {
                for (const ToolkitDirective& t : toolkit_directives(next.file, search_)) follow_toolkit(next, t);
                continue;
            }
            project_files_.push_back(next.file);
            for (const IncludeDirective& d :
                 include_directives(read_source(next.file, next.including, next.line), search_.language))
                check_and_follow(next, d);
        }
        if (!shadows_.empty()) {
            const Shadow& s = shadows_.front();
            throw CompileError(
                fmt::format("{}: {} would read the project's file {} in place of the CUDA toolkit's header of that "
                            "name: a project file may not shadow a toolkit header (the toolkit's own includes "
                            "must reach the toolkit and nowhere else); rename it",
                            s.where, s.directive, s.file.string()),
                "");
        }
        return project_files_;
    }

private:
    struct Pending {
        fs::path file, including;
        int line = 0;
        bool toolkit = false;
    };

    /// A directive of a project file: refused when it cannot be checked, then followed.
    void check_and_follow(const Pending& next, const IncludeDirective& d)
    {
        const std::string where = fmt::format("{}:{}", next.file.string(), d.line);
        if (!d.problem.empty()) throw CompileError(fmt::format("{}: {}", where, d.problem), "");
        if (d.keyword == "import" || d.keyword == "embed")
            throw CompileError(fmt::format("{}: {} is not supported in kernels; use #include", where,
                                           d.keyword == "import" ? "importing a header" : "#embed"),
                               "");
        if (d.name.empty())
            throw CompileError(fmt::format("{}: a computed {} (a macro naming the file) cannot be checked before "
                                           "compiling; name the header in quotes or angle brackets",
                                           where, d.keyword.starts_with("__has_include") ? d.keyword : "#" + d.keyword),
                               "");
        follow(next, d);
    }

    /// A directive of a toolkit header: a file beside it is the toolkit's; else a file of that name
    /// in one of the project's include folders, searched first, is what the compiler would read.
    void follow_toolkit(const Pending& next, const ToolkitDirective& t)
    {
        const bool existence_only = t.directive.keyword.starts_with("__has_include");
        const auto toolkit_file = [&](const fs::path& file) {
            if (!existence_only && !file.empty()) pending_.push_back({file, next.file, t.directive.line, true});
        };
        if (!t.beside.empty() && !t.directive.keyword.ends_with("_next")) return toolkit_file(t.beside);
        if (!fs::path(t.directive.name).is_absolute())
            for (const auto& dir : search_.include_dirs) {
                std::error_code ec;
                if (fs::exists(fs::status(dir / t.directive.name, ec))) return follow(next, t.directive);
            }
        toolkit_file(t.beside);
        toolkit_file(t.toolkit);
    }

    /// Where the compiler's search for `d` leads, in its order; each file found is checked by the
    /// path rule and followed, the toolkit's headers included.
    void follow(const Pending& next, const IncludeDirective& d)
    {
        const std::string where = fmt::format("{}:{}", next.file.string(), d.line);
        const bool existence_only = d.keyword.starts_with("__has_include");
        const std::string directive = spelling(d);
        const fs::path named(d.name);
        std::vector<fs::path> candidates;
        std::size_t own_folder = 0; // candidates found beside the including file, not by a search
        if (named.is_absolute()) {
            candidates.push_back(named);
            own_folder = 1;
        } else {
            if (!d.angled) candidates.push_back(next.file.parent_path() / named), own_folder = 1;
            for (const auto& dir : search_.include_dirs) candidates.push_back(dir / named);
            for (const auto& dir : search_.toolkit_dirs) candidates.push_back(dir / named);
        }
        // The _next forms start after the folder that held the including file: every folder counts.
        const bool searches_on = d.keyword.ends_with("_next");
        for (std::size_t k = 0; k < candidates.size(); ++k) {
            const fs::path& candidate = candidates[k];
            // Refused whether or not the file exists, so that no outcome tells whether it does.
            const fs::path resolved = canonical_or_lexical(candidate);
            std::error_code ec;
            if (!inside_any(resolved, readable_)) {
                if (next.toolkit) continue; // the toolkit's own business; confinement still holds
                throw CompileError(fmt::format("{}: {} reaches outside the project ({}); {}", where, directive,
                                               named.is_absolute() ? "an absolute path"
                                               : fs::is_symlink(fs::symlink_status(candidate, ec)) ||
                                                       resolved != candidate.lexically_normal()
                                                   ? "through a symbolic link or \"..\""
                                                   : "a \"..\" path",
                                               allowed_),
                                   "");
            }
            const auto status = fs::status(candidate, ec);
            if (ec || !fs::exists(status) || fs::is_directory(status)) continue; // the preprocessor looks on
            if (!fs::is_regular_file(status)) {
                if (next.toolkit) continue;
                throw CompileError(fmt::format("{}: {} names a file that is not a regular file", where, directive), "");
            }
            if (!inside_any(resolved, toolkit_roots_)) { // a toolkit inside the project is the toolkit
                check_project_file(resolved, project_roots_, toolkit_roots_, fmt::format("{}: {}", where, directive));
                if (next.toolkit || (k >= own_folder && toolkit_has(named)))
                    shadows_.push_back({where, directive, resolved});
                if (!existence_only) pending_.push_back({resolved, next.file, d.line, false});
            } else if (!existence_only) {
                pending_.push_back({resolved, next.file, d.line, true});
            }
            if (!searches_on) break;
        }
        // A name found nowhere is one of NVRTC's built-in headers, or an error the compiler reports.
    }

    bool toolkit_has(const fs::path& named) const
    {
        std::error_code ec;
        return std::any_of(search_.toolkit_dirs.begin(), search_.toolkit_dirs.end(),
                           [&](const fs::path& dir) { return fs::is_regular_file(dir / named, ec); });
    }

    const IncludeSearch& search_;
    std::vector<fs::path> project_roots_, toolkit_roots_, readable_;
    const std::string allowed_ = "kernels may include files of their project, of the folders the suite's "
                                 "`include:` names and the CUDA toolkit's headers";
    std::vector<fs::path> project_files_;
    std::set<fs::path> seen_;
    std::vector<Pending> pending_;
    std::vector<Shadow> shadows_;
};

} // namespace

std::vector<fs::path> scan_includes(const IncludeSearch& search)
{
    return IncludeScan(search).run();
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
