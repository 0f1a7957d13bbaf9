#pragma once
// PTX as NVRTC and nvcc emit it, parsed into kernels of decoded instructions for the access model
// (access_model.hxx). PTX from a module is untrusted input: parsing is bounded in size and count,
// and an error names the file and line.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace harness::analysis {

/// Limits on what one PTX text may hold; beyond them parsing stops with an error.
struct PtxLimits {
    std::size_t max_bytes = 32u << 20;       ///< the whole text
    std::size_t max_instructions = 1u << 20; ///< per kernel
    std::size_t max_kernels = 4096;          ///< per module
    std::size_t max_operands = 64;           ///< per instruction
    std::size_t max_shared_bytes = 1u << 30; ///< one shared variable's declared size
};

/// The special registers an address may read (%tid.x, %ntid.y, %laneid, ...).
enum class SpecialRegister : std::uint8_t {
    tid_x,
    tid_y,
    tid_z,
    ntid_x,
    ntid_y,
    ntid_z,
    ctaid_x,
    ctaid_y,
    ctaid_z,
    nctaid_x,
    nctaid_y,
    nctaid_z,
    laneid,
    warpid,
    other
};

enum class OperandKind : std::uint8_t {
    none,
    reg,     ///< a register (id in `reg`)
    sink,    ///< `_`: a result thrown away
    imm,     ///< an integer or float literal (bits in `value`)
    special, ///< a special register
    symbol,  ///< a kernel parameter, shared or local variable, or label, by name
    address, ///< [reg + offset] or [symbol + offset]
    vector,  ///< {r, r, ...}: ids in `regs` (-1 for `_`)
};

/// One operand of an instruction.
struct Operand {
    OperandKind kind = OperandKind::none;
    int reg = -1;           ///< reg, or the base register of an address
    std::int64_t value = 0; ///< imm bits, or an address's offset
    SpecialRegister special = SpecialRegister::other;
    std::string symbol;    ///< symbol, or the base symbol of an address
    std::vector<int> regs; ///< vector elements
    int second_reg = -1;   ///< `%p|%q`: the second destination of setp and shfl
    bool negated = false;  ///< `!%p` as a source
};

/// One PTX instruction: opcode, its dotted modifiers, its guard predicate and operands.
struct Instruction {
    std::string opcode;                 ///< "ld", "mad", "setp", ...
    std::vector<std::string> modifiers; ///< without dots: {"global", "nc", "v4", "f32"}
    int guard = -1;                     ///< predicate register id, -1 when unguarded
    bool guard_negated = false;         ///< @!%p
    std::vector<Operand> operands;
    int target = -1;  ///< bra: index of the instruction at the label
    int ptx_line = 0; ///< line in the PTX text
    int file = -1;    ///< .loc file number, -1 when none
    int line = 0;     ///< .loc source line

    bool has(std::string_view modifier) const;
};

/// A kernel parameter: its name, PTX type and size in bytes (its offset in the parameter space).
struct PtxParameter {
    std::string name;
    std::string type; ///< "u64", "u32", "f32", "b8" (arrays: byte arrays of `size`)
    std::uint32_t size = 0;
    std::uint32_t offset = 0;
};

/// A shared or local variable: name, alignment and size (0 for `extern` dynamic shared memory).
struct PtxVariable {
    std::string name;
    std::uint32_t align = 1;
    std::uint64_t size = 0;
    bool dynamic = false;
};

/// One `.entry` kernel.
struct PtxKernel {
    std::string name; ///< the mangled (lowered) name
    std::vector<PtxParameter> params;
    std::vector<PtxVariable> shared; ///< the kernel's own and the module's, in declaration order
    std::vector<PtxVariable> local;
    std::vector<Instruction> instructions;
    std::vector<std::string> register_names; ///< by id
    int declared_line = 0;
};

/// A parsed module: its kernels and the source files its `.file` directives name.
struct PtxModule {
    std::string origin; ///< the file (or "module:kernel") the text came from, for messages
    std::vector<PtxKernel> kernels;
    std::vector<std::pair<int, std::string>> files; ///< .file number and path

    const PtxKernel* find(std::string_view name) const;
    /// The path of a .loc file number, empty when unknown.
    std::string file_name(int number) const;
};

/// Parses PTX text. Throws harness::Error (bad input) naming `origin` and the line on malformed or
/// oversized input.
PtxModule parse_ptx(std::string_view text, const std::string& origin, const PtxLimits& limits = {});

} // namespace harness::analysis
