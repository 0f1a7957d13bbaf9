// The folders of harness/ form layers, each including only itself and the layers below it
// (docs/architecture.md): core <- suite <- compile <- cliff <- profile <- run <- compare <- report
// <- history <- pipeline <- cli. No upward include, so no cycle between folders.

#include "harness/run/builtins.hxx"
#include "harness/suite/builtin_signatures.hxx"
#include "test_paths.hxx"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <regex>

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> layers = {"core",    "suite",  "compile", "cliff",    "profile", "run",
                                         "compare", "report", "history", "pipeline", "cli"};

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

// Built-ins are named in suite/ (what a suite may call) and implemented in run/: one row each.
TEST(Layering, EveryBuiltinSignatureHasAnImplementation)
{
    const auto signatures = harness::suite::builtin_signatures();
    const auto implementations = harness::run::builtin_table();
    ASSERT_EQ(signatures.size(), implementations.size());
    for (std::size_t i = 0; i < signatures.size(); ++i) EXPECT_STREQ(signatures[i].name, implementations[i].name);
}
