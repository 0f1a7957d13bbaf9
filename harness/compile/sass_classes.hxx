#pragma once
// SASS instructions sorted into the classes the static tier counts, per kernel and per source
// line: memory accesses by space and width, asynchronous copies, tensor-core instructions,
// floating-point arithmetic, MUFU, conversions, branches, barriers. Each class is a metric of the
// table (core/metrics.hxx), named here once.

#include "harness/compile/sass_disassembly.hxx"

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace harness::compile {

/// A class of SASS instructions; the order of sass_class_table().
enum class SassClass {
    global_ld_32,
    global_ld_64,
    global_ld_128,
    global_st_32,
    global_st_64,
    global_st_128,
    shared_ld_32,
    shared_ld_64,
    shared_ld_128,
    shared_st_32,
    shared_st_64,
    shared_st_128,
    ldsm,
    local_ld,
    local_st,
    async_copy,
    tma,
    tensor,
    fp32,
    fp64,
    mufu,
    conversion,
    branch,
    barrier,
};
inline constexpr std::size_t sass_class_count = static_cast<std::size_t>(SassClass::barrier) + 1;

/// What gating treats alike: accesses of one space and direction at several widths, and the
/// classes whose disappearance (tensor cores, asynchronous copies) or appearance (local memory)
/// is a pathology.
enum class SassFamily { global_ld, global_st, shared_ld, shared_st, ldsm, local, async, tensor, arithmetic, control };

/// One row of the class table.
struct SassClassInfo {
    SassClass id;
    std::string_view metric; ///< its figure in the metric table: "sass_global_ld_128"
    std::string_view label;  ///< for messages: "global loads 128-bit"
    SassFamily family;
    int width_bits = 0; ///< for accesses by width; 32 stands for 32 bits and narrower
};

/// Every class, in SassClass order.
std::span<const SassClassInfo> sass_class_table();
const SassClassInfo& sass_class_info(SassClass id);
/// The class named by `metric` ("sass_global_ld_128"), or nullopt.
std::optional<SassClass> sass_class_of_metric(std::string_view metric);
/// The figure of the total instruction count (NOPs left out): "sass_instructions".
inline constexpr std::string_view sass_total_metric = "sass_instructions";
/// The family's name in messages: "global loads".
std::string_view family_label(SassFamily family);

/// The class of one instruction ("LDG.E.128.CONSTANT" -> global_ld_128), or nullopt for one in
/// none (integer arithmetic, moves, predicates). NOPs are counted nowhere, not even in the total.
std::optional<SassClass> classify_instruction(std::string_view opcode);
bool is_nop(std::string_view opcode);

/// Counts of each class, and the total.
struct SassCounts {
    std::array<int, sass_class_count> by_class{};
    int total = 0;
    int& operator[](SassClass c) { return by_class[static_cast<std::size_t>(c)]; }
    int operator[](SassClass c) const { return by_class[static_cast<std::size_t>(c)]; }
    bool empty() const { return total == 0; }
};

/// The counts of one source line of one kernel.
struct SassLineCounts {
    std::string file; ///< as the line information names it
    int line = 0;
    SassCounts counts;
};

/// One kernel's counts, in total and per source line (lines in the order of the file and line).
struct SassKernelCounts {
    std::string kernel; ///< its symbol
    SassCounts counts;
    std::vector<SassLineCounts> lines;
};

/// The counts of every function of a disassembly.
std::vector<SassKernelCounts> count_classes(const std::vector<SassFunction>& functions);

} // namespace harness::compile
