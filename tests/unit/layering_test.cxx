// The folders of harness/ form layers, each including only itself and the layers before it in the
// order core, analysis, suite, compile, cliff, profile, run, compare, report, history, pipeline, cli
// (docs/architecture.md). No upward include, so no cycle between folders.

#include "harness/run/builtins.hxx"
#include "harness/suite/builtin_signatures.hxx"
#include "test_paths.hxx"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <regex>
#include <set>

namespace layering_test {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> layers = {"core", "analysis", "suite",  "compile", "cliff",    "profile",
                                         "run",  "compare",  "report", "history", "pipeline", "cli"};

int layer_of(const std::string& folder)
{
    const auto it = std::find(layers.begin(), layers.end(), folder);
    return it == layers.end() ? -1 : static_cast<int>(it - layers.begin());
}

} // namespace

TEST(Layering, EveryFolderIsALayerAndIncludesOnlyItselfAndLayersBelow)
{
    const fs::path root = repo_root() / "harness";
    const std::regex include(R"(^\s*#\s*include\s*"harness/([a-z_]+)/([^"]+)\")");
    int files = 0, includes = 0;
    std::vector<std::string> upward;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
        if (!entry.is_regular_file()) continue;
        const auto ext = entry.path().extension();
        if (ext != ".cxx" && ext != ".hxx") continue;
        const std::string folder = fs::relative(entry.path(), root).begin()->string();
        const int own = layer_of(folder);
        ASSERT_GE(own, 0) << entry.path() << ": harness/" << folder << " is not a layer; add it to the list";
        ++files;
        std::ifstream in(entry.path());
        int line_number = 0;
        for (std::string line; std::getline(in, line);) {
            ++line_number;
            std::smatch m;
            if (!std::regex_search(line, m, include)) continue;
            ++includes;
            const int target = layer_of(m[1].str());
            EXPECT_GE(target, 0) << entry.path() << ":" << line_number << ": unknown folder " << m[1];
            if (target > own)
                upward.push_back(fs::relative(entry.path(), repo_root()).string() + ":" + std::to_string(line_number) +
                                 " (" + folder + ") includes harness/" + m[1].str() + "/" + m[2].str());
        }
    }
    EXPECT_GT(files, 50);
    EXPECT_GT(includes, 100);
    for (const auto& u : upward) ADD_FAILURE() << "upward include: " << u;
}

// docs/architecture.md lists, per folder, the folders it includes: the list is the code's.
TEST(Layering, TheArchitecturePageSaysWhatEachFolderIncludes)
{
    const fs::path root = repo_root() / "harness";
    const std::regex include(R"(^\s*#\s*include\s*"harness/([a-z_]+)/)");
    std::map<std::string, std::set<std::string>> included;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
        const auto ext = entry.path().extension();
        if (!entry.is_regular_file() || (ext != ".cxx" && ext != ".hxx")) continue;
        const std::string folder = fs::relative(entry.path(), root).begin()->string();
        auto& targets = included[folder];
        std::ifstream in(entry.path());
        std::smatch m;
        for (std::string line; std::getline(in, line);)
            if (std::regex_search(line, m, include) && m[1].str() != folder) targets.insert(m[1].str());
    }

    std::map<std::string, std::set<std::string>> documented;
    std::ifstream page(repo_root() / "docs" / "architecture.md");
    const std::regex row(R"(^\| `([a-z_]+)/` \| ([^|]*) \|$)"), name("`([a-z_]+)`");
    for (std::string line; std::getline(page, line);) {
        std::smatch m;
        if (!std::regex_match(line, m, row)) continue;
        auto& targets = documented[m[1].str()];
        const std::string cell = m[2].str();
        for (std::sregex_iterator it(cell.begin(), cell.end(), name), end; it != end; ++it)
            targets.insert((*it)[1].str());
    }
    for (const auto& layer : layers) {
        ASSERT_TRUE(documented.count(layer)) << "docs/architecture.md has no row for " << layer << "/";
        EXPECT_EQ(documented[layer], included[layer]) << layer << "/ includes other folders than the page says";
    }
}

// Within compile/ and core/, no file includes itself through others: a unit is a header and its
// source (include_scan.hxx and include_scan.cxx), and a unit whose source includes another's header
// depends on it. The include scan and the NVRTC compiler once did so through CompileError.
TEST(Layering, NoUnitOfCompileOrCoreDependsOnItself)
{
    for (const std::string folder : {"compile", "core"}) {
        const fs::path root = repo_root() / "harness" / folder;
        const std::regex include("^\\s*#\\s*include\\s*\"harness/" + folder + "/([a-z_]+)\\.hxx\"");
        std::map<std::string, std::set<std::string>> uses;
        for (const auto& entry : fs::directory_iterator(root)) {
            const auto ext = entry.path().extension();
            if (!entry.is_regular_file() || (ext != ".cxx" && ext != ".hxx")) continue;
            const std::string unit = entry.path().stem().string();
            auto& targets = uses[unit];
            std::ifstream in(entry.path());
            std::smatch m;
            for (std::string line; std::getline(in, line);)
                if (std::regex_search(line, m, include) && m[1].str() != unit) targets.insert(m[1].str());
        }
        ASSERT_GT(uses.size(), 10u) << folder;
        // A unit depends on itself where it is reached again from what it uses.
        for (const auto& [unit, direct] : uses) {
            std::set<std::string> reached;
            std::vector<std::string> todo(direct.begin(), direct.end());
            while (!todo.empty()) {
                const std::string next = todo.back();
                todo.pop_back();
                if (!reached.insert(next).second) continue;
                for (const auto& further : uses[next]) todo.push_back(further);
            }
            EXPECT_FALSE(reached.contains(unit)) << folder << "/" << unit << " includes itself through others";
        }
    }
}

// Built-ins are named in suite/ (what a suite may call) and implemented in run/: one row each.
TEST(Layering, EveryBuiltinSignatureHasAnImplementation)
{
    const auto signatures = harness::suite::builtin_signatures();
    const auto implementations = harness::run::builtin_table();
    ASSERT_EQ(signatures.size(), implementations.size());
    for (std::size_t i = 0; i < signatures.size(); ++i) EXPECT_STREQ(signatures[i].name, implementations[i].name);
}

} // namespace layering_test
