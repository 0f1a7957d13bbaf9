// The include scan against NVRTC itself: random sources mixing every literal form, comments, line
// splices, trigraphs, identifiers, pp-numbers, conditionals, #include lines and __has_include
// expressions, each naming one of a set of marker headers. NVRTC compiles each source while
// inotify reports every marker file it opens (an #include and a __has_include both open the file);
// every one of them must be a name the scan reported, or the scan must have refused the source.
// The scan seeing more than NVRTC opens (a directive in an #if 0 block, after a fatal error) is
// the safe direction and is only counted.

#include "harness/compile/include_scan.hxx"

#include "test_files.hxx"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <gtest/gtest.h>
#include <nvrtc.h>
#include <set>
#include <string>
#include <sys/inotify.h>
#include <unistd.h>
#include <vector>

namespace include_scan_differential_test {

namespace fs = std::filesystem;
using namespace harness;

namespace {

// Inputs per run: NVRTC's front end takes about 9 ms on one of them (2,500 in 23 s on a 2-core
// machine), which keeps the test well under a minute.
constexpr int input_count = 2500;
constexpr std::uint64_t seed = 20261201;
constexpr int marker_count = 12;

std::string marker_name(int k)
{
    return "scan_marker_" + std::to_string(k) + ".h";
}

/// splitmix64: the same inputs from the same seed with every standard library.
struct Random {
    std::uint64_t state;
    std::uint64_t next()
    {
        std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }
    bool chance(int percent) { return below(100) < static_cast<std::size_t>(percent); }
    template <typename T> const T& pick(const std::vector<T>& from) { return from[below(from.size())]; }
};

/// One random source: pieces that are each a token, a literal or a directive, or half of one.
std::string random_source(Random& random)
{
    static const std::vector<std::string> spaces = {" ", "", "\n", "\t", "\r\n", "\r", "\f", "\v", "  ", "\n\n"};
    static const std::vector<std::string> splices = {"\\\n", "\\\r\n", "?\?/\n", "\\ \n", "?\?/\r\n"};
    static const std::vector<std::string> identifiers = {"x",
                                                         "R",
                                                         "u8R",
                                                         "uR",
                                                         "UR",
                                                         "LR",
                                                         "L",
                                                         "u",
                                                         "U",
                                                         "u8",
                                                         "xu8R",
                                                         "_R",
                                                         "aR",
                                                         "return",
                                                         "define",
                                                         "import",
                                                         "export",
                                                         "defined",
                                                         "a1",
                                                         "\\u00e9R",
                                                         "\\u00e9",
                                                         "$R",
                                                         "\xc3\xa9R",
                                                         "\\uZZZZR",
                                                         "__has_include",
                                                         "__has_include_next",
                                                         "include",
                                                         "_x",
                                                         "e",
                                                         "p"};
    static const std::vector<std::string> numbers = {"1",     "0x1'f", "1'a",   "1'",  "1e+", "1E-3'2", ".5'x",
                                                     "0x1p-", "1.e",   "12'34", "1_a", "0'",  "9'R",    "0b1'0"};
    static const std::vector<std::string> punctuation = {"/*", "*/", "//", "/", "*", "(",  ")",  ";", "=", "<", ">",
                                                         "#",  "%:", "%",  ":", "?", "??", "\\", "{", "}", ",", "."};
    static const std::vector<std::string> trigraphs = {"?\?=", "?\?/", "?\?'", "?\?(",  "?\?)", "?\?!",
                                                       "?\?<", "?\?>", "?\?-", "??\?=", "?\?/"};
    static const std::vector<std::string> bytes = {std::string(1, '\0'), "\xef\xbb\xbf", "\xc3\xa9", "$", "@", "`"};
    static const std::vector<std::string> directives = {"#if 0\n",
                                                        "#endif\n",
                                                        "#else\n",
                                                        "#if 1\n",
                                                        "#define R\n",
                                                        "#define xu8R\n",
                                                        "#define u8\n",
                                                        "#define H __has_include\n",
                                                        "#ifdef __has_include\n",
                                                        "#if defined(__has_include)\n",
                                                        "#error e\n"};
    static const std::vector<std::string> prefixes = {"", "", "L", "u", "U", "u8"};
    static const std::vector<std::string> raw_prefixes = {"R", "LR", "uR", "UR", "u8R"};
    static const std::vector<std::string> delimiters = {
        "", "", "x", "ab", "a b", "0123456789abcdef", "0123456789abcdefg", ")", "\\", "\t", "/*", "\""};
    static const std::vector<std::string> content = {"a", "/*",   "*/",  "//",   "\"",   "'",  "\\", "\\\"", "\\'",
                                                     ")", ")x\"", ")\"", "?\?/", "?\?=", "\n", " ",  "(",    "x"};

    auto marker = [&] {
        const std::string name = marker_name(static_cast<int>(random.below(marker_count)));
        return random.chance(25) ? "<" + name + ">" : "\"" + name + "\"";
    };
    auto gap = [&] {
        std::string g;
        while (random.chance(30))
            g += random.chance(70)   ? random.pick(spaces)
                 : random.chance(50) ? std::string("/**/")
                 : random.chance(50) ? random.pick(splices)
                                     : "/*\n*/";
        return g;
    };
    auto literal_body = [&] {
        std::string body;
        for (std::size_t n = random.below(4); n > 0; --n) body += random.pick(content);
        return body;
    };

    std::string source;
    for (std::size_t pieces = 4 + random.below(28); pieces > 0; --pieces) {
        switch (random.below(16)) {
        case 0:
        case 1: { // an include, spelled one of the ways the preprocessor accepts
            static const std::vector<std::string> hashes = {"#", "#", "%:", "?\?=", " #", "#\\\n"};
            static const std::vector<std::string> keywords = {"include", "include", "include_next", "inc\\\nlude"};
            source += random.pick(hashes) + gap() + random.pick(keywords) + gap() + marker() + gap() + "\n";
            break;
        }
        case 2: { // __has_include, in a condition, in plain code or in a macro
            const std::string keyword = random.chance(80) ? "__has_include" : "__has_include_next";
            const std::string test = keyword + gap() + "(" + gap() + marker() + gap() + ")";
            const std::size_t form = random.below(3);
            source += form == 0   ? "#if " + test + "\n#endif\n"
                      : form == 1 ? "int h" + std::to_string(random.below(1000)) + " = " + test + ";\n"
                                  : "#define HAS " + test + "\n#if HAS\n#endif\n";
            break;
        }
        case 3: // a string or character literal with a prefix, maybe unterminated, maybe with a suffix
        {
            const std::string quote = random.chance(50) ? "\"" : "'";
            source += random.pick(prefixes) + quote + literal_body() + (random.chance(85) ? quote : "") +
                      (random.chance(15) ? random.pick(identifiers) : "");
            break;
        }
        case 4: { // a raw string, its delimiter valid or not, maybe never closed
            // The last five are malformed, which the scan refuses; they come less often.
            const std::string delimiter =
                delimiters[random.below(random.chance(90) ? delimiters.size() - 5 : delimiters.size())];
            source += (random.chance(80) ? random.pick(raw_prefixes) : random.pick(identifiers)) + "\"" + delimiter +
                      "(" + literal_body() + (random.chance(30) ? "\n#include " + marker() + "\n" : "") +
                      literal_body() + (random.chance(80) ? ")" + delimiter + "\"" : "") +
                      (random.chance(15) ? random.pick(identifiers) : "");
            break;
        }
        case 5: source += random.pick(identifiers); break;
        case 6: source += random.pick(numbers); break;
        case 7:
        case 8: source += random.pick(punctuation); break;
        case 9: source += random.pick(trigraphs); break;
        case 10: source += random.pick(splices); break;
        case 11: source += random.pick(directives); break;
        case 12: source += random.chance(20) ? random.pick(bytes) : random.pick(spaces); break;
        case 13: // C++20 header units
            if (random.chance(80)) break;
            source += std::string(random.chance(30) ? "export " : "") + "import " + marker() + ";\n";
            break;
        default: source += "\n";
        }
        source += gap();
    }
    return source;
}

/// The marker files NVRTC opened, from the inotify events since the last call.
std::set<std::string> opened_markers(int inotify)
{
    std::set<std::string> opened;
    alignas(inotify_event) char buffer[16384];
    for (;;) {
        const ssize_t n = ::read(inotify, buffer, sizeof buffer);
        if (n <= 0) break;
        for (ssize_t at = 0; at < n;) {
            const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
            if (event->len > 0 && std::string(event->name).starts_with("scan_marker_")) opened.insert(event->name);
            at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
        }
    }
    return opened;
}

/// Printable, for a finding's message.
std::string escaped(const std::string& text)
{
    std::string out;
    for (unsigned char c : text) {
        if (c == '\n')
            out += "\\n\n";
        else if (c == '\\')
            out += "\\\\";
        else if (c < 0x20 || c >= 0x7f) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02x", c);
            out += hex;
        } else
            out += static_cast<char>(c);
    }
    return out;
}

} // namespace

