#include "harness/compile/module_file.hxx"

#include "harness/compile/cubin_info.hxx"
#include "harness/core/error.hxx"
#include "harness/core/input_files.hxx"
#include "harness/core/readable_path.hxx"
#include "harness/core/sha256.hxx"
#include "harness/core/text.hxx"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <dlfcn.h>
#include <fmt/format.h>
#include <memory>
#include <nvJitLink.h>
#include <optional>
#include <xxhash.h>

namespace harness::compile {

namespace fs = std::filesystem;

namespace {

constexpr std::uint32_t fatbin_magic = 0xBA55ED50;
constexpr std::size_t max_module_bytes = 512 * 1024 * 1024;

template <typename T> std::optional<T> read_at(std::string_view bytes, std::size_t offset)
{
    if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return std::nullopt;
    T value;
    std::memcpy(&value, bytes.data() + offset, sizeof(T));
    return value;
}

[[noreturn]] void bad(const fs::path& file, const std::string& message)
{
    throw Error(ErrorKind::bad_input, file.string() + ": " + message);
}

/// The kernels of `cubin`, held in or made from `file`; a malformed one is bad input naming the file.
CubinInfo cubin_info_of(std::string_view cubin, const fs::path& file)
{
    try {
        return read_cubin_info(cubin);
    } catch (const CubinError& e) {
        bad(file, e.what());
    }
}

/// How a fatbin entry's payload is stored.
enum class Compression { none, lz4, zstd };

/// One entry of a fatbin container.
struct FatbinEntry {
    bool elf = false; ///< machine code; else PTX
    int sm = 0;       ///< 90 for sm_90 / compute_90
    Compression compression = Compression::none;
    std::string_view payload;            ///< as stored (compressed: the compressed bytes only)
    std::uint64_t uncompressed_size = 0; ///< of a compressed payload
};

// The fatbin container, as nvcc 13.0 writes it (read from its output): a 16-byte header (magic,
// version, header size at 6, size of the entries at 8), then entries, each a header followed by its
// payload. An entry's header holds its kind at 0 (1 PTX, 2 ELF), its own size at 4, the payload's
// size at 8 (padded to 8 bytes), the compressed size at 16, the architecture at 28, flags at 40 and
// the uncompressed size at 56. Flag 0x2000 marks an LZ4 block (`nvcc --compress-mode=speed`), 0x8000
// a zstd frame (the default mode). nvcc 13.0 compresses PTX by default and machine code with
// `-Xfatbin -compress-all` or `-G`.
constexpr std::uint64_t flag_lz4 = 0x2000;
constexpr std::uint64_t flag_zstd = 0x8000;

std::vector<FatbinEntry> fatbin_entries(std::string_view bytes, const fs::path& file)
{
    const auto header_size = read_at<std::uint16_t>(bytes, 6);
    const auto total = read_at<std::uint64_t>(bytes, 8);
    if (!header_size || !total || *header_size < 16 || *header_size > bytes.size() ||
        *total > bytes.size() - *header_size)
        bad(file, "a truncated or malformed fatbin");
    std::vector<FatbinEntry> entries;
    std::size_t at = *header_size;
    const std::size_t end = *header_size + *total;
    while (at < end) {
        const auto kind = read_at<std::uint16_t>(bytes, at);
        const auto entry_header = read_at<std::uint32_t>(bytes, at + 4);
        const auto size = read_at<std::uint64_t>(bytes, at + 8);
        const auto compressed_size = read_at<std::uint32_t>(bytes, at + 16);
        const auto sm = read_at<std::uint32_t>(bytes, at + 28);
        const auto flags = read_at<std::uint64_t>(bytes, at + 40);
        if (!kind || !entry_header || !size || !compressed_size || !sm || !flags || *entry_header < 48 ||
            *entry_header > end - at || *size > end - at - *entry_header)
            bad(file, fmt::format("a malformed fatbin entry at byte {}", at));
        FatbinEntry entry{*kind == 2, static_cast<int>(*sm), Compression::none,
                          bytes.substr(at + *entry_header, *size)};
        if (*flags & (flag_lz4 | flag_zstd)) {
            entry.compression = *flags & flag_zstd ? Compression::zstd : Compression::lz4;
            const auto uncompressed = read_at<std::uint64_t>(bytes, at + 56);
            if (*entry_header < 64 || !uncompressed || *compressed_size == 0 || *compressed_size > *size)
                bad(file, fmt::format("a malformed compressed fatbin entry at byte {}", at));
            entry.payload = entry.payload.substr(0, *compressed_size);
            entry.uncompressed_size = *uncompressed;
        }
        if (*kind == 1 || *kind == 2) entries.push_back(entry);
        at += *entry_header + *size;
    }
    return entries;
}

/// Decodes an LZ4 block (the format of lz4's LZ4_compress_default): sequences of literals and a
/// back-reference. Every read and copy is checked, so a corrupt block is an error, never a crash.
std::optional<std::string> lz4_block(std::string_view in, std::size_t size)
{
    std::string out;
    out.reserve(size);
    std::size_t at = 0;
    auto length = [&](std::size_t n) -> std::optional<std::size_t> {
        if (n != 15) return n;
        for (;;) {
            if (at >= in.size()) return std::nullopt;
            const auto byte = static_cast<unsigned char>(in[at++]);
            n += byte;
            if (n > size) return std::nullopt;
            if (byte != 255) return n;
        }
    };
    while (at < in.size()) {
        const auto token = static_cast<unsigned char>(in[at++]);
        const auto literals = length(token >> 4);
        if (!literals || *literals > in.size() - at || *literals > size - out.size()) return std::nullopt;
        out.append(in.substr(at, *literals));
        at += *literals;
        if (at == in.size()) break; // the last sequence has literals only
        if (in.size() - at < 2) return std::nullopt;
        const std::size_t offset = static_cast<unsigned char>(in[at]) | static_cast<unsigned char>(in[at + 1]) << 8;
        at += 2;
        const auto match = length(token & 15);
        if (!match || offset == 0 || offset > out.size() || *match + 4 > size - out.size()) return std::nullopt;
        for (std::size_t i = 0, from = out.size() - offset; i < *match + 4; ++i) out.push_back(out[from + i]);
    }
    if (out.size() != size) return std::nullopt;
    return out;
}

/// Decodes a zstd frame with the system's libzstd, loaded when first needed (the tool starts
/// without it). Throws Error (environment) when it cannot be loaded.
using ZstdDecompress = std::size_t (*)(void*, std::size_t, const void*, std::size_t);
using ZstdIsError = unsigned (*)(std::size_t);

/// libzstd's two functions, loaded on the first call (null when it cannot be loaded).
const std::pair<ZstdDecompress, ZstdIsError>& zstd_library()
{
    static const auto library = []() -> std::pair<ZstdDecompress, ZstdIsError> {
        void* so = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!so) return {nullptr, nullptr};
        return {reinterpret_cast<ZstdDecompress>(dlsym(so, "ZSTD_decompress")),
                reinterpret_cast<ZstdIsError>(dlsym(so, "ZSTD_isError"))};
    }();
    return library;
}

std::optional<std::string> zstd_frame(std::string_view in, std::size_t size, const fs::path& file)
{
    const auto& library = zstd_library();
    if (!library.first || !library.second)
        throw Error(ErrorKind::environment,
                    file.string() + ": its code is zstd-compressed and libzstd.so.1 cannot be loaded; install "
                                    "libzstd, or build the module with `nvcc --no-compress`");
    std::string out(size, '\0');
    const std::size_t written = library.first(out.data(), out.size(), in.data(), in.size());
    if (library.second(written) || written != size) return std::nullopt;
    return out;
}

/// An entry's payload as nvcc compiled it, decompressed where it was stored compressed.
std::string payload_of(const FatbinEntry& entry, const fs::path& file)
{
    if (entry.compression == Compression::none) return std::string(entry.payload);
    const std::string what = fmt::format("{}_{}", entry.elf ? "sm" : "compute", entry.sm);
    if (entry.uncompressed_size > max_module_bytes)
        bad(file, fmt::format("its {} entry claims {} bytes uncompressed, more than a module may hold", what,
                              entry.uncompressed_size));
    const auto size = static_cast<std::size_t>(entry.uncompressed_size);
    const auto out =
        entry.compression == Compression::lz4 ? lz4_block(entry.payload, size) : zstd_frame(entry.payload, size, file);
    if (!out)
        bad(file, fmt::format("its {} entry does not decompress ({}, {} bytes expected)", what,
                              entry.compression == Compression::lz4 ? "LZ4" : "zstd", size));
    return *out;
}

int sm_number(const std::string& arch)
{
    int sm = 0;
    for (char c : arch)
        if (c >= '0' && c <= '9') sm = sm * 10 + (c - '0');
    return sm;
}

/// Compiles PTX for `arch` with line information, through nvJitLink.
std::string compile_ptx(std::string_view ptx, const fs::path& file, const std::string& arch, std::string* log)
{
    const std::string arch_option = "-arch=" + arch;
    // -v: ptxas' resource report, the only statement of spill bytes.
    const char* options[] = {arch_option.c_str(), "-lineinfo", "-Xptxas=-v"};
    nvJitLinkHandle handle = nullptr;
    if (nvJitLinkCreate(&handle, 3, options) != NVJITLINK_SUCCESS)
        throw Error(ErrorKind::internal, file.string() + ": nvJitLinkCreate failed for " + arch);
    std::unique_ptr<nvJitLinkHandle, void (*)(nvJitLinkHandle*)> owner(&handle,
                                                                       [](nvJitLinkHandle* h) { nvJitLinkDestroy(h); });
    // nvJitLink reads PTX up to its terminating zero, and writes past the end of its copy of text
    // whose last line has no line break (nvJitLink 13.0: 2 bytes), as a fatbin's PTX entry cut short
    // or a hand-edited .ptx file may be.
    std::string text(ptx);
    if (text.empty() || text.back() != '\n') text += '\n';
    const bool ok = nvJitLinkAddData(handle, NVJITLINK_INPUT_PTX, text.c_str(), text.size() + 1,
                                     file.filename().c_str()) == NVJITLINK_SUCCESS &&
                    nvJitLinkComplete(handle) == NVJITLINK_SUCCESS;
    if (!ok) {
        std::size_t size = 0;
        nvJitLinkGetErrorLogSize(handle, &size);
        std::string log(size, '\0');
        if (size > 0) nvJitLinkGetErrorLog(handle, log.data());
        bad(file, fmt::format("its PTX does not compile for {}:\n{}", arch, log.c_str()));
    }
    if (log) {
        std::size_t log_size = 0;
        nvJitLinkGetInfoLogSize(handle, &log_size);
        log->assign(log_size, '\0');
        if (log_size > 0) nvJitLinkGetInfoLog(handle, log->data());
        while (!log->empty() && (log->back() == '\0' || log->back() == '\n')) log->pop_back();
    }
    std::size_t size = 0;
    nvJitLinkGetLinkedCubinSize(handle, &size);
    std::string cubin(size, '\0');
    nvJitLinkGetLinkedCubin(handle, cubin.data());
    return cubin;
}

/// A C++ name as written (`scale< 256 >`) or as demangled (`scale<256u>`), in one form for
/// comparing: without spaces, and without the suffixes (u, l, ul, ll, ...) the demangler gives
/// integer template arguments of unsigned and long types.
std::string comparable(std::string_view name)
{
    std::string out;
    for (char c : name)
        if (c != ' ') out += c;
    std::string cleaned;
    for (std::size_t i = 0; i < out.size();) {
        const bool number_starts =
            std::isdigit(static_cast<unsigned char>(out[i])) && (i == 0 || !is_identifier_char(out[i - 1]));
        if (!number_starts) {
            cleaned += out[i++];
            continue;
        }
        std::size_t end = i;
        while (end < out.size() && std::isdigit(static_cast<unsigned char>(out[end]))) ++end;
        std::size_t suffix = end;
        while (suffix < out.size() && std::string_view("uUlL").find(out[suffix]) != std::string_view::npos) ++suffix;
        cleaned.append(out, i, end - i);
        // Only a whole suffix goes: 0x1F or 2e5 stay as written.
        i = suffix < out.size() && is_identifier_char(out[suffix]) ? end : suffix;
    }
    return cleaned;
}

/// The name without its template arguments: `scale` for `scale<256>`.
std::string_view base_of(std::string_view name)
{
    return name.substr(0, name.find('<'));
}

} // namespace

