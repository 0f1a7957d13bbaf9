#include "harness/cli/commands.hxx"
#include "harness/compile/kernel_cache.hxx"
#include "harness/compile/nvrtc_compiler.hxx"
#include "harness/core/error.hxx"
#include "test_files.hxx"
#include "test_paths.hxx"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>
#include <xxhash.h>

namespace compile_cache_test {

namespace fs = std::filesystem;
using namespace harness;

namespace {

/// Not the uid of whoever runs the tests.
constexpr uid_t other_uid = 12345;

std::string xxh3_128_hex(const std::string& bytes)
{
    const XXH128_hash_t hash = XXH3_128bits(bytes.data(), bytes.size());
    return fmt::format("{:016x}{:016x}", hash.high64, hash.low64);
}

/// A one-line kernel in `dir`; `body` makes kernels of different code.
compile::CompileRequest tiny_kernel(const fs::path& dir, const std::string& body = "p[0] *= 2.0f;")
{
    const fs::path source = dir / ("k" + std::to_string(std::hash<std::string>{}(body)) + ".cu");
    write_file(source, "extern \"C\" __global__ void k(float* p) { " + body + " }\n");
    compile::CompileRequest r;
    r.source = source;
    r.entries = {"k"};
    return r;
}

/// The message of the environment Error that opening a cache in `dir` throws; a failure when none.
std::string refusal(const fs::path& dir)
{
    try {
        const compile::CompileCache cache(dir);
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::environment);
        return e.what();
    }
    ADD_FAILURE() << dir << " was accepted";
    return {};
}

/// The message tells which folder, what is wrong and what to do.
void expect_actionable(const std::string& message, const fs::path& dir, const std::string& problem)
{
    EXPECT_NE(message.find(dir.string()), std::string::npos) << message;
    EXPECT_NE(message.find(problem), std::string::npos) << message;
    EXPECT_NE(message.find("--cache-dir"), std::string::npos) << message;
    EXPECT_NE(message.find("--no-cache"), std::string::npos) << message;
}

/// Sets or unsets an environment variable for one scope.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value) : name_(name)
    {
        if (const char* old = std::getenv(name)) old_ = old;
        if (value)
            ::setenv(name, value, 1);
        else
            ::unsetenv(name);
    }
    ~ScopedEnv()
    {
        if (old_)
            ::setenv(name_, old_->c_str(), 1);
        else
            ::unsetenv(name_);
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    const char* name_;
    std::optional<std::string> old_;
};

} // namespace

TEST(CompileCache, RefusesAFolderWritableByOthers)
{
    const TempDir scratch{"harness-cache-test"};
    const fs::path cache = scratch.path / "cache";
    fs::create_directory(cache);
    ASSERT_EQ(::chmod(cache.c_str(), 0777), 0);
    expect_actionable(refusal(cache), cache, "writable by group and others (mode 0777)");
    EXPECT_THROW(compile::CompileCache::check_folder(cache), Error);

    ASSERT_EQ(::chmod(cache.c_str(), 0702), 0);
    expect_actionable(refusal(cache), cache, "writable by others (mode 0702)");
    ASSERT_EQ(::chmod(cache.c_str(), 0770), 0);
    expect_actionable(refusal(cache), cache, "writable by group (mode 0770)");
    ASSERT_EQ(::chmod(cache.c_str(), 0755), 0);
    EXPECT_NO_THROW(compile::CompileCache{cache});
}

TEST(CompileCache, RefusesAFolderOwnedByAnotherUser)
{
    const TempDir scratch{"harness-cache-test"};
    const fs::path cache = scratch.path / "cache";
    fs::create_directory(cache);
    ASSERT_EQ(::chmod(cache.c_str(), 0700), 0);
    if (::chown(cache.c_str(), other_uid, other_uid) != 0)
        GTEST_SKIP() << "cannot give a folder to uid " << other_uid << " (" << std::strerror(errno)
                     << "); only root can";
    expect_actionable(refusal(cache), cache,
                      fmt::format("owned by uid {}, not by you (uid {})", other_uid, ::geteuid()));
}

