#include "harness/core/atomic_file.hxx"
#include "harness/core/error.hxx"

#include "test_files.hxx"
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <set>
#include <sstream>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace atomic_file_test {

namespace fs = std::filesystem;
using namespace harness;

namespace {

std::set<std::string> names_in(const fs::path& dir)
{
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
    return names;
}

mode_t current_umask()
{
    const mode_t mask = ::umask(0);
    ::umask(mask);
    return mask;
}

/// Expects `write` to throw an environment Error; returns its message.
template <typename Write> std::string failure_of(Write write)
{
    try {
        write();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::environment);
        return e.what();
    }
    ADD_FAILURE() << "the write succeeded";
    return {};
}

} // namespace

TEST(AtomicFile, ReplacesTheFileAndLeavesNothingElse)
{
    const TempDir scratch{"harness-atomic-test"};
    const fs::path& dir = scratch.path;
    write_file_atomically(dir / "out.txt", "first");
    write_file_atomically(dir / "out.txt", "second, longer than the first");
    EXPECT_EQ(read_file(dir / "out.txt"), "second, longer than the first");
    EXPECT_EQ(names_in(dir), std::set<std::string>{"out.txt"});
    struct stat st {};
    ASSERT_EQ(::stat((dir / "out.txt").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0644u & ~current_umask());
}

TEST(AtomicFile, CreatesParentFolders)
{
    const TempDir scratch{"harness-atomic-test"};
    const fs::path& dir = scratch.path;
    write_file_atomically(dir / "a" / "b" / "out.txt", "content");
    EXPECT_EQ(read_file(dir / "a" / "b" / "out.txt"), "content");
}

// Writing stops at the file-size limit (which binds root too): the old file stays whole.
TEST(AtomicFile, KeepsTheOldFileWhenWritingFails)
{
    const TempDir scratch{"harness-atomic-test"};
    const fs::path& dir = scratch.path;
    write_file(dir / "out.txt", "old content");
    rlimit saved{};
    ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
    rlimit small = saved;
    small.rlim_cur = 4096;
    const auto previous_handler = std::signal(SIGXFSZ, SIG_IGN);
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0) << std::strerror(errno);
    const std::string message = failure_of([&] { write_file_atomically(dir / "out.txt", std::string(1 << 20, 'x')); });
    ::setrlimit(RLIMIT_FSIZE, &saved);
    std::signal(SIGXFSZ, previous_handler);
    EXPECT_NE(message.find((dir / "out.txt").string()), std::string::npos) << message;
    EXPECT_EQ(read_file(dir / "out.txt"), "old content");
    EXPECT_EQ(names_in(dir), std::set<std::string>{"out.txt"});
}

TEST(AtomicFile, KeepsWhatIsThereWhenItCannotBeReplaced)
{
    const TempDir scratch{"harness-atomic-test"};
    const fs::path& dir = scratch.path;
    fs::create_directories(dir / "out.txt"); // a non-empty folder where the file should go
    write_file(dir / "out.txt" / "inside", "kept");
    failure_of([&] { write_file_atomically(dir / "out.txt", "new"); });
    EXPECT_EQ(read_file(dir / "out.txt" / "inside"), "kept");
    EXPECT_EQ(names_in(dir), std::set<std::string>{"out.txt"});
}

TEST(AtomicFile, FailsWhenAParentIsAFile)
{
    const TempDir scratch{"harness-atomic-test"};
    const fs::path& dir = scratch.path;
    write_file(dir / "plain", "a file, not a folder");
    failure_of([&] { write_file_atomically(dir / "plain" / "sub" / "out.txt", "new"); });
    EXPECT_EQ(read_file(dir / "plain"), "a file, not a folder");
    EXPECT_EQ(names_in(dir), std::set<std::string>{"plain"});
}

TEST(AtomicFile, KeepsTheOldFileInAReadOnlyFolder)
{
    if (::geteuid() == 0) GTEST_SKIP() << "root writes into read-only folders";
    const TempDir scratch{"harness-atomic-test"};
    const fs::path& dir = scratch.path;
    write_file(dir / "out.txt", "old content");
    fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec);
    failure_of([&] { write_file_atomically(dir / "out.txt", "new"); });
    fs::permissions(dir, fs::perms::owner_all);
    EXPECT_EQ(read_file(dir / "out.txt"), "old content");
    EXPECT_EQ(names_in(dir), std::set<std::string>{"out.txt"});
}

// A link at the target is replaced by the file; whatever it pointed at is not touched.
TEST(AtomicFile, ALinkAtTheTargetIsReplacedNotWrittenThrough)
{
    const TempDir scratch{"harness-atomic-test"};
    const fs::path& dir = scratch.path;
    write_file(dir / "victim", "precious");
    fs::create_symlink(dir / "victim", dir / "out.txt");
    write_file_atomically(dir / "out.txt", "new");
    EXPECT_EQ(read_file(dir / "victim"), "precious");
    EXPECT_FALSE(fs::is_symlink(dir / "out.txt"));
    EXPECT_EQ(read_file(dir / "out.txt"), "new");
}

// Temporary names used to be "<path>.tmp.<pid>": links planted under such names are left alone.
TEST(AtomicFile, LinksPlantedUnderGuessableTemporaryNamesAreNotFollowed)
{
    const TempDir scratch{"harness-atomic-test"};
    const fs::path& dir = scratch.path;
    write_file(dir / "victim", "precious");
    std::set<std::string> planted;
    for (const std::string& suffix :
         std::vector<std::string>{".tmp", ".tmp.0", ".tmp." + std::to_string(::getpid()), ".tmp.XXXXXX"}) {
        fs::create_symlink(dir / "victim", dir / ("out.txt" + suffix));
        planted.insert("out.txt" + suffix);
    }
    write_file_atomically(dir / "out.txt", "new");
    EXPECT_EQ(read_file(dir / "victim"), "precious");
    EXPECT_EQ(read_file(dir / "out.txt"), "new");
    for (const auto& name : planted) EXPECT_TRUE(fs::is_symlink(dir / name)) << name;
    planted.insert({"victim", "out.txt"});
    EXPECT_EQ(names_in(dir), planted);
}

} // namespace atomic_file_test