void load_module_decompressor()
{
    zstd_library();
}

ModuleKind module_kind(std::string_view bytes, const fs::path& file)
{
    if (bytes.starts_with("\x7f"
                          "ELF"))
        return ModuleKind::cubin;
    if (read_at<std::uint32_t>(bytes, 0) == fatbin_magic) return ModuleKind::fatbin;
    if (bytes.find(".version") != std::string_view::npos && bytes.find(".target") != std::string_view::npos &&
        bytes.find('\0') == std::string_view::npos)
        return ModuleKind::ptx;
    bad(file, "not a cubin, fatbin or PTX file");
}

std::vector<std::string> module_archs(std::string_view bytes, const fs::path& file)
{
    std::vector<std::string> archs;
    switch (module_kind(bytes, file)) {
    case ModuleKind::cubin: archs.push_back(fmt::format("sm_{}", cubin_info_of(bytes, file).sm_version)); break;
    case ModuleKind::fatbin:
        for (const auto& e : fatbin_entries(bytes, file))
            archs.push_back(fmt::format("{}_{}", e.elf ? "sm" : "compute", e.sm));
        break;
    case ModuleKind::ptx: {
        // ".target sm_90" (or sm_90a): PTX for that virtual architecture.
        const auto at = bytes.find(".target sm_");
        std::string sm;
        for (std::size_t i = at == std::string_view::npos ? bytes.size() : at + 11;
             i < bytes.size() && std::isalnum(static_cast<unsigned char>(bytes[i])); ++i)
            sm += bytes[i];
        archs.push_back("compute_" + (sm.empty() ? std::string("?") : sm));
        break;
    }
    }
    return archs;
}

