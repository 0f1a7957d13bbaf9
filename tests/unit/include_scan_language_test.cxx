// The include scan reads a source as NVRTC's preprocessor does for the language standard it is
// compiled with: every construct that once hid an #include from the scan (a name followed by a
// string, a character literal after a name, trigraphs under C++14) is refused with the file and
// line, and a __has_include cannot ask whether a file outside the project exists.

#include "harness/compile/include_scan.hxx"
#include "harness/compile/nvrtc_compiler.hxx"

#include "test_files.hxx"

#include <filesystem>
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace include_scan_language_test {

namespace fs = std::filesystem;
using namespace harness;

namespace {

const compile::SourceLanguage cxx03 = compile::source_language({"-std=c++03"});
const compile::SourceLanguage cxx11 = compile::source_language({"-std=c++11"});
const compile::SourceLanguage cxx14 = compile::source_language({"-std=c++14"});
const compile::SourceLanguage cxx17 = compile::source_language({});

/// The names the scan reports for `text`, "!" for a problem and "?" for a computed name.
std::vector<std::string> names(const std::string& text, const compile::SourceLanguage& language = cxx17)
{
    std::vector<std::string> found;
    for (const auto& d : compile::include_directives(text, language))
        found.push_back(!d.problem.empty() ? "!" : d.name.empty() ? "?" : d.name);
    return found;
}

using Names = std::vector<std::string>;

/// A project in `dir/project` with one kernel; `scan` reports the scan's refusal, or "".
struct Project {
    TempDir dir{"harness-scan-language"};
    fs::path project = dir.path / "project";
    fs::path kernel = project / "kernels" / "k.cu";

    std::string scan(const std::string& text, const std::vector<std::string>& options = {})
    {
        write_file(kernel, text);
        compile::CompileRequest request;
        request.source = kernel;
        request.options = options;
        request.readable_roots = {project};
        try {
            compile::source_closure(request);
            return "";
        } catch (const compile::CompileError& e) {
            return e.what();
        }
    }
};

const std::string secret_include = "SA(\n#include \"/proc/self/environ\"\n)\n";

} // namespace

TEST(IncludeScanLanguage, SourceLanguageFollowsTheLastStdOption)
{
    EXPECT_FALSE(cxx17.trigraphs);
    EXPECT_TRUE(cxx17.raw_strings && cxx17.digit_separators);
    EXPECT_TRUE(cxx14.trigraphs && cxx14.digit_separators);
    EXPECT_TRUE(cxx11.trigraphs && cxx11.raw_strings && !cxx11.digit_separators);
    EXPECT_FALSE(cxx03.raw_strings);
    EXPECT_TRUE(compile::source_language({"-std=c++17", "--std=c++14"}).trigraphs);
    EXPECT_FALSE(compile::source_language({"-std=c++14", "-std=c++20"}).trigraphs);
}

// The three constructs that hid `#include "/proc/self/environ"` from the scan, in a kernel of a
// project: each is refused, naming the kernel and the include's line.
TEST(IncludeScanLanguage, TheBypassesAreRefusedWithFileAndLine)
{
    Project p;
    const std::vector<std::pair<std::string, std::vector<std::string>>> kernels = {
        {"#define xu8R\nconst char* hide = xu8R\"(\";\n" + secret_include + "// )\"\n", {}},
        {"__device__ int f() { return'a/*'; }\n" + secret_include + "// */\n", {}},
        {"SA(\n?\?=include \"/proc/self/environ\"\n)\n", {"-std=c++14"}},
        {"SA(\n?\?=include \"/proc/self/environ\"\n)\n", {"-std=c++17", "--std=c++11"}},
    };
    for (const auto& [text, options] : kernels) {
        const std::string refusal = p.scan(text, options);
        EXPECT_NE(refusal.find("k.cu:" +
                               std::to_string(text.starts_with("SA")        ? 2
                                              : text.starts_with("#define") ? 4
                                                                            : 3) +
                               ":"),
                  std::string::npos)
            << text << "\n"
            << refusal;
        EXPECT_NE(refusal.find("reaches outside the project (an absolute path)"), std::string::npos) << refusal;
    }
    // From C++17 on ??= is two question marks and an equals sign, as NVRTC reads it: no directive.
    EXPECT_EQ(p.scan("SA(\n?\?=include \"/proc/self/environ\"\n)\n"), "");
}

TEST(IncludeScanLanguage, NamesAndStringsAreTokensOfTheirOwn)
{
    // A raw string's prefix is a whole token: not the end of a longer name, not a literal's suffix.
    EXPECT_EQ(names("xu8R\"(\"\n#include \"a.h\"\n)\""), Names{"a.h"});
    EXPECT_EQ(names("_R\"(\"\n#include \"a.h\"\n)\""), Names{"a.h"});
    EXPECT_EQ(names("\\u00e9R\"(\"\n#include \"a.h\"\n)\""), Names{"a.h"}); // a universal character name
    EXPECT_EQ(names("\\u8R\"(\"\n#include \"a.h\"\n)\""), Names{"a.h"});    // one cut short, as NVRTC reads it
    for (const std::string prefix : {"R", "u8R", "uR", "UR", "LR"})
        EXPECT_EQ(names("x = " + prefix + "\"d(\n#include \"a.h\"\n)d\";\n#include \"b.h\""), Names{"b.h"}) << prefix;
    EXPECT_EQ(names("x = $R\"(\n#include \"a.h\"\n)\";"), Names{}); // $ is no letter for NVRTC
    // Every prefix of an ordinary literal: the literal ends at its quote, a comment begins after.
    for (const std::string prefix : {"", "L", "u", "U", "u8"}) {
        EXPECT_EQ(names(prefix + "'/*' /*\n#include \"a.h\"\n*/#include \"b.h\""), Names{"b.h"}) << prefix;
        EXPECT_EQ(names(prefix + "\"\\\" /*\" /*\n#include \"a.h\"\n*/#include \"b.h\""), Names{"b.h"}) << prefix;
    }
    // A user-defined suffix is part of its literal; one ending in R before a quote is refused.
    EXPECT_EQ(names("\"a\"_s /*\n#include \"a.h\"\n*/\n#include \"b.h\""), Names{"b.h"});
    EXPECT_EQ(names("'a'u8R\"(\"\n#include \"a.h\"\n)\""), Names{"!"});
    EXPECT_EQ(names("1R\"(\"\n#include \"a.h\"\n)\""), Names{"!"});
    // A malformed raw-string delimiter: NVRTC's recovery is its own; refused.
    EXPECT_EQ(names("R\"a b(\n#include \"a.h\"\n)a b\""), Names{"!"});
    EXPECT_EQ(names("R\"0123456789abcdefg(\n#include \"a.h\"\n)0123456789abcdefg\""), Names{"!"});
    // No raw strings in C++03: R is a name and "x(" a string.
    EXPECT_EQ(names("R\"x(\")x\" /*\n#include \"a.h\"\n// */", cxx03), Names{"a.h"});
    EXPECT_EQ(names("R\"x(\")x\" /*\n#include \"a.h\"\n// */", cxx11), Names{});
}

TEST(IncludeScanLanguage, QuotesInNumbersFollowTheStandard)
{
    // After a name a quote begins a character literal, never a digit separator.
    EXPECT_EQ(names("return'a/*';\n#include \"a.h\"\n// */"), Names{"a.h"});
    // Inside a number every quote is a separator from C++14 on, as NVRTC reads it: 1'/* opens a comment.
    EXPECT_EQ(names("x = 1'a/*';\n#include \"a.h\"\n// */", cxx14), Names{});
    EXPECT_EQ(names("x = 1'/*';\n#include \"a.h\"\n// */", cxx17), Names{});
    EXPECT_EQ(names("x = 0x1'ff'/*';\n#include \"a.h\"\n// */"), Names{});
    EXPECT_EQ(names("x = 1'a/*';\n#include \"a.h\"\n// */", cxx11), Names{"a.h"});
}

TEST(IncludeScanLanguage, TrigraphsOnlyUnderCxx14AndOlder)
{
    EXPECT_EQ(names("?\?=include \"a.h\"", cxx14), Names{"a.h"});
    EXPECT_EQ(names("?\?=include \"a.h\"", cxx03), Names{"a.h"});
    EXPECT_EQ(names("?\?=include \"a.h\"", cxx17), Names{});
    EXPECT_EQ(names("??\?=include \"a.h\"", cxx14), Names{}); // ? then #: not first on its line
    // ??/ is a backslash: it splices lines and escapes quotes.
    EXPECT_EQ(names("// comment ?\?/\n#include \"a.h\"\n#include \"b.h\"", cxx14), Names{"b.h"});
    EXPECT_EQ(names("// comment ?\?/\n#include \"a.h\"", cxx17), Names{"a.h"});
    EXPECT_EQ(names("#inc?\?/\nlude \"a.h\"", cxx14), Names{"a.h"});
    EXPECT_EQ(names("s = \"?\?/\" /*\";\n#include \"a.h\"\n*/", cxx14), Names{"a.h"});
    // Inside a raw string trigraphs are undone: R"(??)" ends at its )".
    EXPECT_EQ(names("R\"(?\?)\" /*\n#include \"a.h\"\n*/#include \"b.h\"", cxx14), Names{"b.h"});
    EXPECT_EQ(names("R\"(x?\?/\n\n#include \"a.h\"\n)\"", cxx14), Names{"!"});
}

TEST(IncludeScanLanguage, SplicesCommentsAndLinesAsNvrtcReadsThem)
{
    EXPECT_EQ(names("// comment \\\n#include \"a.h\"\n#include \"b.h\""), Names{"b.h"});
    EXPECT_EQ(names("// comment \\\r\n#include \"a.h\"\n#include \"b.h\""), Names{"b.h"});
    EXPECT_EQ(names("// comment \\ \n#include \"a.h\""), Names{"a.h"}); // a space after the backslash: no splice
    EXPECT_EQ(names("R\"(x)\\\n\" /*\n)\"\n#include \"a.h\"\n//*/"), Names{"a.h"}); // splices are undone in raw strings
    // A comment holding a newline ends the line: the # after it begins a directive.
    EXPECT_EQ(names("int b; /*\n*/#include \"a.h\""), Names{"a.h"});
    const auto d = compile::include_directives("int b; /*\n\n*/ #include \"a.h\"");
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].line, 3);
    // A lone carriage return ends no line; a NUL byte is a space.
    EXPECT_EQ(names("int a;\r#include \"a.h\""), Names{});
    EXPECT_EQ(names(std::string("\0#include \"a.h\"", 15)), Names{"a.h"});
    // A header name is read before comments: <a/*b.h> names a/*b.h.
    EXPECT_EQ(names("#include <a/*b.h>\n#include \"c.h\"\n// */"), (Names{"a/*b.h", "c.h"}));
    // A C++20 header-unit import opens its file.
    const auto imports = compile::include_directives("import \"a.h\";\nexport import <b.h>;\nx import \"c.h\";");
    ASSERT_EQ(imports.size(), 2u);
    EXPECT_EQ(imports[1].keyword, "import");
}

