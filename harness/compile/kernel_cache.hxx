#pragma once
// The on-disk cubin cache: a folder of entries named by cache key.

#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace harness::compile {

/// A compiled cubin and the mangled name of every requested entry point.
struct CompiledModule {
    std::string cubin;
    std::string log;                                  ///< NVRTC's log, including ptxas' resource report
    std::map<std::string, std::string> lowered_names; ///< entry expression -> symbol in the cubin
    std::string cache_key;
    bool from_cache = false;
};

/// A folder of cubins named by cache key; writes are atomic so concurrent runs do not corrupt it.
class CompileCache {
  public:
    explicit CompileCache(std::filesystem::path dir) : dir_(std::move(dir)) {}
    std::optional<CompiledModule> load(const std::string& key) const;
    void store(const CompiledModule& module) const;
    const std::filesystem::path& dir() const { return dir_; }

    /// $HARNESS_CACHE_DIR, else $XDG_CACHE_HOME/harness, else ~/.cache/harness.
    static std::filesystem::path default_dir();

  private:
    std::filesystem::path dir_;
};

} // namespace harness::compile