std::string cubin_for_arch(std::string_view bytes, const fs::path& file, const std::string& arch, std::string* log)
{
    const int sm = sm_number(arch);
    switch (module_kind(bytes, file)) {
    case ModuleKind::cubin: {
        const int held = cubin_info_of(bytes, file).sm_version;
        if (held != sm) bad(file, fmt::format("holds sm_{} code; the run needs {}", held, arch));
        return std::string(bytes);
    }
    case ModuleKind::ptx: return compile_ptx(bytes, file, arch, log);
    case ModuleKind::fatbin: {
        const auto entries = fatbin_entries(bytes, file);
        const FatbinEntry* ptx = nullptr;
        for (const auto& e : entries) {
            if (e.elf && e.sm == sm) return payload_of(e, file);
            if (!e.elf && e.sm <= sm && (!ptx || e.sm > ptx->sm)) ptx = &e;
        }
        if (ptx) {
            std::string text = payload_of(*ptx, file);
            if (const auto zero = text.find('\0'); zero != std::string::npos) text.resize(zero);
            return compile_ptx(text, file, arch, log);
        }
        bad(file, fmt::format("holds {}, nothing {} can run", join(module_archs(bytes, file)), arch));
    }
    }
    bad(file, "unknown module kind");
}

std::string module_ptx(std::string_view bytes, const fs::path& file, const std::string& arch)
{
    const int sm = sm_number(arch);
    switch (module_kind(bytes, file)) {
    case ModuleKind::cubin: return "";
    case ModuleKind::ptx: return std::string(bytes);
    case ModuleKind::fatbin: {
        const auto entries = fatbin_entries(bytes, file);
        const FatbinEntry* ptx = nullptr;
        for (const auto& e : entries)
            if (!e.elf && e.sm <= sm && (!ptx || e.sm > ptx->sm)) ptx = &e;
        if (!ptx) return "";
        std::string text = payload_of(*ptx, file);
        if (const auto zero = text.find('\0'); zero != std::string::npos) text.resize(zero);
        return text;
    }
    }
    return "";
}