TEST(IncludeScanLanguage, HasIncludeIsReadLikeAnInclude)
{
    const auto d =
        compile::include_directives("#if __has_include(<a.h>) && __has_include_next ( \"b.h\" )\n#endif\n"
                                    "#if defined(__has_include) || defined __has_include\n#endif\n"
                                    "#ifdef __has_include\n#endif\n"
                                    "int x = __has_include(\"c.h\");\n"
                                    "#define N \"d.h\"\n#if __has_include(N)\n#endif\n"
                                    "#define H __has_include\n"
                                    "const char* s = \"__has_include(\\\"e.h\\\")\"; // __has_include(<f.h>)\n");
    ASSERT_EQ(d.size(), 5u);
    EXPECT_EQ(d[0].keyword, "__has_include");
    EXPECT_EQ(d[0].name, "a.h");
    EXPECT_TRUE(d[0].angled);
    EXPECT_EQ(d[1].keyword, "__has_include_next");
    EXPECT_EQ(d[1].name, "b.h");
    EXPECT_EQ(d[2].name, "c.h"); // NVRTC evaluates it outside #if as well
    EXPECT_EQ(d[2].line, 7);
    EXPECT_EQ(d[3].name, ""); // a macro operand: computed
    EXPECT_EQ(d[3].line, 9);
    EXPECT_EQ(d[4].name, ""); // an alias of __has_include
}

