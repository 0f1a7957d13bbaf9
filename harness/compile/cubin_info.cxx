#include "harness/compile/cubin_info.hxx"

#include "harness/core/text.hxx"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <limits>
#include <map>
#include <unordered_map>
#include <unordered_set>

namespace harness::compile {
namespace {

// ELF constants from the System V gABI, and the CUDA ones ptxas writes.
constexpr std::size_t elf64_header_bytes = 64;
constexpr std::size_t elf64_section_header_bytes = 64;
constexpr std::size_t elf64_symbol_bytes = 24;
constexpr std::uint8_t elfclass64 = 2;
constexpr std::uint8_t elfdata2lsb = 1;
constexpr std::uint16_t em_cuda = 190;
constexpr std::uint16_t shn_xindex = 0xffff;
constexpr std::uint32_t sht_symtab = 2;
constexpr std::uint32_t sht_nobits = 8;
constexpr std::uint32_t sht_cuda_info = 0x70000000; // .nv.info and .nv.info.<kernel>
constexpr std::uint8_t stt_func = 2;
constexpr std::uint8_t sto_cuda_entry = 0x10; // st_other bit marking a __global__ function

// ELF ABI version 8 (CUDA 12+) moved the SM number from e_flags bits 0-7 to bits 8-15.
constexpr std::uint8_t abi_version_with_sm_in_bits_8_15 = 8;

// Up to sm_8x, ptxas keeps the register count in the .text section's sh_info (SHI_REGISTERS) and
// the barrier count in its sh_flags (SHF_BARRIERS); sm_90 cubins keep only the .nv.info copies.
constexpr int shi_registers_shift = 24;
constexpr int shf_barriers_shift = 20;
constexpr std::uint64_t shf_barriers_mask = 0x7f;

// sm_90 and later cubins lay out a kernel's __shared__ variables after a 1 KiB window at the start
// of the block's shared memory (the per-block memory the driver reserves, cudaDevAttrReserved-
// SharedMemoryPerBlock), and .nv.shared.<kernel> spans that window too: 4224 bytes of arrays give a
// 5248-byte section, a kernel with only dynamic shared memory a 1024-byte one. ptxas' "bytes smem"
// and the driver's CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES (checked on an H200) both leave it out.
constexpr int first_sm_with_shared_window = 90;
constexpr int shared_window_bytes = 1024;

// An EIATTR_KPARAM_INFO payload: u32 index (0), u16 ordinal, u16 offset, then u32 flags whose bits
// 0-7 hold the pointee's log2 alignment, 8-11 the space, 12-16 the constant bank and 18-31 the
// parameter's size in bytes (checked against nvcc 13.0 cubins for sm_80, sm_90 and sm_100: a
// pointer is 8, a __half 2, a 12-byte struct 12).
constexpr std::size_t kparam_info_bytes = 12;
constexpr int kparam_size_shift = 18;

// The format byte of a .nv.info record (EIFMT_*). Every record starts with 4 bytes: format,
// attribute id, then a 16-bit field that is the value (HVAL), the value in its low byte (BVAL),
// unused (NVAL), or the payload size (SVAL, payload follows). Records are 4-byte aligned.
enum class NvInfoFormat : std::uint8_t { nval = 1, bval = 2, hval = 3, sval = 4 };

// The attribute ids (EIATTR_*) this reader uses. The numbering follows the order of the EIATTR_*
// names in ptxas 13.0's string table, confirmed by which attributes appear for which kernels: a
// barrier kernel gains 0x4c, a spilling one a large 0x55 (annotations), every sm_90 kernel 0x5f.
enum class NvInfoId : std::uint8_t {
    max_threads = 0x05,      // EIATTR_MAX_THREADS, in .nv.info.<k>: u32 x, y, z of .maxntid (__launch_bounds__)
    required_threads = 0x10, // EIATTR_REQNTID, in .nv.info.<k>: u32 x, y, z of .reqntid
    frame_size = 0x11,       // EIATTR_FRAME_SIZE, in .nv.info: symbol index, bytes
    min_stack_size = 0x12,   // EIATTR_MIN_STACK_SIZE, in .nv.info: symbol index, bytes
    kparam_info = 0x17,      // EIATTR_KPARAM_INFO, in .nv.info.<k>: one SVAL per parameter (below)
    cbank_param_size = 0x19, // EIATTR_CBANK_PARAM_SIZE, in .nv.info.<k>: HVAL bytes
    max_stack_size = 0x23,   // EIATTR_MAX_STACK_SIZE: symbol index, bytes (not seen from ptxas 13.0)
    reg_count = 0x2f,        // EIATTR_REGCOUNT, in .nv.info: symbol index, registers
    num_barriers = 0x4c,     // EIATTR_NUM_BARRIERS, in .nv.info.<k>: BVAL count, absent when 0
};

std::string hex(std::uint64_t value)
{
    char text[2 + 16 + 1] = "0x";
    auto end = std::to_chars(text + 2, text + sizeof text - 1, value, 16).ptr;
    return std::string(text, end);
}

// Whatever is wrong with a cubin is wrong with its bytes: the file a user gave, or what a compiler
// wrote. Callers that know the file name it (module_file.cxx).
[[noreturn]] void fail(const std::string& message)
{
    throw CubinError(ErrorKind::bad_input, "cubin: " + message);
}

/// A name from the cubin as messages show it: a corrupt one may be as long as the file.
std::string shown(std::string_view name)
{
    constexpr std::size_t longest = 200;
    return name.size() <= longest ? std::string(name) : std::string(name.substr(0, longest)) + "...";
}

// Little-endian reads from the cubin, each checked against its size; a failure names what was read.
class ByteReader {
public:
    explicit ByteReader(std::span<const std::byte> bytes) : bytes_(bytes) {}