TEST(CompileCache, RefusesALinkToAFolderWritableByOthers)
{
    const TempDir scratch{"harness-cache-test"};
    const fs::path& dir = scratch.path;
    fs::create_directory(dir / "shared");
    ASSERT_EQ(::chmod((dir / "shared").c_str(), 0777), 0);
    fs::create_directory_symlink(dir / "shared", dir / "cache");
    expect_actionable(refusal(dir / "cache"), dir / "cache", "writable by group and others (mode 0777)");
    // A trailing separator would make lstat() follow the link; the target is checked all the same.
    const std::string message = refusal(dir.string() + "/cache/");
    EXPECT_NE(message.find("mode 0777"), std::string::npos) << message;
}

TEST(CompileCache, AcceptsALinkToAPrivateFolderOfTheUser)
{
    const TempDir scratch{"harness-cache-test"};
    const fs::path& dir = scratch.path;
    fs::create_directory(dir / "mine");
    ASSERT_EQ(::chmod((dir / "mine").c_str(), 0700), 0);
    fs::create_directory_symlink(dir / "mine", dir / "cache");
    const compile::CompileCache cache(dir / "cache");
    const auto module = compile::compile(tiny_kernel(dir), &cache);
    EXPECT_EQ(read_file(dir / "mine" / (module.cache_key + ".cubin")), module.cubin);
}

// Whoever owns a link chooses where the cache goes, even to a private folder of the user's.
TEST(CompileCache, RefusesALinkOwnedByAnotherUser)
{
    const TempDir scratch{"harness-cache-test"};
    const fs::path& dir = scratch.path;
    fs::create_directory(dir / "mine");
    ASSERT_EQ(::chmod((dir / "mine").c_str(), 0700), 0);
    fs::create_directory_symlink(dir / "mine", dir / "cache");
    if (::lchown((dir / "cache").c_str(), other_uid, other_uid) != 0)
        GTEST_SKIP() << "cannot give a link to uid " << other_uid << " (" << std::strerror(errno) << "); only root can";
    expect_actionable(refusal(dir / "cache"), dir / "cache", fmt::format("link owned by uid {}", other_uid));
}