std::map<std::string, std::string> find_entries(std::string_view cubin, const std::vector<std::string>& entries,
                                                const fs::path& file)
{
    const CubinInfo info = cubin_info_of(cubin, file);
    std::vector<std::string> names; // as demangled, e.g. "scale<256>"
    for (const auto& k : info.kernels) names.push_back(kernel_name(k.name));
    std::map<std::string, std::string> lowered;
    for (const auto& entry : entries) {
        const std::string wanted = comparable(entry);
        // A symbol as it is, else the C++ name with its template arguments, else (for an entry
        // without template arguments) the one instantiation of a template of that name.
        std::vector<std::size_t> matches;
        const auto collect = [&](const auto& matching) {
            for (std::size_t i = 0; i < names.size() && matches.empty(); ++i)
                if (matching(i))
                    for (std::size_t j = i; j < names.size(); ++j) // overloads share a name
                        if (matching(j)) matches.push_back(j);
        };
        collect([&](std::size_t i) { return info.kernels[i].name == entry; });
        collect([&](std::size_t i) { return comparable(names[i]) == wanted; });
        if (entry.find('<') == std::string::npos)
            collect([&](std::size_t i) { return comparable(base_of(names[i])) == wanted; });
        if (matches.empty())
            bad(file, fmt::format("no kernel '{}' in the sm_{} code; it holds {}{}", entry, info.sm_version,
                                  names.empty() ? "no kernels" : join(names), did_you_mean(entry, names)));
        if (matches.size() > 1) {
            std::vector<std::string> which;
            for (const std::size_t i : matches) which.push_back(fmt::format("{} ({})", names[i], info.kernels[i].name));
            bad(file, fmt::format("entry '{}' names {} kernels in the sm_{} code: {}; write the template arguments, "
                                  "or the mangled name for an overload",
                                  entry, matches.size(), info.sm_version, join(which)));
        }
        lowered[entry] = info.kernels[matches.front()].name;
    }
    return lowered;
}

