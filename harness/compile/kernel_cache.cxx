#include "harness/compile/kernel_cache.hxx"

#include "harness/core/atomic_file.hxx"
#include "harness/core/error.hxx"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

namespace harness::compile {

namespace fs = std::filesystem;

namespace {

/// Raised whenever the metadata changes: an entry of another format is a miss, and is rewritten.
constexpr int entry_format = 4;

std::string content_hash(std::string_view bytes)
{
    const XXH128_hash_t hash = XXH3_128bits(bytes.data(), bytes.size());
    return fmt::format("{:016x}{:016x}", hash.high64, hash.low64);
}

/// Keys name files in the cache folder: one with a separator, or a dot first, could name another.
bool is_plain_name(const std::string& key)
{
    return !key.empty() && key.front() != '.' && key.find('/') == std::string::npos;
}

/// "cache/" as "cache": lstat() follows a link named with a trailing separator.
fs::path without_trailing_separator(const fs::path& dir)
{
    return dir.has_filename() || !dir.has_parent_path() ? dir : dir.parent_path();
}

[[noreturn]] void refuse(const fs::path& dir, const std::string& problem)
{
    throw Error(ErrorKind::environment,
                fmt::format("compile cache folder {} is refused: it {}. Kernels planted there by another user would "
                            "be run and recorded as yours. Use --cache-dir DIR for a folder of your own, or "
                            "--no-cache, or make the folder yours and private (chown, chmod 0700).",
                            dir.string(), problem));
}

/// What makes a folder unfit to hold the user's cache, if anything.
std::optional<std::string> not_private(const struct stat& st)
{
    const uid_t me = ::geteuid();
    if (!S_ISDIR(st.st_mode)) return "is not a folder";
    if (st.st_uid != me) return fmt::format("is owned by uid {}, not by you (uid {})", st.st_uid, me);
    const bool by_group = (st.st_mode & S_IWGRP) != 0;
    const bool by_others = (st.st_mode & S_IWOTH) != 0;
    if (!by_group && !by_others) return std::nullopt;
    return fmt::format("is writable by {} (mode {:04o})",
                       by_group && by_others ? "group and others" : (by_group ? "group" : "others"),
                       st.st_mode & 07777);
}

/// Checks `dir` and creates it with mode 0700 when missing (its parents as usual); whether it is
/// now a folder the cache may write to. Throws as check_folder() does.
bool make_private_folder(const fs::path& dir)
{
    CompileCache::check_folder(dir);
    const fs::path folder = without_trailing_separator(dir);
    struct stat st {};
    if (::stat(folder.c_str(), &st) == 0) return S_ISDIR(st.st_mode);
    std::error_code ec;
    if (folder.has_parent_path()) fs::create_directories(folder.parent_path(), ec);
    if (::mkdir(folder.c_str(), 0700) == 0) return true;
    if (errno != EEXIST) return false;
    CompileCache::check_folder(dir); // another process created it meanwhile
    return true;
}

/// A cache file's content when it is a regular file of the user's, reached without following a link;
/// anything else (a link, a pipe, another user's file) is treated as absent.
std::optional<std::string> read_entry_file(const fs::path& path)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) return std::nullopt;
    std::string content;
    char buffer[1 << 16];
    for (;;) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return std::nullopt;
        if (n == 0) return content;
        content.append(buffer, static_cast<std::size_t>(n));
    }
}

nlohmann::json sources_json(const std::vector<SourceFile>& sources)
{
    nlohmann::json list = nlohmann::json::array();
    for (const auto& file : sources) list.push_back({{"path", file.path.string()}, {"xxh3_128", file.xxh3_128}});
    return list;
}

std::vector<SourceFile> sources_from_json(const nlohmann::json& list)
{
    std::vector<SourceFile> sources;
    for (const auto& file : list)
        sources.push_back({file.at("path").get<std::string>(), file.at("xxh3_128").get<std::string>()});
    return sources;
}

} // namespace

std::vector<SourceFile> hashed_now(std::vector<SourceFile> files)
{
    for (auto& file : files) {
        std::ifstream in(file.path, std::ios::binary);
        std::ostringstream content;
        content << in.rdbuf();
        file.xxh3_128 = in ? content_hash(content.str()) : std::string();
    }
    return files;
}

