#include "harness/compile/kernel_cache.hxx"

#include "harness/core/atomic_file.hxx"
#include "harness/core/error.hxx"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace harness::compile {

namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(ErrorKind::bad_input, "cannot read " + path.string());
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

} // namespace

fs::path CompileCache::default_dir()
{
    if (const char* dir = std::getenv("HARNESS_CACHE_DIR"); dir && *dir) return dir;
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "harness";
    if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".cache" / "harness";
    return fs::temp_directory_path() / "harness-cache";
}

std::optional<CompiledModule> CompileCache::load(const std::string& key) const
{
    const fs::path cubin = dir_ / (key + ".cubin");
    const fs::path meta = dir_ / (key + ".json");
    if (!fs::is_regular_file(cubin) || !fs::is_regular_file(meta)) return std::nullopt;
    try {
        const auto json = nlohmann::json::parse(read_file(meta));
        CompiledModule m;
        m.cubin = read_file(cubin);
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
    std::error_code ec;
    fs::create_directories(dir_, ec);
    if (ec) return; // the cache is an optimisation; a read-only home must not fail the run
    try {
        write_file_atomically(dir_ / (module.cache_key + ".cubin"), module.cubin);
        const nlohmann::json meta = {{"log", module.log}, {"lowered_names", module.lowered_names}};
        write_file_atomically(dir_ / (module.cache_key + ".json"), meta.dump());
    } catch (const std::exception&) {
    }
}

} // namespace harness::compile
