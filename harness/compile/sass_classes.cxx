#include "harness/compile/sass_classes.hxx"

#include <algorithm>
#include <map>
#include <utility>

namespace harness::compile {

namespace {

using enum SassClass;

constexpr SassClassInfo table[] = {
    {global_ld_32, "sass_global_ld_32", "global loads 32-bit", SassFamily::global_ld, 32},
    {global_ld_64, "sass_global_ld_64", "global loads 64-bit", SassFamily::global_ld, 64},
    {global_ld_128, "sass_global_ld_128", "global loads 128-bit", SassFamily::global_ld, 128},
    {global_st_32, "sass_global_st_32", "global stores 32-bit", SassFamily::global_st, 32},
    {global_st_64, "sass_global_st_64", "global stores 64-bit", SassFamily::global_st, 64},
    {global_st_128, "sass_global_st_128", "global stores 128-bit", SassFamily::global_st, 128},
    {shared_ld_32, "sass_shared_ld_32", "shared loads 32-bit", SassFamily::shared_ld, 32},
    {shared_ld_64, "sass_shared_ld_64", "shared loads 64-bit", SassFamily::shared_ld, 64},
    {shared_ld_128, "sass_shared_ld_128", "shared loads 128-bit", SassFamily::shared_ld, 128},
    {shared_st_32, "sass_shared_st_32", "shared stores 32-bit", SassFamily::shared_st, 32},
    {shared_st_64, "sass_shared_st_64", "shared stores 64-bit", SassFamily::shared_st, 64},
    {shared_st_128, "sass_shared_st_128", "shared stores 128-bit", SassFamily::shared_st, 128},
    {SassClass::ldsm, "sass_ldsm", "shared matrix loads (LDSM)", SassFamily::ldsm, 0},
    {local_ld, "sass_local_ld", "local loads", SassFamily::local, 0},
    {local_st, "sass_local_st", "local stores", SassFamily::local, 0},
    {async_copy, "sass_async_copies", "asynchronous copies (LDGSTS)", SassFamily::async, 0},
    {tma, "sass_tma", "TMA copies", SassFamily::async, 0},
    {SassClass::tensor, "sass_tensor", "tensor-core instructions", SassFamily::tensor, 0},
    {fp32, "sass_fp32", "FP32 arithmetic", SassFamily::arithmetic, 0},
    {fp64, "sass_fp64", "FP64 arithmetic", SassFamily::arithmetic, 0},
    {mufu, "sass_mufu", "MUFU", SassFamily::arithmetic, 0},
    {conversion, "sass_conversions", "conversions", SassFamily::arithmetic, 0},
    {branch, "sass_branches", "branches", SassFamily::control, 0},
    {barrier, "sass_barriers", "barriers", SassFamily::control, 0},
};
static_assert(std::size(table) == sass_class_count);

/// The opcode's base ("LDG" of "LDG.E.128") and whether one of its modifiers is `modifier`.
std::string_view base_of(std::string_view opcode)
{
    return opcode.substr(0, opcode.find('.'));
}

bool has_modifier(std::string_view opcode, std::string_view modifier)
{
    for (std::size_t at = opcode.find('.'); at != std::string_view::npos; at = opcode.find('.', at + 1)) {
        const auto next = opcode.find('.', at + 1);
        if (opcode.substr(at + 1, next == std::string_view::npos ? std::string_view::npos : next - at - 1) == modifier)
            return true;
    }
    return false;
}

/// The width class of an access: .64, .128 (and the 256-bit loads of newer GPUs) named, else 32.
int width_of(std::string_view opcode)
{
    if (has_modifier(opcode, "128") || has_modifier(opcode, "256")) return 128;
    if (has_modifier(opcode, "64")) return 64;
    return 32;
}

SassClass by_width(int width, SassClass w32, SassClass w64, SassClass w128)
{
    return width == 128 ? w128 : width == 64 ? w64 : w32;
}

bool one_of(std::string_view base, std::initializer_list<std::string_view> names)
{
    return std::find(names.begin(), names.end(), base) != names.end();
}

} // namespace

std::span<const SassClassInfo> sass_class_table()
{
    return table;
}

const SassClassInfo& sass_class_info(SassClass id)
{
    return table[static_cast<std::size_t>(id)];
}

std::optional<SassClass> sass_class_of_metric(std::string_view metric)
{
    for (const auto& c : table)
        if (c.metric == metric) return c.id;
    return std::nullopt;
}

std::string_view family_label(SassFamily family)
{
    switch (family) {
    case SassFamily::global_ld: return "global loads";
    case SassFamily::global_st: return "global stores";
    case SassFamily::shared_ld: return "shared loads";
    case SassFamily::shared_st: return "shared stores";
    case SassFamily::ldsm: return "shared matrix loads";
    case SassFamily::local: return "local loads and stores";
    case SassFamily::async: return "asynchronous copies";
    case SassFamily::tensor: return "tensor-core instructions";
    case SassFamily::arithmetic: return "arithmetic";
    case SassFamily::control: return "control";
    }
    return "?";
}

bool is_nop(std::string_view opcode)
{
    return base_of(opcode) == "NOP";
}

std::optional<SassClass> classify_instruction(std::string_view opcode)
{
    const std::string_view base = base_of(opcode);
    const int width = width_of(opcode);
    // Generic loads and stores (LD, ST) reach global memory in the kernels a suite measures.
    if (base == "LDG" || base == "LD") return by_width(width, global_ld_32, global_ld_64, global_ld_128);
    if (base == "STG" || base == "ST") return by_width(width, global_st_32, global_st_64, global_st_128);
    if (base == "LDS") return by_width(width, shared_ld_32, shared_ld_64, shared_ld_128);
    if (base == "STS") return by_width(width, shared_st_32, shared_st_64, shared_st_128);
    if (base == "LDSM") return SassClass::ldsm;
    if (base == "LDL") return local_ld;
    if (base == "STL") return local_st;
    if (base == "LDGSTS") return async_copy;
    if (one_of(base, {"UTMALDG", "UTMASTG", "UTMAREDG", "UBLKCP", "UBLKRED"})) return tma;
    if (one_of(base, {"HMMA", "IMMA", "DMMA", "BMMA", "HGMMA", "IGMMA", "QGMMA", "BGMMA", "UTCHMMA", "UTCIMMA",
                      "UTCQMMA", "UTCOMMA"}))
        return SassClass::tensor;
    if (one_of(base, {"FADD", "FMUL", "FFMA", "FADD32I", "FMUL32I", "FFMA32I", "FMNMX", "FSWZADD"})) return fp32;
    if (one_of(base, {"DADD", "DMUL", "DFMA", "DMNMX"})) return fp64;
    if (base == "MUFU") return mufu;
    if (one_of(base, {"F2F", "F2I", "I2F", "I2FP", "F2FP", "F2IP", "I2I", "I2IP", "FRND"})) return conversion;
    if (one_of(base, {"BRA", "BRX", "JMP", "JMX", "CALL", "RET"})) return branch;
    if (one_of(base, {"BAR", "SYNCS"})) return barrier;
    return std::nullopt;
}

std::vector<SassKernelCounts> count_classes(const std::vector<SassFunction>& functions)
{
    std::vector<SassKernelCounts> kernels;
    for (const auto& function : functions) {
        SassKernelCounts k;
        k.kernel = function.name;
        std::map<std::pair<std::string, int>, SassCounts> lines;
        for (const auto& instruction : function.instructions) {
            if (is_nop(instruction.opcode)) continue;
            SassCounts& at = lines[{instruction.file, instruction.line}];
            ++k.counts.total;
            ++at.total;
            if (const auto c = classify_instruction(instruction.opcode)) {
                ++k.counts[*c];
                ++at[*c];
            }
        }
        for (auto& [where, counts] : lines) k.lines.push_back({where.first, where.second, counts});
        kernels.push_back(std::move(k));
    }
    return kernels;
}

} // namespace harness::compile
