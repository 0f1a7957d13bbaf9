#include "harness/compile/module_file.hxx"

#include "harness/compile/cubin_info.hxx"
#include "harness/core/error.hxx"
#include "harness/core/input_files.hxx"
#include "harness/core/text.hxx"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
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

/// One entry of a fatbin container.
struct FatbinEntry {
    bool elf = false; ///< machine code; else PTX
    int sm = 0;       ///< 90 for sm_90 / compute_90
    bool compressed = false;
    std::string_view payload;
};

// The fatbin container: a 16-byte header (magic, version, header size, size of the entries), then
// entries, each a header (kind at 0: 1 PTX, 2 ELF; its own size at 4; payload size at 8; flags at
// 40, bit 0x2000 for compressed payloads; architecture at 28) followed by its payload.
std::vector<FatbinEntry> fatbin_entries(std::string_view bytes, const fs::path& file)
{
    const auto header_size = read_at<std::uint16_t>(bytes, 6);
    const auto total = read_at<std::uint64_t>(bytes, 8);
    if (!header_size || !total || *header_size < 16 || *total > bytes.size() - *header_size)
        bad(file, "a truncated or malformed fatbin");
    std::vector<FatbinEntry> entries;
    std::size_t at = *header_size;
    const std::size_t end = *header_size + *total;
    while (at < end) {
        const auto kind = read_at<std::uint16_t>(bytes, at);
        const auto entry_header = read_at<std::uint32_t>(bytes, at + 4);
        const auto size = read_at<std::uint64_t>(bytes, at + 8);
        const auto sm = read_at<std::uint32_t>(bytes, at + 28);
        const auto flags = read_at<std::uint64_t>(bytes, at + 40);
        if (!kind || !entry_header || !size || !sm || !flags || *entry_header < 48 || *entry_header > end - at ||
            *size > end - at - *entry_header)
            bad(file, fmt::format("a malformed fatbin entry at byte {}", at));
        if (*kind == 1 || *kind == 2)
            entries.push_back(
                {*kind == 2, static_cast<int>(*sm), (*flags & 0x2000) != 0, bytes.substr(at + *entry_header, *size)});
        at += *entry_header + *size;
    }
    return entries;
}

int sm_number(const std::string& arch)
{
    int sm = 0;
    for (char c : arch)
        if (c >= '0' && c <= '9') sm = sm * 10 + (c - '0');
    return sm;
}

/// Compiles PTX for `arch` with line information, through nvJitLink.
std::string compile_ptx(std::string_view ptx, const fs::path& file, const std::string& arch)
{
    const std::string arch_option = "-arch=" + arch;
    const char* options[] = {arch_option.c_str(), "-lineinfo"};
    nvJitLinkHandle handle = nullptr;
    if (nvJitLinkCreate(&handle, 2, options) != NVJITLINK_SUCCESS)
        throw Error(ErrorKind::internal, file.string() + ": nvJitLinkCreate failed for " + arch);
    std::unique_ptr<nvJitLinkHandle, void (*)(nvJitLinkHandle*)> owner(&handle,
                                                                       [](nvJitLinkHandle* h) { nvJitLinkDestroy(h); });
    const std::string text(ptx); // nvJitLink reads PTX up to its terminating zero
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
    std::size_t size = 0;
    nvJitLinkGetLinkedCubinSize(handle, &size);
    std::string cubin(size, '\0');
    nvJitLinkGetLinkedCubin(handle, cubin.data());
    return cubin;
}

/// The kernel's C++ name without spaces, for comparing with an entry as a suite writes it.
std::string comparable_name(const std::string& symbol)
{
    std::string out;
    for (char c : kernel_name(symbol))
        if (c != ' ') out += c;
    return out;
}

} // namespace

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
    case ModuleKind::cubin: archs.push_back(fmt::format("sm_{}", read_cubin_info(bytes).sm_version)); break;
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

std::string cubin_for_arch(std::string_view bytes, const fs::path& file, const std::string& arch)
{
    const int sm = sm_number(arch);
    switch (module_kind(bytes, file)) {
    case ModuleKind::cubin: {
        const int held = read_cubin_info(bytes).sm_version;
        if (held != sm) bad(file, fmt::format("holds sm_{} code; the run needs {}", held, arch));
        return std::string(bytes);
    }
    case ModuleKind::ptx: return compile_ptx(bytes, file, arch);
    case ModuleKind::fatbin: {
        const auto entries = fatbin_entries(bytes, file);
        const FatbinEntry* ptx = nullptr;
        for (const auto& e : entries) {
            if (e.elf && e.sm == sm) {
                if (e.compressed)
                    bad(file, fmt::format("its {} code is compressed; build the fatbin with nvcc "
                                          "-compress-mode=none (or --no-compress)",
                                          arch));
                return std::string(e.payload);
            }
            if (!e.elf && e.sm <= sm && !e.compressed && (!ptx || e.sm > ptx->sm)) ptx = &e;
        }
        if (ptx) {
            std::string_view text = ptx->payload;
            if (const auto zero = text.find('\0'); zero != std::string_view::npos) text = text.substr(0, zero);
            return compile_ptx(text, file, arch);
        }
        bad(file, fmt::format("holds {}, nothing {} can run", join(module_archs(bytes, file)), arch));
    }
    }
    bad(file, "unknown module kind");
}

std::map<std::string, std::string> find_entries(std::string_view cubin, const std::vector<std::string>& entries,
                                                const fs::path& file)
{
    const CubinInfo info = read_cubin_info(cubin);
    std::map<std::string, std::string> lowered;
    for (const auto& entry : entries) {
        std::string wanted;
        for (char c : entry)
            if (c != ' ') wanted += c;
        const KernelResources* found = nullptr;
        for (const auto& k : info.kernels)
            if (k.name == entry || comparable_name(k.name) == wanted) {
                found = &k;
                break;
            }
        if (!found) {
            std::vector<std::string> held;
            for (const auto& k : info.kernels) held.push_back(comparable_name(k.name));
            bad(file, fmt::format("no kernel '{}' in the sm_{} code; it holds {}", entry, info.sm_version,
                                  held.empty() ? "no kernels" : join(held)));
        }
        lowered[entry] = found->name;
    }
    return lowered;
}

CompiledModule load_module_file(const fs::path& file, const std::string& arch, const std::vector<std::string>& entries,
                                const std::vector<fs::path>& built_from)
{
    std::error_code ec;
    if (!fs::is_regular_file(file, ec))
        throw Error(ErrorKind::bad_input, file.string() + ": no such module file (has the project been built?)");
    const auto built = fs::last_write_time(file, ec);
    for (const auto& source : built_from) {
        const auto changed = fs::last_write_time(source, ec);
        if (ec) throw Error(ErrorKind::bad_input, source.string() + ": cannot read the time it was changed");
        if (changed > built)
            throw Error(ErrorKind::bad_input, fmt::format("{} is older than {}, which it is built from: rebuild it",
                                                          file.string(), source.string()));
    }
    const std::string bytes = read_input_file(file, max_module_bytes, "module file");
    CompiledModule module;
    module.cubin = cubin_for_arch(bytes, file, arch);
    module.lowered_names = find_entries(module.cubin, entries, file);
    const XXH128_hash_t hash = XXH3_128bits(bytes.data(), bytes.size());
    module.cache_key = fmt::format("{}-module-{:016x}{:016x}", arch, hash.high64, hash.low64);
    return module;
}

} // namespace harness::compile