TEST(CompileCache, CreatesAMissingFolderPrivate)
{
    const TempDir scratch{"harness-cache-test"};
    const fs::path cache = scratch.path / "a" / "b" / "cache";
    const compile::CompileCache opened(cache);
    struct stat st {};
    ASSERT_EQ(::lstat(cache.c_str(), &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    EXPECT_EQ(st.st_uid, ::geteuid());
    EXPECT_EQ(st.st_mode & 077, 0u) << fmt::format("mode {:04o}", st.st_mode & 07777);
}

TEST(CompileCache, FallbackFolderIsPerUser)
{
    const TempDir scratch{"harness-cache-test"};
    const fs::path& tmp = scratch.path;
    const ScopedEnv no_dir("HARNESS_CACHE_DIR", nullptr), no_xdg("XDG_CACHE_HOME", nullptr), no_home("HOME", nullptr),
        tmpdir("TMPDIR", tmp.c_str());
    EXPECT_EQ(compile::CompileCache::default_dir(), tmp / ("harness-cache-" + std::to_string(::geteuid())));
}

// A folder that cannot be created (here: below a file) leaves compiling working, uncached.
TEST(CompileCache, AFolderThatCannotBeCreatedOnlyMisses)
{
    const TempDir scratch{"harness-cache-test"};
    const fs::path& dir = scratch.path;
    write_file(dir / "plain", "a file");
    const compile::CompileCache cache(dir / "plain" / "cache");
    const auto request = tiny_kernel(dir);
    EXPECT_FALSE(compile::compile(request, &cache).from_cache);
    EXPECT_FALSE(compile::compile(request, &cache).from_cache);
    EXPECT_EQ(read_file(dir / "plain"), "a file");
}

// run, check and baseline update refuse the folder before they load or compile anything.
TEST(CompileCache, CommandsRefuseAnUnsafeFolderFirst)
{
    const TempDir scratch{"harness-cache-test"};
    const fs::path& dir = scratch.path;
    const fs::path cache = dir / "cache";
    fs::create_directory(cache);
    ASSERT_EQ(::chmod(cache.c_str(), 0777), 0);
    const std::string suite = (repo_root() / "tests" / "suites" / "register_cliff.yaml").string();
    const std::string out = (dir / "out").string();
    const std::vector<std::vector<std::string>> commands = {
        {"run", suite, "--static", "--out", out, "--cache-dir", cache.string()},
        {"check", suite, "--cache-dir", cache.string()},
        {"baseline", "update", suite, "--static", "--baseline-dir", out, "--cache-dir", cache.string()},
    };
    for (const auto& args : commands) {
        try {
            cli::dispatch(args);
            ADD_FAILURE() << args[0] << " accepted " << cache;
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::environment) << args[0];
            EXPECT_NE(std::string(e.what()).find("mode 0777"), std::string::npos) << args[0] << ": " << e.what();
        }
    }
    EXPECT_FALSE(fs::exists(out));
    EXPECT_TRUE(fs::is_empty(cache));
    EXPECT_EQ(cli::dispatch({"check", suite, "--cache-dir", cache.string(), "--no-cache"}), 0);
}

// Links planted where an entry or a temporary file would go are never followed: the cache neither
// returns what they point at nor writes through them.
TEST(CompileCache, PlantedLinksAreNeitherReadNorWrittenThrough)
{
    const TempDir scratch{"harness-cache-test"};
    const fs::path& dir = scratch.path;
    const compile::CompileCache cache(dir / "cache");
    const auto request = tiny_kernel(dir);
    const std::string key = compile::cache_key(request);

    // The victim looks like a valid entry, so only the refusal to follow links keeps it out.
    const std::string victim_cubin = "\x7f"
                                     "ELF planted cubin";
    const nlohmann::json victim_meta = {{"format", 2},
                                        {"key", key},
                                        {"cubin_xxh3_128", xxh3_128_hex(victim_cubin)},
                                        {"log", "planted"},
                                        {"lowered_names", {{"k", "planted_k"}}}};
    write_file(dir / "victim.cubin", victim_cubin);
    write_file(dir / "victim.json", victim_meta.dump());
    std::vector<std::string> planted = {key + ".cubin", key + ".json"};
    for (const std::string& file : {key + ".cubin", key + ".json"})
        for (const std::string& suffix :
             std::vector<std::string>{".tmp", ".tmp.0", ".tmp." + std::to_string(::getpid())})
            planted.push_back(file + suffix);
    for (const auto& name : planted)
        fs::create_symlink(dir / (name.find(".json") != std::string::npos ? "victim.json" : "victim.cubin"),
                           dir / "cache" / name);

    EXPECT_FALSE(cache.load(key).has_value());
    const auto module = compile::compile(request, &cache);
    EXPECT_FALSE(module.from_cache);
    EXPECT_NE(module.cubin, victim_cubin);
    EXPECT_EQ(module.lowered_names.at("k"), "k");

    EXPECT_EQ(read_file(dir / "victim.cubin"), victim_cubin);
    EXPECT_EQ(read_file(dir / "victim.json"), victim_meta.dump());
    EXPECT_FALSE(fs::is_symlink(dir / "cache" / (key + ".cubin")));
    EXPECT_EQ(read_file(dir / "cache" / (key + ".cubin")), module.cubin);
    EXPECT_TRUE(compile::compile(request, &cache).from_cache);
}

// Even a link to the user's own, intact entry is a miss: the cache never follows links.
TEST(CompileCache, AnEntryReachedThroughALinkIsAMiss)
{
    const TempDir scratch{"harness-cache-test"};
    const fs::path& dir = scratch.path;
    const compile::CompileCache cache(dir / "cache");
    const auto module = compile::compile(tiny_kernel(dir), &cache);
    const fs::path cubin = dir / "cache" / (module.cache_key + ".cubin");
    ASSERT_TRUE(cache.load(module.cache_key).has_value());
    fs::rename(cubin, dir / "moved.cubin");
    fs::create_symlink(dir / "moved.cubin", cubin);
    EXPECT_FALSE(cache.load(module.cache_key).has_value());
}

TEST(CompileCache, AnEntryOwnedByAnotherUserIsAMiss)
{
    const TempDir scratch{"harness-cache-test"};
    const fs::path& dir = scratch.path;
    const compile::CompileCache cache(dir / "cache");
    const auto request = tiny_kernel(dir);
    const auto module = compile::compile(request, &cache);
    const fs::path cubin = dir / "cache" / (module.cache_key + ".cubin");
    if (::chown(cubin.c_str(), other_uid, other_uid) != 0)
        GTEST_SKIP() << "cannot give a file to uid " << other_uid << " (" << std::strerror(errno) << "); only root can";
    EXPECT_FALSE(cache.load(module.cache_key).has_value());
    EXPECT_FALSE(compile::compile(request, &cache).from_cache);
    struct stat st {};
    ASSERT_EQ(::stat(cubin.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, ::geteuid()); // rewritten by the user
}

// A cubin swapped under an existing key (metadata kept) is recompiled, and the entry rewritten.
TEST(CompileCache, ASwappedCubinIsRecompiledAndTheEntryRewritten)
{
    const TempDir scratch{"harness-cache-test"};
    const fs::path& dir = scratch.path;
    const compile::CompileCache cache(dir / "cache");
    const auto request = tiny_kernel(dir);
    const auto first = compile::compile(request, &cache);
    const fs::path cubin = dir / "cache" / (first.cache_key + ".cubin");
    const fs::path meta = dir / "cache" / (first.cache_key + ".json");

    const auto other = compile::compile(tiny_kernel(dir, "p[0] += 1.0f;"));
    ASSERT_NE(other.cubin, first.cubin);
    write_file(cubin, other.cubin);
    const auto after_swap = compile::compile(request, &cache);
    EXPECT_FALSE(after_swap.from_cache);
    EXPECT_EQ(after_swap.cubin, first.cubin);
    EXPECT_EQ(read_file(cubin), first.cubin);
    EXPECT_EQ(nlohmann::json::parse(read_file(meta)).at("cubin_xxh3_128"), xxh3_128_hex(first.cubin));
    EXPECT_TRUE(compile::compile(request, &cache).from_cache);

    std::string damaged = first.cubin;
    damaged[damaged.size() / 2] ^= 1;
    write_file(cubin, damaged);
    EXPECT_FALSE(compile::compile(request, &cache).from_cache);
    EXPECT_EQ(read_file(cubin), first.cubin);
}

// Entries written before the metadata held a hash are misses, and are rewritten with one.
TEST(CompileCache, AnEntryWithoutAHashIsAMiss)
{
    const TempDir scratch{"harness-cache-test"};
    const fs::path& dir = scratch.path;
    const compile::CompileCache cache(dir / "cache");
    const auto request = tiny_kernel(dir);
    const auto first = compile::compile(request, &cache);
    const fs::path meta = dir / "cache" / (first.cache_key + ".json");
    write_file(meta, nlohmann::json{{"log", first.log}, {"lowered_names", first.lowered_names}}.dump());
    EXPECT_FALSE(cache.load(first.cache_key).has_value());
    EXPECT_FALSE(compile::compile(request, &cache).from_cache);
    EXPECT_EQ(nlohmann::json::parse(read_file(meta)).at("cubin_xxh3_128"), xxh3_128_hex(first.cubin));
    EXPECT_TRUE(compile::compile(request, &cache).from_cache);
}

// An intact entry copied under another variant's key is not that variant's module.
TEST(CompileCache, AnEntryCopiedUnderAnotherKeyIsAMiss)
{
    const TempDir scratch{"harness-cache-test"};
    const fs::path& dir = scratch.path;
    const compile::CompileCache cache(dir / "cache");
    const auto planted = compile::compile(tiny_kernel(dir, "p[0] += 1.0f;"), &cache);
    const auto request = tiny_kernel(dir);
    const std::string key = compile::cache_key(request);
    ASSERT_NE(key, planted.cache_key);
    for (const std::string extension : {".cubin", ".json"})
        fs::copy_file(dir / "cache" / (planted.cache_key + extension), dir / "cache" / (key + extension));
    EXPECT_FALSE(cache.load(key).has_value());
    const auto module = compile::compile(request, &cache);
    EXPECT_FALSE(module.from_cache);
    EXPECT_NE(module.cubin, planted.cubin);
}

} // namespace compile_cache_test
