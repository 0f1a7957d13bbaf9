#pragma once
// The SASS of a cubin, as the toolkit's nvdisasm prints it with line information: found beside the
// CUDA install or on PATH, run in a child process bounded in time, memory and output, and read
// into instructions per kernel, each with the source file and line it was compiled from.

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace harness::compile {

/// Where nvdisasm was found, or why it was not.
struct NvdisasmLocation {
    std::filesystem::path program; ///< empty when none was found
    std::string version;           ///< "13.2.86", from `nvdisasm --version`
    std::string not_found_reason;  ///< where it was looked for, when `program` is empty
};

/// The first executable nvdisasm of: $HARNESS_NVDISASM (a file), the `bin` folder of $CUDA_PATH,
/// of $CUDA_HOME, of the toolkit the harness was built with and of /usr/local/cuda, the `bin`
/// folder of $VIRTUAL_ENV (ci/install-nvdisasm.sh installs it there), then PATH. Looked up once per
/// process.
const NvdisasmLocation& find_nvdisasm();

/// Bounds on one disassembly: a cubin whose disassembly runs longer, prints more or holds more
/// instructions is bad input. The harness then holds at most the output and that many
/// instructions (a few hundred bytes each) of one cubin at a time.
struct DisassemblyLimits {
    double timeout_s = 60.0;
    std::size_t max_output_bytes = 256u << 20;
    std::size_t max_memory_bytes = 4ull << 30; ///< address space of the nvdisasm process
    std::size_t max_instructions = 1u << 20;   ///< read from one cubin's disassembly
};

/// nvdisasm's output (`-c -g`: code sections with line information) for `cubin`, named `name` in
/// errors. Throws Error(bad_input) naming `name` when nvdisasm fails on it, runs past the limits or
/// prints more than they allow; Error(environment) when it cannot be started.
std::string disassemble_cubin(const std::filesystem::path& nvdisasm, std::string_view cubin, const std::string& name,
                              const DisassemblyLimits& limits = {});

/// One SASS instruction.
struct SassInstruction {
    std::uint32_t offset = 0; ///< byte offset in its kernel's code
    std::string predicate;    ///< "@P0", "@!PT", or empty
    std::string opcode;       ///< the mnemonic with its modifiers: "LDG.E.128.CONSTANT"
    std::string operands;     ///< as printed, without the trailing ';'
    std::string file;         ///< the source file its line information names; empty when none
    int line = 0;
};

/// The code of one kernel or device function of a cubin.
struct SassFunction {
    std::string name; ///< the symbol: mangled for C++ names
    std::vector<SassInstruction> instructions;
};

/// The functions of nvdisasm's output, in its order. Throws Error(bad_input) naming `name` and the
/// line of the output that cannot be read (an instruction outside any function, a line directive
/// without a file or line, an instruction line without a ';'), or past which it holds more than
/// `max_instructions`.
std::vector<SassFunction> parse_disassembly(std::string_view text, const std::string& name,
                                            std::size_t max_instructions = DisassemblyLimits{}.max_instructions);

} // namespace harness::compile