    std::size_t size() const { return bytes_.size(); }

    std::span<const std::byte> slice(std::uint64_t offset, std::uint64_t length, std::string_view what) const
    {
        if (offset > bytes_.size() || length > bytes_.size() - offset) {
            fail("truncated or corrupt: " + std::string(what) + " at offset " + std::to_string(offset) + " needs " +
                 std::to_string(length) + " bytes, but the cubin has " + std::to_string(bytes_.size()));
        }
        return bytes_.subspan(static_cast<std::size_t>(offset), static_cast<std::size_t>(length));
    }

    std::uint64_t read(std::uint64_t offset, int width, std::string_view what) const
    {
        auto field = slice(offset, static_cast<std::uint64_t>(width), what);
        std::uint64_t value = 0;
        for (int i = width - 1; i >= 0; --i) value = (value << 8) | std::to_integer<std::uint64_t>(field[i]);
        return value;
    }
    std::uint8_t u8(std::uint64_t offset, std::string_view what) const
    {
        return static_cast<std::uint8_t>(read(offset, 1, what));
    }
    std::uint16_t u16(std::uint64_t offset, std::string_view what) const
    {
        return static_cast<std::uint16_t>(read(offset, 2, what));
    }
    std::uint32_t u32(std::uint64_t offset, std::string_view what) const
    {
        return static_cast<std::uint32_t>(read(offset, 4, what));
    }
    std::uint64_t u64(std::uint64_t offset, std::string_view what) const { return read(offset, 8, what); }

private:
    std::span<const std::byte> bytes_;
};

struct Section {
    std::string_view name; ///< into the cubin's bytes, which outlive every Section
    std::uint32_t type = 0;
    std::uint64_t flags = 0;
    std::uint64_t offset = 0;
    std::uint64_t size = 0;
    std::uint32_t link = 0;
    std::uint32_t info = 0;
    std::uint64_t entry_size = 0;
};

struct NvInfoRecord {
    std::uint8_t format = 0;
    std::uint8_t id = 0;
    std::uint16_t value = 0;            // HVAL / BVAL value; SVAL payload size
    std::span<const std::byte> payload; // SVAL only
};

int checked_int(std::uint64_t value, std::string_view what)
{
    if (value > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
        fail("implausible " + std::string(what) + ": " + std::to_string(value));
    return static_cast<int>(value);
}

/// Names from string tables, as views into the cubin, within a budget of bytes. Headers may point
/// any number of names at one string, so a cubin of N headers naming one string of L bytes holds
/// N * L bytes of names: a reader that copied or compared each would take memory or time in the
/// square of the file's size. Real cubins name each section and kernel once (ptxas shares no
/// strings), so their names add up to less than `budget`: `names_per_byte` times the file's size.
class NameReader {
public:
    NameReader(const ByteReader& cubin, std::uint64_t names_per_byte, std::string_view kind)
        : cubin_(cubin), names_per_byte_(names_per_byte), budget_(cubin.size() * names_per_byte), kind_(kind)
    {
    }

    std::string_view read(const Section& table, std::uint64_t offset, std::string_view what)
    {
        if (table.type == sht_nobits) fail(std::string(what) + ": its string table holds no data");
        const auto bytes = cubin_.slice(table.offset, table.size, "string table of " + std::string(what));
        if (offset >= bytes.size()) {
            fail(std::string(what) + ": name offset " + std::to_string(offset) + " lies outside its " +
                 std::to_string(bytes.size()) + "-byte string table");
        }
        const char* begin = reinterpret_cast<const char*>(bytes.data()) + offset;
        const std::uint64_t left = bytes.size() - offset;
        const auto* end = static_cast<const char*>(std::memchr(begin, 0, std::min(left, budget_ + 1)));
        if (!end && left <= budget_)
            fail(std::string(what) + ": name at offset " + std::to_string(offset) + " is unterminated");
        if (!end || static_cast<std::uint64_t>(end - begin) > budget_)
            fail("truncated or corrupt: its " + std::string(kind_) + " add up to more than " +
                 (names_per_byte_ == 1 ? std::string("the file's size")
                                       : std::to_string(names_per_byte_) + " times the file's size") +
                 " (headers that name one string many times)");
        budget_ -= static_cast<std::uint64_t>(end - begin);
        return {begin, static_cast<std::size_t>(end - begin)};
    }

private:
    const ByteReader& cubin_;
    std::uint64_t names_per_byte_;
    std::uint64_t budget_;
    std::string_view kind_;
};

// Section names repeat a kernel's name (.text.<k>, .nv.info.<k>, .nv.shared.<k>, ...), and are only
// compared; kernel names are copied into the result, once each.
constexpr std::uint64_t section_names_per_byte = 8;
constexpr std::uint64_t kernel_names_per_byte = 1;

std::vector<Section> read_sections(const ByteReader& cubin)
{
    const std::uint64_t section_table = cubin.u64(0x28, "e_shoff");
    const std::uint16_t entry_bytes = cubin.u16(0x3a, "e_shentsize");
    std::uint64_t count = cubin.u16(0x3c, "e_shnum");
    std::uint32_t names_index = cubin.u16(0x3e, "e_shstrndx");
    if (section_table == 0) fail("has no section header table (e_shoff is 0)");
    if (entry_bytes < elf64_section_header_bytes)
        fail("section headers of " + std::to_string(entry_bytes) + " bytes, ELF64 needs 64 (e_shentsize)");

    // Extended numbering: with 0xff00+ sections the real counts live in section 0's header.
    if (count == 0) count = cubin.u64(section_table + 32, "section 0 sh_size (extended e_shnum)");
    if (names_index == shn_xindex) names_index = cubin.u32(section_table + 40, "section 0 sh_link (e_shstrndx)");
    // Reject counts the file cannot hold before allocating for them (and before count * size can overflow).
    if (count > cubin.size() / entry_bytes)
        fail("truncated or corrupt: " + std::to_string(count) + " section headers cannot fit in " +
             std::to_string(cubin.size()) + " bytes");
    cubin.slice(section_table, count * entry_bytes, "section header table");
    if (names_index >= count)
        fail("section name table index " + std::to_string(names_index) + " >= section count " + std::to_string(count));

    std::vector<Section> sections(static_cast<std::size_t>(count));
    std::vector<std::uint32_t> name_offsets(sections.size());
    NameReader names(cubin, section_names_per_byte, "section names");
    for (std::size_t i = 0; i < sections.size(); ++i) {
        const std::uint64_t at = section_table + i * entry_bytes;
        const std::string what = "section header " + std::to_string(i);
        name_offsets[i] = cubin.u32(at + 0, what);
        sections[i].type = cubin.u32(at + 4, what);
        sections[i].flags = cubin.u64(at + 8, what);
        sections[i].offset = cubin.u64(at + 24, what);
        sections[i].size = cubin.u64(at + 32, what);
        sections[i].link = cubin.u32(at + 40, what);
        sections[i].info = cubin.u32(at + 44, what);
        sections[i].entry_size = cubin.u64(at + 56, what);
    }
    for (std::size_t i = 0; i < sections.size(); ++i)
        sections[i].name = names.read(sections[names_index], name_offsets[i], "section " + std::to_string(i));
    return sections;
}

std::vector<NvInfoRecord> read_nv_info(const ByteReader& cubin, const Section& section)
{
    const std::string name = shown(section.name);
    auto bytes = cubin.slice(section.offset, section.size, name);
    const ByteReader info(bytes);
    std::vector<NvInfoRecord> records;
    std::uint64_t at = 0;
    while (at + 4 <= bytes.size()) {
        NvInfoRecord record;
        record.format = info.u8(at, name);
        record.id = info.u8(at + 1, name);
        switch (static_cast<NvInfoFormat>(record.format)) {
        case NvInfoFormat::nval: break;
        case NvInfoFormat::bval: record.value = info.u8(at + 2, name); break;
        case NvInfoFormat::hval: record.value = info.u16(at + 2, name); break;
        case NvInfoFormat::sval:
            record.value = info.u16(at + 2, name);
            record.payload = info.slice(at + 4, record.value, name + " attribute " + hex(record.id));
            break;
        default:
            fail(name + ": unknown attribute format " + std::to_string(record.format) + " at offset " +
                 std::to_string(at) + " (attribute " + hex(record.id) + ")");
        }
        records.push_back(record);
        at += 4 + record.payload.size();
        at = (at + 3) / 4 * 4;
    }
    // ptxas pads to 4 bytes; anything left that is not padding means we lost the record framing.
    for (; at < bytes.size(); ++at)
        if (bytes[at] != std::byte{0}) fail(name + ": stray bytes after the last attribute");
    return records;
}

// Attributes that name their function: 8-byte SVAL payload of symbol index, value.
struct SymbolValue {
    std::uint32_t symbol = 0;
    std::uint32_t value = 0;
};
std::optional<SymbolValue> symbol_value(const NvInfoRecord& record)
{
    if (record.format != static_cast<std::uint8_t>(NvInfoFormat::sval) || record.payload.size() != 8) return {};
    const ByteReader payload(record.payload);
    return SymbolValue{payload.u32(0, "attribute payload"), payload.u32(4, "attribute payload")};
}

// The value of a per-kernel attribute whatever format it came in.
std::uint64_t scalar_value(const NvInfoRecord& record)
{
    if (record.format != static_cast<std::uint8_t>(NvInfoFormat::sval)) return record.value;
    const ByteReader payload(record.payload);
    if (record.payload.size() == 4) return payload.u32(0, "attribute payload");
    if (record.payload.size() == 8) return payload.u32(4, "attribute payload"); // symbol index, value
    fail("attribute " + hex(record.id) + " has a " + std::to_string(record.payload.size()) + "-byte payload");
}

/// The three u32 of a thread-count attribute (.maxntid, .reqntid): x, y, z; throws for another payload.
std::array<int, 3> thread_dims(const NvInfoRecord& record, const std::string& context)
{
    if (record.format != static_cast<std::uint8_t>(NvInfoFormat::sval) || record.payload.size() != 12)
        fail(context + ": a thread-count attribute " + hex(record.id) + " of " + std::to_string(record.payload.size()) +
             " bytes, expected 12 (x, y, z)");
    const ByteReader payload(record.payload);
    std::array<int, 3> dims{};
    for (std::size_t i = 0; i < 3; ++i) {
        const std::uint32_t value = payload.u32(4 * i, "thread count");
        if (value < 1 || value > 1024)
            fail(context + ": a thread-count attribute " + hex(record.id) + " gives " + std::to_string(value) +
                 " threads along one dimension, outside 1 to 1024");
        dims[i] = static_cast<int>(value);
    }
    return dims;
}

KernelParameter kernel_parameter(const NvInfoRecord& record, const std::string& context)
{
    if (record.format != static_cast<std::uint8_t>(NvInfoFormat::sval) || record.payload.size() < kparam_info_bytes)
        fail(context + ": a parameter record (EIATTR_KPARAM_INFO) of " + std::to_string(record.payload.size()) +
             " bytes, expected " + std::to_string(kparam_info_bytes));
    const ByteReader payload(record.payload);
    return {payload.u16(4, "parameter ordinal"), payload.u16(6, "parameter offset"),
            static_cast<int>(payload.u32(8, "parameter flags") >> kparam_size_shift)};
}

/// The parameters in order, when their records number them 0 to n-1; throws otherwise.
std::vector<KernelParameter> ordered_parameters(std::vector<KernelParameter> parameters, const std::string& context)
{
    std::sort(parameters.begin(), parameters.end(),
              [](const KernelParameter& a, const KernelParameter& b) { return a.ordinal < b.ordinal; });
    for (std::size_t i = 0; i < parameters.size(); ++i)
        if (parameters[i].ordinal != static_cast<int>(i))
            fail(context + ": parameter records (EIATTR_KPARAM_INFO) number " + std::to_string(parameters.size()) +
                 " parameters, but not 0 to " + std::to_string(parameters.size() - 1));
    return parameters;
}

struct KernelSymbol {
    std::string name;
    std::uint32_t index = 0;
};

std::vector<KernelSymbol> read_kernel_symbols(const ByteReader& cubin, const std::vector<Section>& sections)
{
    auto symtab = std::find_if(sections.begin(), sections.end(), [](const Section& s) { return s.type == sht_symtab; });
    if (symtab == sections.end()) fail("has no symbol table (.symtab)");
    const std::uint64_t entry_bytes = symtab->entry_size == 0 ? elf64_symbol_bytes : symtab->entry_size;
    if (entry_bytes < elf64_symbol_bytes)
        fail(".symtab entries of " + std::to_string(entry_bytes) + " bytes, ELF64 needs 24");
    if (symtab->link >= sections.size()) fail(".symtab links to missing string table " + std::to_string(symtab->link));
    const Section& names = sections[symtab->link];
    auto table = cubin.slice(symtab->offset, symtab->size, ".symtab");

    std::vector<KernelSymbol> kernels;
    NameReader reader(cubin, kernel_names_per_byte, "kernel names");
    std::unordered_set<std::string_view> seen;
    for (std::uint64_t i = 0; i < table.size() / entry_bytes; ++i) {
        const std::uint64_t at = symtab->offset + i * entry_bytes;
        const std::string what = "symbol " + std::to_string(i);
        const std::uint8_t type = cubin.u8(at + 4, what) & 0xf;
        const std::uint8_t other = cubin.u8(at + 5, what);
        if (type != stt_func || (other & sto_cuda_entry) == 0) continue;
        const std::string_view name = reader.read(names, cubin.u32(at, what), what);
        // Each kernel's attributes are found by its name: two of one name would share them.
        if (!seen.insert(name).second) fail("two kernel symbols are named '" + shown(name) + "'");
        kernels.push_back({std::string(name), static_cast<std::uint32_t>(i)});
    }
    return kernels;
}

/// The sections by name, the first of each name, for lookups in constant time.
class SectionIndex {
public:
    explicit SectionIndex(const std::vector<Section>& sections)
    {
        by_name_.reserve(sections.size());
        for (const Section& section : sections) by_name_.try_emplace(section.name, &section);
    }
    const Section* find(std::string_view name) const
    {
        const auto it = by_name_.find(name);
        return it == by_name_.end() ? nullptr : it->second;
    }

private:
    std::unordered_map<std::string_view, const Section*> by_name_;
};

int sm_version_of(const ByteReader& cubin)
{
    const std::uint32_t flags = cubin.u32(0x30, "e_flags");
    const std::uint8_t abi_version = cubin.u8(8, "EI_ABIVERSION");
    return static_cast<int>(abi_version >= abi_version_with_sm_in_bits_8_15 ? (flags >> 8) & 0xff : flags & 0xff);
}

void check_header(const ByteReader& cubin)
{
    if (cubin.size() < elf64_header_bytes) {
        fail(cubin.size() == 0 ? "is empty"
                               : "is " + std::to_string(cubin.size()) + " bytes, shorter than an ELF64 header");
    }
    if (cubin.u32(0, "ELF magic") != 0x464c457f) fail("is not an ELF file (no \\x7fELF magic)");
    if (cubin.u8(4, "EI_CLASS") != elfclass64)
        fail("is not a 64-bit ELF (EI_CLASS " + std::to_string(cubin.u8(4, "")) + ")");
    if (cubin.u8(5, "EI_DATA") != elfdata2lsb) fail("is not a little-endian ELF");
    const std::uint16_t machine = cubin.u16(18, "e_machine");
    if (machine != em_cuda) fail("is an ELF for machine " + std::to_string(machine) + ", not CUDA (190)");
}

} // namespace

CubinInfo read_cubin_info(std::span<const std::byte> bytes)
{
    const ByteReader cubin(bytes);
    check_header(cubin);

    CubinInfo result;
    result.sm_version = sm_version_of(cubin);
    const std::vector<Section> sections = read_sections(cubin);
    const SectionIndex index(sections);
    const std::vector<KernelSymbol> symbols = read_kernel_symbols(cubin, sections);

    // .nv.info holds the per-function attributes keyed by symbol index.
    std::map<std::pair<std::uint32_t, std::uint8_t>, std::uint32_t> by_symbol;
    for (const Section& section : sections) {
        if (section.type != sht_cuda_info || section.name != ".nv.info") continue;
        for (const NvInfoRecord& record : read_nv_info(cubin, section))
            if (auto sv = symbol_value(record)) by_symbol[{sv->symbol, record.id}] = sv->value;
    }

    for (const KernelSymbol& symbol : symbols) {
        KernelResources kernel;
        kernel.name = symbol.name;
        const std::string context = "kernel " + shown(symbol.name);
        // This kernel's attributes by id: .nv.info's first, then .nv.info.<kernel>'s (where later
        // ptxas versions might move them) for ids .nv.info lacks.
        std::map<NvInfoId, std::uint64_t> attributes;
        std::vector<KernelParameter> parameters;
        for (NvInfoId id :
             {NvInfoId::reg_count, NvInfoId::frame_size, NvInfoId::max_stack_size, NvInfoId::min_stack_size})
            if (auto it = by_symbol.find({symbol.index, static_cast<std::uint8_t>(id)}); it != by_symbol.end())
                attributes[id] = it->second;
        if (const Section* info = index.find(".nv.info." + symbol.name)) {
            for (const NvInfoRecord& record : read_nv_info(cubin, *info)) {
                switch (const auto id = static_cast<NvInfoId>(record.id)) {
                case NvInfoId::num_barriers:
                case NvInfoId::cbank_param_size:
                case NvInfoId::reg_count:
                case NvInfoId::frame_size:
                case NvInfoId::max_stack_size:
                case NvInfoId::min_stack_size: attributes.try_emplace(id, scalar_value(record)); break;
                case NvInfoId::kparam_info: parameters.push_back(kernel_parameter(record, context)); break;
                case NvInfoId::max_threads: kernel.max_threads = thread_dims(record, context); break;
                case NvInfoId::required_threads: kernel.required_threads = thread_dims(record, context); break;
                }
            }
        }
        if (const Section* text = index.find(".text." + symbol.name)) {
            if (const std::uint32_t registers = text->info >> shi_registers_shift; registers != 0)
                attributes.try_emplace(NvInfoId::reg_count, registers);
            attributes.try_emplace(NvInfoId::num_barriers, (text->flags >> shf_barriers_shift) & shf_barriers_mask);
        }
        auto attribute = [&](NvInfoId id, std::uint64_t otherwise) {
            auto it = attributes.find(id);
            return it == attributes.end() ? otherwise : it->second;
        };
        if (!attributes.contains(NvInfoId::reg_count)) {
            fail(context + ": no register count (no EIATTR_REGCOUNT in .nv.info, no SHI_REGISTERS in .text." +
                 shown(symbol.name) + ")");
        }
        kernel.registers = checked_int(attribute(NvInfoId::reg_count, 0), context + " register count");
        kernel.local_bytes = checked_int(attribute(NvInfoId::frame_size, 0), context + " stack frame");
        kernel.max_stack_bytes = checked_int(
            attribute(NvInfoId::max_stack_size, attribute(NvInfoId::min_stack_size, 0)), context + " stack size");
        kernel.barriers = checked_int(attribute(NvInfoId::num_barriers, 0), context + " barrier count");
        kernel.param_bytes = checked_int(attribute(NvInfoId::cbank_param_size, 0), context + " parameter bytes");
        // A kernel without parameters has neither records nor a parameter block; one with a block
        // but no records leaves its parameters unknown.
        if (!parameters.empty() || kernel.param_bytes == 0)
            kernel.parameters = ordered_parameters(std::move(parameters), context);

        if (const Section* shared = index.find(".nv.shared." + symbol.name)) {
            int bytes = checked_int(shared->size, context + " shared memory");
            if (result.sm_version >= first_sm_with_shared_window && bytes >= shared_window_bytes)
                bytes -= shared_window_bytes;
            kernel.static_shared_bytes = bytes;
        }
        result.kernels.push_back(std::move(kernel));
    }
    return result;
}

CubinInfo read_cubin_info(std::string_view cubin)
{
    return read_cubin_info(std::as_bytes(std::span<const char>(cubin.data(), cubin.size())));
}

namespace {

// DWARF .debug_line, versions 2 to 4 (ptxas writes version 2): each unit's header lists its
// include folders and files; the line program that follows is not needed for the names.
class DwarfReader {
public:
    DwarfReader(const ByteReader& bytes, std::uint64_t at, std::uint64_t end) : bytes_(bytes), at_(at), end_(end) {}
    std::uint64_t at() const { return at_; }
    std::uint64_t fixed(int width)
    {
        if (static_cast<std::uint64_t>(width) > end_ - at_) fail(".debug_line: a header runs past its unit");
        const std::uint64_t value = bytes_.read(at_, width, ".debug_line");
        at_ += static_cast<std::uint64_t>(width);
        return value;
    }
    std::uint64_t uleb()
    {
        std::uint64_t value = 0;
        for (int shift = 0;; shift += 7) {
            const std::uint64_t byte = fixed(1);
            if (shift < 64) value |= (byte & 0x7f) << shift;
            if ((byte & 0x80) == 0) return value;
        }
    }
    std::string text()
    {
        std::string out;
        for (char c; (c = static_cast<char>(fixed(1))) != '\0';) out += c;
        return out;
    }

private:
    const ByteReader& bytes_;
    std::uint64_t at_;
    std::uint64_t end_;
};

} // namespace

std::vector<std::string> line_table_files(std::string_view bytes)
{
    const ByteReader cubin(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())));
    check_header(cubin);
    const std::vector<Section> sections = read_sections(cubin);
    const Section* line = SectionIndex(sections).find(".debug_line");
    if (!line || line->type == sht_nobits) return {};
    const std::uint64_t section_end = line->offset + cubin.slice(line->offset, line->size, ".debug_line").size();
    std::vector<std::string> files;
    for (std::uint64_t unit = line->offset; unit < section_end;) {
        DwarfReader header(cubin, unit, section_end);
        std::uint64_t length = header.fixed(4);
        int offset_width = 4;
        if (length == 0xffffffff) {
            length = header.fixed(8);
            offset_width = 8;
        }
        if (length > section_end - header.at()) fail(".debug_line: a unit runs past the section");
        const std::uint64_t unit_end = header.at() + length;
        DwarfReader r(cubin, header.at(), unit_end);
        unit = unit_end;
        const auto version = r.fixed(2);
        if (version < 2 || version > 4) continue;
        r.fixed(offset_width);        // header_length
        r.fixed(1);                   // minimum_instruction_length
        if (version >= 4) r.fixed(1); // maximum_operations_per_instruction
        r.fixed(1);                   // default_is_stmt
        r.fixed(1);                   // line_base
        r.fixed(1);                   // line_range
        const auto opcode_base = r.fixed(1);
        for (std::uint64_t i = 1; i < opcode_base; ++i) r.fixed(1); // standard_opcode_lengths
        std::vector<std::string> folders;
        for (std::string folder; !(folder = r.text()).empty();) folders.push_back(folder);
        for (std::string name; !(name = r.text()).empty();) {
            const std::uint64_t folder = r.uleb();
            r.uleb(); // modification time
            r.uleb(); // length
            std::string path = name;
            if (folder > 0 && folder <= folders.size() && !name.starts_with('/'))
                path = folders[folder - 1] + (folders[folder - 1].ends_with('/') ? "" : "/") + name;
            if (std::find(files.begin(), files.end(), path) == files.end()) files.push_back(path);
        }
    }
    return files;
}

