#pragma once
// Files and folders for tests: a scratch folder per test, whole-file reads and writes, and a
// folder's state to compare before and after a command.

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <sstream>
#include <string>
#include <unistd.h>

/// A fresh folder under the system temp dir, named for the running test, removed afterwards with
/// everything in it, read-only folders included.
struct TempDir {
    std::filesystem::path path;
    explicit TempDir(const std::string& prefix = "harness-test")
    {
        path =
            std::filesystem::temp_directory_path() / (prefix + "-" + std::to_string(getpid()) + "-" +
                                                      ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~TempDir()
    {
        namespace fs = std::filesystem;
        // Tests make folders read-only, at any depth, to provoke failures; remove_all needs write and
        // search permission on every folder it empties. Links are not followed, so nothing outside
        // changes.
        std::error_code ignored;
        fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ignored);
        std::error_code walk_error;
        for (fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, walk_error), end;
             !walk_error && it != end; it.increment(walk_error))
            if (it->symlink_status(ignored).type() == fs::file_type::directory)
                fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ignored);
        fs::remove_all(path, ignored);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
};

inline std::string read_file(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

/// Writes `text` to `path`, creating its folder.
inline void write_file(const std::filesystem::path& path, const std::string& text)
{
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
}

/// Every regular file under `dir` with its content, by path relative to `dir`.
inline std::map<std::string, std::string> snapshot(const std::filesystem::path& dir)
{
    std::map<std::string, std::string> files;
    if (!std::filesystem::exists(dir)) return files;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
        if (e.is_regular_file()) files[std::filesystem::relative(e.path(), dir).string()] = read_file(e.path());
    return files;
}
