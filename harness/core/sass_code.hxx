#pragma once
// The normalised SASS of a suite's kernels, kept so that a changed kernel can be shown against
// the SASS its baseline was recorded from: each kernel's instructions in program order, each with
// its source file and line, registers renamed in order of first use and everything that moves
// without the code changing (instruction addresses, encodings, branch targets, NOPs, operand
// reuse flags) left out. Kernels are stored once and named by the hash of their code; each case
// names its kernels and the hash of everything its exact figures depend on (the kernels' code,
// launch geometry, inputs and arguments).
//
//   # harness sass code
//   # suite: gemm
//   # arch: sm_90
//   case<TAB>variant<TAB>params<TAB>static hash<TAB>kernels<TAB>gpu hash<TAB>kernels
//   kernel<TAB>id<TAB>name
//   at<TAB>file<TAB>line
//   <TAB>instruction
//
// The file lies in baselines/<suite>/<arch>.sass.gz (gzip) and in a run's output folder.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace harness {

/// One normalised instruction and the source line it was compiled from.
struct SassCodeInstruction {
    std::string file; ///< relative to the project where it lies in it
    int line = 0;
    std::string text; ///< "@P0 LDG.E.128 R0, desc[UR0][R1.64]"
    bool operator==(const SassCodeInstruction&) const = default;
};

/// One kernel's normalised code.
struct SassKernelCode {
    std::string kernel; ///< as reports name it
    std::vector<SassCodeInstruction> instructions;
    /// 16 hex digits of the hash of the kernel's name and code.
    std::string id() const;
};

/// What one case launches, as one kind of run recorded it: the hash of everything its exact
/// figures depend on, and its kernels' ids in launch order.
struct SassCaseCode {
    std::string hash; ///< empty: not recorded
    std::vector<std::string> kernels;
    bool operator==(const SassCaseCode&) const = default;
};

/// The normalised SASS of one suite and architecture.
struct SassCodeFile {
    std::string suite;
    std::string arch;
    /// By variant and params text: as the static tier recorded it, and as a GPU run did.
    std::map<std::pair<std::string, std::string>, std::pair<SassCaseCode, SassCaseCode>> cases;
    std::map<std::string, SassKernelCode> kernels; ///< by id

    /// Adds `code` under its id and returns the id.
    std::string add_kernel(SassKernelCode code);
    /// Drops the kernels no case names.
    void drop_unused_kernels();
    const SassKernelCode* kernel(const std::string& id) const;
};

/// The file's text, and back; throws InputError naming `name`, the line and the field.
std::string sass_code_text(const SassCodeFile& file);
SassCodeFile parse_sass_code(std::string_view text, const std::string& name);

/// gzip of `data` (deterministic: no time or name in the header), and back. gunzip throws
/// Error(bad_input) naming `name` for data that is not gzip or inflates past `max_bytes`.
std::string gzip_text(std::string_view data);
std::string gunzip_text(std::string_view data, const std::string& name, std::size_t max_bytes = 512u << 20);

/// A hash of `parts`, as 16 hex digits.
std::string sass_hash(const std::vector<std::string>& parts);

/// One hunk of a diff: the instructions of one source line that differ.
struct SassDiffHunk {
    std::string kernel;
    std::string file;
    int baseline_line = 0;          ///< 0: the line is new
    int current_line = 0;           ///< 0: the line is gone
    std::vector<std::string> lines; ///< " text", "-text", "+text"
    /// "kernels/gemm/gemm.cu:41" of the current line (of the baseline's where it is gone).
    std::string location() const;
};

/// The hunks between two versions of a kernel: instructions grouped by source line in each;
/// lines whose instructions are equal are matched first, in order, even where the line moved
/// (an edit above it); the others are paired by position between them and diffed instruction by
/// instruction. Hunks in the order of the current kernel's lines.
std::vector<SassDiffHunk> diff_sass(const SassKernelCode& baseline, const SassKernelCode& current);

/// How a hunk's header orders the opcodes that moved: lower first, equal ones by how far they
/// moved. Empty: by how far alone.
using SassOpcodeRank = std::function<int(std::string_view opcode)>;

/// The diff of a case's kernels as text: the hunks at `first_locations` ("file:line", failing
/// verdicts' lines) first, in that order, then the others; each hunk headed by
/// "@@ kernel file:line (baseline line N) @@" and the opcodes that moved most. Empty when the code
/// is equal.
std::string sass_diff_text(const std::vector<const SassKernelCode*>& baseline,
                           const std::vector<const SassKernelCode*>& current,
                           const std::vector<std::string>& first_locations, const SassOpcodeRank& rank = {});

/// The leading hunk of that diff as a step summary shows it, at most `max_lines` lines: its header,
/// then its changed instructions of the opcodes the header names first (in turn, one of each),
/// then its other changed ones, in program order, " ..." between two where instructions are left
/// out. Empty when the code is equal.
std::string sass_diff_excerpt(const std::vector<const SassKernelCode*>& baseline,
                              const std::vector<const SassKernelCode*>& current,
                              const std::vector<std::string>& first_locations, std::size_t max_lines,
                              const SassOpcodeRank& rank = {});

} // namespace harness