std::string embedded_ptx(std::string_view bytes)
{
    const ByteReader cubin(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())));
    check_header(cubin);
    const std::vector<Section> sections = read_sections(cubin);
    const Section* text = SectionIndex(sections).find(".nv_debug_ptx_txt");
    if (!text || text->type == sht_nobits) return "";
    const auto kept = cubin.slice(text->offset, text->size, ".nv_debug_ptx_txt");
    // One PTX line a string of the section's table (the SASS-to-PTX line table points at them).
    std::string ptx(reinterpret_cast<const char*>(kept.data()), kept.size());
    std::replace(ptx.begin(), ptx.end(), '\0', '\n');
    return ptx;
}

std::string demangled_base_name(std::string_view mangled)
{
    // Itanium ABI, just far enough for kernel names: _Z [L] <len><name> or _Z N <len><name>... E.
    if (!mangled.starts_with("_Z")) return std::string(mangled);
    std::size_t at = 2;
    if (at < mangled.size() && mangled[at] == 'L') ++at; // internal linkage
    const bool nested = at < mangled.size() && mangled[at] == 'N';
    if (nested) ++at;
    std::string name;
    while (at < mangled.size() && mangled[at] >= '0' && mangled[at] <= '9') {
        std::size_t length = 0;
        auto [end, error] = std::from_chars(mangled.data() + at, mangled.data() + mangled.size(), length);
        if (error != std::errc{}) return std::string(mangled);
        at = static_cast<std::size_t>(end - mangled.data());
        if (length > mangled.size() - at) return std::string(mangled);
        if (!name.empty()) name += "::";
        name += mangled.substr(at, length);
        at += length;
        if (!nested) break;
    }
    return name.empty() ? std::string(mangled) : name;
}