namespace {

/// The files a module's source manifest lists, as they resolve here, with the SHA-256 recorded for
/// each. The manifest is `<module>.sources.sha256`, written when the module is built by `sha256sum` or
/// `cmake -E sha256sum` (a digest, a space, a space or '*', a path); a relative path is taken from the
/// manifest's folder, so that the manifest stays true wherever the project's checkout lies.
std::map<fs::path, std::string> read_source_manifest(const fs::path& manifest)
{
    std::map<fs::path, std::string> recorded;
    const std::string text = read_input_file(manifest, 1024 * 1024, "source manifest");
    int number = 0;
    for (std::string_view rest = text; !rest.empty();) {
        const auto end = rest.find('\n');
        std::string_view line = rest.substr(0, end);
        rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
        ++number;
        if (line.ends_with('\r')) line.remove_suffix(1);
        if (line.empty()) continue;
        const bool digest = line.size() > 66 &&
                            std::all_of(line.begin(), line.begin() + 64,
                                        [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); }) &&
                            line[64] == ' ' && (line[65] == ' ' || line[65] == '*');
        if (!digest)
            throw InputError(manifest.string(), number, 1, "",
                             "not a line of `sha256sum` (64 hex digits, two spaces, the file)");
        std::string sha(line.substr(0, 64));
        std::transform(sha.begin(), sha.end(), sha.begin(),
                       [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
        const fs::path source = fs::path(line.substr(66));
        std::error_code ec;
        recorded[fs::weakly_canonical(source.is_absolute() ? source : manifest.parent_path() / source, ec)] = sha;
    }
    return recorded;
}

/// Refuses a module that no longer matches a source it was built from. The sources its manifest lists
/// are compared by content; the others, the files of `built_from` and those its line table names that
/// exist where it says (nvcc records absolute paths), by time: the module must not be older.
void check_not_stale(const fs::path& file, std::string_view cubin, const std::vector<fs::path>& built_from,
                     const std::vector<fs::path>& project_roots)
{
    std::error_code ec;
    const fs::path manifest = file.string() + ".sources.sha256";
    const auto recorded = fs::exists(manifest, ec) ? read_source_manifest(manifest) : std::map<fs::path, std::string>();
    // A file outside the project is refused unread and unlooked-at, with one message whether or not
    // it exists: the manifest is the project's to write, and its answers reach the reports.
    const auto verdict = [&](const fs::path& source) {
        return project_roots.empty() ? PathVerdict::readable : check_readable_file(source, {project_roots, {}}).verdict;
    };
    for (const auto& [source, sha] : recorded) {
        if (const PathVerdict v = verdict(source);
            v == PathVerdict::outside || v == PathVerdict::in_git_folder || v == PathVerdict::hard_link)
            throw Error(ErrorKind::bad_input,
                        fmt::format("{}, which {} lists, {}: a module's source manifest lists files of its project",
                                    source.string(), manifest.string(), path_refusal(v)));
        if (!fs::is_regular_file(source, ec))
            throw Error(ErrorKind::bad_input,
                        fmt::format("{}: no such file, which {} lists", source.string(), manifest.string()));
        if (sha256_hex(read_input_file(source, max_module_bytes, "module source")) != sha)
            throw Error(ErrorKind::bad_input,
                        fmt::format("{} changed since {} was built from it (its SHA-256 is not the one {} records): "
                                    "rebuild it (or give the variant `stale: allow`)",
                                    source.string(), file.string(), manifest.string()));
    }
    std::vector<fs::path> sources;
    for (const auto& source : built_from)
        if (!recorded.contains(fs::weakly_canonical(source, ec))) sources.push_back(source);
    for (const auto& recorded_path : line_table_files(cubin)) {
        const fs::path source = recorded_path;
        if (source.is_absolute() && verdict(source) == PathVerdict::readable && fs::is_regular_file(source, ec) &&
            !recorded.contains(fs::weakly_canonical(source, ec)))
            sources.push_back(source);
    }
    if (sources.empty()) return;
    const auto built = fs::last_write_time(file, ec);
    if (ec) throw Error(ErrorKind::bad_input, file.string() + ": cannot read the time it was built: " + ec.message());
    for (const auto& source : sources) {
        const auto changed = fs::last_write_time(source, ec);
        if (ec) throw Error(ErrorKind::bad_input, source.string() + ": cannot read the time it was changed");
        if (changed > built)
            throw Error(ErrorKind::bad_input,
                        fmt::format("{} is older than {}, which it was built from: rebuild it (or give the variant "
                                    "`stale: allow`)",
                                    file.string(), source.string()));
    }
}

} // namespace

CompiledModule load_module_file(const fs::path& file, const std::string& arch, const std::vector<std::string>& entries,
                                const std::vector<fs::path>& built_from, bool allow_stale,
                                const std::vector<fs::path>& project_roots)
{
    std::error_code ec;
    if (!fs::is_regular_file(file, ec))
        throw Error(ErrorKind::bad_input, file.string() + ": no such module file (has the project been built?)");
    const std::string bytes = read_input_file(file, max_module_bytes, "module file");
    CompiledModule module;
    module.cubin = cubin_for_arch(bytes, file, arch, &module.log);
    // What the static tier predicts accesses from (compile/predicted_accesses.hxx). PTX that cannot
    // be read (compressed, without libzstd) leaves the accesses unpredicted, never the module unrun.
    try {
        module.ptx = module_ptx(bytes, file, arch);
        // No PTX beside the machine code: the text a Triton or cuTile cubin keeps of itself.
        if (module.ptx.empty()) module.ptx = embedded_ptx(module.cubin);
    } catch (const Error& e) {
        module.no_ptx = e.what();
    }
    if (!allow_stale) check_not_stale(file, module.cubin, built_from, project_roots);
    module.lowered_names = find_entries(module.cubin, entries, file);
    const XXH128_hash_t hash = XXH3_128bits(bytes.data(), bytes.size());
    module.cache_key = fmt::format("{}-module-{:016x}{:016x}", arch, hash.high64, hash.low64);
    return module;
}

} // namespace harness::compile
