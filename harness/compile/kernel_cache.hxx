#pragma once
// The on-disk cubin cache: a folder private to the user, of entries named by cache key, each
// checked against the hash recorded with it before it is used.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace harness::compile {

/// A file a compilation read, and the hash of its content when it was read.
struct SourceFile {
    std::filesystem::path path;
    std::string xxh3_128; ///< of the content, in hex
    bool operator==(const SourceFile&) const = default;
};

/// `files` with the hash of each one's content now; a file that cannot be read gets an empty hash.
std::vector<SourceFile> hashed_now(std::vector<SourceFile> files);

/// A compiled cubin and the mangled name of every requested entry point.
struct CompiledModule {
    std::string cubin;
    /// NVRTC's PTX of the same compilation, which the access model reads (analysis/access_model.hxx);
    /// empty for a module built by the project's compiler without PTX.
    std::string ptx;
    /// Why a module file's PTX could not be read (a compressed entry without libzstd); empty otherwise.
    std::string no_ptx;
    std::string log;                                  ///< NVRTC's log, including ptxas' resource report
    std::map<std::string, std::string> lowered_names; ///< entry expression -> symbol in the cubin
    std::string cache_key;
    bool from_cache = false;
    /// What the compiler read: the source, its project headers and the toolkit's version headers,
    /// each with the hash of its content before compiling, confirmed after. Empty when a file
    /// changed meanwhile: such a module is used once and never cached.
    std::vector<SourceFile> sources;
};

/// A folder of cubins named by cache key. Only the user may write to it: anyone else could plant a
/// kernel that a run would then measure and record. Writes are atomic, so concurrent runs do not
/// corrupt it; an entry that is not a regular file of the user's, whose cubin does not match the
/// hash in its metadata, or one of whose source files is gone or reads differently now than when
/// it was compiled, is a miss and is recompiled.
class CompileCache {
public:
    /// Opens `dir`, creating it (mode 0700) when missing. Throws Error (environment) when it exists
    /// but is not private: see check_folder(). A folder that cannot be created (a read-only home)
    /// is no error; the cache then only misses.
    explicit CompileCache(std::filesystem::path dir);

    std::optional<CompiledModule> load(const std::string& key) const;
    /// Records `module` under its cache key, unless it has no sources; a failure to write is ignored
    /// (the cache is an optimisation).
    void store(const CompiledModule& module) const;
    const std::filesystem::path& dir() const { return dir_; }

    /// Throws Error (environment) when `dir` exists and is not a folder owned by the current user
    /// that nobody else may write to (after following a link of the user's); a missing folder passes.
    static void check_folder(const std::filesystem::path& dir);

    /// $HARNESS_CACHE_DIR, else $XDG_CACHE_HOME/harness, else ~/.cache/harness, else
    /// $TMPDIR/harness-cache-<uid>.
    static std::filesystem::path default_dir();

private:
    std::filesystem::path dir_;
};

} // namespace harness::compile