namespace {
std::vector<const KernelResources*> lookup(const CubinInfo& info, std::string_view name)
{
    std::vector<const KernelResources*> matches;
    for (const KernelResources& kernel : info.kernels)
        if (kernel.name == name) return {&kernel};
    // A plain identifier ("tile_sum", "ns::gemm") may name a C++ kernel by its demangled base name.
    const bool plain = !name.empty() &&
                       std::all_of(name.begin(), name.end(), [](char c) { return is_identifier_char(c) || c == ':'; });
    if (!plain) return {};
    for (const KernelResources& kernel : info.kernels)
        if (demangled_base_name(kernel.name) == name) matches.push_back(&kernel);
    return matches;
}
} // namespace

const KernelResources* CubinInfo::find(std::string_view name) const
{
    auto matches = lookup(*this, name);
    return matches.size() == 1 ? matches.front() : nullptr;
}

const KernelResources& CubinInfo::kernel(std::string_view name) const
{
    auto matches = lookup(*this, name);
    if (matches.size() == 1) return *matches.front();
    std::vector<std::string> names;
    if (matches.empty()) {
        for (const KernelResources& k : kernels) names.push_back(k.name);
        throw CubinError(ErrorKind::bad_input,
                         "kernel '" + std::string(name) + "' is not in the sm_" + std::to_string(sm_version) +
                             " cubin; it holds: " + (names.empty() ? std::string("no kernels") : join(names)) +
                             did_you_mean(std::string(name), names));
    }
    for (const KernelResources* k : matches) names.push_back(k->name);
    throw CubinError(ErrorKind::bad_input, "kernel name '" + std::string(name) +
                                               "' is ambiguous in the cubin; use the mangled name: " + join(names));
}

} // namespace harness::compile