CompileCache::CompileCache(fs::path dir) : dir_(std::move(dir))
{
    make_private_folder(dir_);
}

void CompileCache::check_folder(const fs::path& dir)
{
    const fs::path folder = without_trailing_separator(dir);
    struct stat st {};
    // Missing or out of reach: nothing in it to trust, and creating it decides whether the cache works.
    if (::lstat(folder.c_str(), &st) != 0) return;
    if (!S_ISLNK(st.st_mode)) {
        if (auto problem = not_private(st)) refuse(dir, *problem);
        return;
    }
    // Whoever owns the link chooses where the cache goes.
    const uid_t me = ::geteuid();
    if (st.st_uid != me && st.st_uid != 0)
        refuse(dir, fmt::format("is a link owned by uid {}, not by you (uid {})", st.st_uid, me));
    std::error_code ec;
    const std::string target = fs::read_symlink(folder, ec).string();
    struct stat target_st {};
    if (::stat(folder.c_str(), &target_st) != 0)
        refuse(dir, fmt::format("is a link to {}, which cannot be reached ({})", target, std::strerror(errno)));
    if (auto problem = not_private(target_st)) refuse(dir, fmt::format("is a link to {}, which {}", target, *problem));
}

fs::path CompileCache::default_dir()
{
    if (const char* dir = std::getenv("HARNESS_CACHE_DIR"); dir && *dir) return dir;
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "harness";
    if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".cache" / "harness";
    return fs::temp_directory_path() / fmt::format("harness-cache-{}", ::geteuid());
}

std::optional<CompiledModule> CompileCache::load(const std::string& key) const
{
    if (!is_plain_name(key)) return std::nullopt;
    const auto meta = read_entry_file(dir_ / (key + ".json"));
    if (!meta) return std::nullopt;
    auto cubin = read_entry_file(dir_ / (key + ".cubin"));
    if (!cubin) return std::nullopt;
    auto ptx = read_entry_file(dir_ / (key + ".ptx"));
    if (!ptx) return std::nullopt;
    try {
        const auto json = nlohmann::json::parse(*meta);
        // An entry of an older format, copied from another key, or whose cubin was swapped or damaged.
        if (json.at("format").get<int>() != entry_format || json.at("key").get<std::string>() != key ||
            json.at("cubin_xxh3_128").get<std::string>() != content_hash(*cubin) ||
            json.at("ptx_xxh3_128").get<std::string>() != content_hash(*ptx))
            return std::nullopt;
        // The key holds the sources' contents as the scan found them; these are the files the
        // compiler read, each read again now: one changed or gone since means another module.
        auto sources = sources_from_json(json.at("sources"));
        if (sources.empty() || hashed_now(sources) != sources) return std::nullopt;
        CompiledModule m;
        m.sources = std::move(sources);
        m.cubin = std::move(*cubin);
        m.ptx = std::move(*ptx);
        m.log = json.at("log").get<std::string>();
        m.lowered_names = json.at("lowered_names").get<std::map<std::string, std::string>>();
        m.cache_key = key;
        m.from_cache = true;
        return m;
    } catch (const std::exception&) {
        return std::nullopt; // a damaged entry is recompiled and overwritten
    }
}

void CompileCache::store(const CompiledModule& module) const
{
    if (!is_plain_name(module.cache_key) || module.sources.empty()) return;
    try {
        // The folder may have been removed, or replaced, since the run began.
        if (!make_private_folder(dir_)) return;
        // A concurrent reader may see the new cubin beside the old metadata; the hash makes that a miss.
        write_file_atomically(dir_ / (module.cache_key + ".cubin"), module.cubin);
        write_file_atomically(dir_ / (module.cache_key + ".ptx"), module.ptx);
        const nlohmann::json meta = {{"format", entry_format},
                                     {"key", module.cache_key},
                                     {"cubin_xxh3_128", content_hash(module.cubin)},
                                     {"ptx_xxh3_128", content_hash(module.ptx)},
                                     {"log", module.log},
                                     {"lowered_names", module.lowered_names},
                                     {"sources", sources_json(module.sources)}};
        write_file_atomically(dir_ / (module.cache_key + ".json"), meta.dump());
    } catch (const std::exception&) {
        // The cache is an optimisation: a read-only home must not fail the run.
    }
}

} // namespace harness::compile