// __has_include would tell whether a file outside the project exists: its operand is refused as an
// include's would be, whether the file exists or not, so the answer says nothing either way.
TEST(IncludeScanLanguage, HasIncludeCannotProbeOutsideTheProject)
{
    Project p;
    write_file(p.dir.path / "outside.h", "int outside;\n");
    write_file(p.project / "kernels" / "inside.cuh", "#error never read\n");
    const std::string outside = (p.dir.path / "outside.h").string();
    const std::string missing = (p.dir.path / "missing.h").string();
    const std::vector<std::pair<std::string, std::string>> refused = {
        {"#if __has_include(\"" + outside + "\")\n#endif\n", "an absolute path"},
        {"#if __has_include(\"" + missing + "\")\n#endif\n", "an absolute path"},
        {"#if __has_include(<" + missing + ">)\n#endif\n", "an absolute path"},
        {"int x = __has_include(\"../../outside.h\");\n", "outside the project"},
        {"int x = __has_include(\"../../missing.h\");\n", "outside the project"},
        {"#if __has_include_next(\"/etc/passwd\")\n#endif\n", "an absolute path"},
        {"#include \"" + missing + "\"\n", "an absolute path"},
        {"#define F \"/etc/passwd\"\n#if __has_include(F)\n#endif\n", "computed __has_include"},
    };
    for (const auto& [text, reason] : refused) {
        const std::string refusal = p.scan("\n" + text);
        EXPECT_NE(refusal.find(text.starts_with("#define") ? "k.cu:3:" : "k.cu:2:"), std::string::npos) << text << "\n"
                                                                                                        << refusal;
        EXPECT_NE(refusal.find(reason), std::string::npos) << refusal;
    }
    // A project file may be asked for; it is not read, as NVRTC does not read it.
    EXPECT_EQ(p.scan("#if __has_include(\"inside.cuh\") && __has_include(\"nowhere.h\")\n#endif\n"), "");
    write_file(p.project / "kernels" / "inside.cuh", "#include \"/etc/passwd\"\n");
    EXPECT_EQ(p.scan("#if __has_include(\"inside.cuh\")\n#endif\n"), "");
    EXPECT_NE(p.scan("#include \"inside.cuh\"\n").find("inside.cuh:1:"), std::string::npos);
}

} // namespace include_scan_language_test
