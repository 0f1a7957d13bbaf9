// Every `harness` command line that README.md and docs/*.md show runs as written (in a scratch
// copy of the project, in the order the pages give them) and exits 0. Without a GPU, commands
// that would use one run the static tier, as the README says they do.

#include "harness/cli/commands.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <regex>
#include <set>
#include <sstream>
#include <unistd.h>

namespace readme_commands_test {

namespace fs = std::filesystem;

namespace {

struct Documented {
    std::string page;
    int line = 0;
    std::string text;
};

/// The lines of code blocks (fenced or indented) that start with `harness ` or `build/harness `.
std::vector<Documented> documented_commands()
{
    std::vector<fs::path> pages = {repo_root() / "README.md"};
    std::vector<fs::path> docs;
    for (const auto& e : fs::directory_iterator(repo_root() / "docs"))
        if (e.path().extension() == ".md") docs.push_back(e.path());
    std::sort(docs.begin(), docs.end());
    pages.insert(pages.end(), docs.begin(), docs.end());

    static const std::regex command(R"(^(?:\s*)(?:build/)?(harness .*)$)");
    std::vector<Documented> out;
    for (const auto& page : pages) {
        std::ifstream in(page);
        bool fenced = false;
        int n = 0;
        for (std::string line; std::getline(in, line);) {
            ++n;
            if (line.starts_with("```")) {
                fenced = !fenced;
                continue;
            }
            const bool indented = line.starts_with("    ");
            std::smatch m;
            if ((fenced || indented) && std::regex_match(line, m, command)) {
                // A line may run several commands (`a && b`): each `harness` part counts.
                std::string text = m[1].str();
                text = text.substr(0, text.find(" #"));
                for (std::size_t at; (at = text.find("&&")) != std::string::npos;) text = text.substr(0, at);
                out.push_back({fs::relative(page, repo_root()).string(), n, text});
            }
        }
    }
    return out;
}

/// Splits on blanks and expands `dir/*.ext` globs relative to the working folder.
std::vector<std::string> arguments(const std::string& text)
{
    std::istringstream words(text);
    std::vector<std::string> args;
    for (std::string w; words >> w;) {
        const auto star = w.find('*');
        if (star == std::string::npos) {
            args.push_back(w);
            continue;
        }
        const fs::path dir = fs::path(w).parent_path();
        const std::string suffix = w.substr(star + 1);
        std::vector<std::string> matches;
        for (const auto& e : fs::directory_iterator(dir))
            if (e.path().string().ends_with(suffix)) matches.push_back((dir / e.path().filename()).string());
        std::sort(matches.begin(), matches.end());
        args.insert(args.end(), matches.begin(), matches.end());
    }
    return args;
}

} // namespace

TEST(DocumentedCommands, EveryHarnessCommandInTheReadmeAndDocsRuns)
{
    const auto commands = documented_commands();
    ASSERT_GE(commands.size(), 7u) << "the README and docs show at least the run, baseline and report commands";

    const TempDir project_copy{"harness-documented"};
    const fs::path& scratch = project_copy.path;
    for (const char* dir : {"suites", "kernels", "baselines"})
        fs::copy(repo_root() / dir, scratch / dir, fs::copy_options::recursive);
    const fs::path before = fs::current_path();
    fs::current_path(scratch);
    std::set<std::string> ran;
    for (const auto& c : commands) {
        std::vector<std::string> args = arguments(c.text);
        args.erase(args.begin()); // "harness"
        // A bisect names commits of a repository's history, which the scratch copy has none of;
        // bisect_test runs it on a repository of its own.
        if (!args.empty() && args[0] == "bisect") continue;
        // Run as a user would without a GPU: outside CI mode, on the static tier (what `run` and
        // `baseline update` fall back to by themselves), on a GPU machine too, where the commands'
        // full GPU runs (five of gemm for `--runs 5`) would take minutes and test nothing more here.
        const bool suites_command = !args.empty() && (args[0] == "run" || args[0] == "baseline");
        if (suites_command) args.push_back("--no-ci");
        if (suites_command && std::find(args.begin(), args.end(), "--static") == args.end()) args.push_back("--static");
        // A command line that two pages show runs once: its second run would test nothing more.
        std::string line;
        for (const auto& a : args) line += a + '\n';
        if (!ran.insert(line).second) continue;
        testing::internal::CaptureStdout();
        const int code = harness::cli::run_tool(args);
        const std::string out = testing::internal::GetCapturedStdout();
        EXPECT_EQ(code, 0) << c.page << ":" << c.line << ": `" << c.text << "` exited " << code << "\n" << out;
    }
    fs::current_path(before);
}

TEST(DocumentedCommands, TheScriptsTheReadmeNamesExist)
{
    std::ifstream in(repo_root() / "README.md");
    std::stringstream text;
    text << in.rdbuf();
    static const std::regex script(R"((ci/[a-z0-9_-]+\.sh))");
    std::size_t found = 0;
    const std::string s = text.str();
    for (auto it = std::sregex_iterator(s.begin(), s.end(), script); it != std::sregex_iterator(); ++it) {
        ++found;
        const fs::path path = repo_root() / (*it)[1].str();
        EXPECT_TRUE(fs::is_regular_file(path)) << path;
        EXPECT_EQ(access(path.c_str(), X_OK), 0) << path << " is not executable";
    }
    EXPECT_GE(found, 5u);
}

} // namespace readme_commands_test