TEST(IncludeScanDifferential, EveryHeaderNvrtcOpensIsOneTheScanReported)
{
    TempDir dir("harness-scan-differential");
    for (int k = 0; k < marker_count; ++k) write_file(dir.path / marker_name(k), "/* a marker */\n");
    const int inotify = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    ASSERT_GE(inotify, 0);
    ASSERT_GE(::inotify_add_watch(inotify, dir.path.c_str(), IN_OPEN), 0);

    static const std::vector<std::string> standards = {"c++03", "c++11", "c++14", "c++14", "c++17", "c++17", "c++20"};
    Random random{seed};
    int refused = 0, opened_total = 0, reported_not_opened = 0, findings = 0;
    for (int input = 0; input < input_count; ++input) {
        const std::string text = random_source(random);
        const std::string standard = random.pick(standards);
        // Half the inputs are the program's own text, half a header it includes: NVRTC reads the
        // first from memory and the second from the file system.
        const bool as_header = random.chance(50);
        const fs::path body = dir.path / "body.cuh";
        if (as_header) write_file(body, text);
        const std::string program_text = as_header ? "#include \"body.cuh\"\n" : text;
        const std::string program_name = (dir.path / "fuzz.cu").string();
        const std::vector<std::string> options = {"--gpu-architecture=compute_80", "-std=" + standard,
                                                  "--include-path=" + dir.path.string(), "-default-device",
                                                  "-fdevice-syntax-only"};

        opened_markers(inotify); // nothing from before this input
        nvrtcProgram program = nullptr;
        ASSERT_EQ(nvrtcCreateProgram(&program, program_text.c_str(), program_name.c_str(), 0, nullptr, nullptr),
                  NVRTC_SUCCESS);
        std::vector<const char*> argv;
        for (const auto& option : options) argv.push_back(option.c_str());
        const nvrtcResult result = nvrtcCompileProgram(program, static_cast<int>(argv.size()), argv.data());
        nvrtcDestroyProgram(&program);
        ASSERT_NE(result, NVRTC_ERROR_INVALID_OPTION) << "input " << input;
        const std::set<std::string> opened = opened_markers(inotify);
        opened_total += static_cast<int>(opened.size());

        const auto directives = compile::include_directives(text, compile::source_language(options));
        std::set<std::string> reported;
        bool refuses = false;
        for (const auto& d : directives) {
            refuses = refuses || !d.problem.empty() || d.name.empty() || d.keyword == "import" || d.keyword == "embed";
            reported.insert(d.name);
        }
        if (refuses) {
            ++refused;
            continue;
        }
        for (const auto& name : reported)
            if (name.starts_with("scan_marker_") && !opened.count(name)) ++reported_not_opened;
        for (const auto& name : opened)
            if (!reported.count(name) && ++findings <= 5)
                ADD_FAILURE() << "input " << input << " (-std=" << standard << (as_header ? ", a header" : "")
                              << "): NVRTC opened " << name << ", which the scan did not report. The source:\n"
                              << escaped(text);
    }
    ::close(inotify);
    std::printf("%d inputs (seed %llu): %d refused by the scan, %d marker headers opened by NVRTC, %d reported by "
                "the scan and not opened, %d opened and not reported\n",
                input_count, static_cast<unsigned long long>(seed), refused, opened_total, reported_not_opened,
                findings);
    EXPECT_EQ(findings, 0);
    // The inputs must exercise the comparison: most are not refused, and NVRTC opens headers.
    EXPECT_LT(refused, input_count / 2);
    EXPECT_GT(opened_total, input_count / 2);
}

} // namespace include_scan_differential_test
