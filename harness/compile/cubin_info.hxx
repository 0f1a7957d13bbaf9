#pragma once
// Static resources of the kernels in a cubin, read from its ELF without a GPU, and from the ptxas
// report (-Xptxas=-v) that NVRTC returns in its log.
//
// Where each field comes from (checked against NVRTC 13.0 cubins for sm_80, sm_90 and sm_100, and
// against the driver's cuFuncGetAttribute on an H200):
//
//   field                ELF                                               ptxas log ("...")
//   registers            EIATTR_REGCOUNT in .nv.info, else SHI_REGISTERS   "Used N registers"
//                        (.text.<k> sh_info >> 24, up to sm_8x only)
//   static_shared_bytes  size of .nv.shared.<k>, less the 1 KiB window    "N bytes smem"
//                        sm_90+ cubins put in front of the variables
//   local_bytes          EIATTR_FRAME_SIZE                                 "N bytes stack frame"
//   max_stack_bytes      EIATTR_MAX_STACK_SIZE, else MIN_STACK_SIZE        "N bytes cumulative stack size"
//   barriers             EIATTR_NUM_BARRIERS in .nv.info.<k>, else         "used N barriers"
//                        SHF_BARRIERS (.text.<k> sh_flags >> 20)
//   param_bytes          EIATTR_CBANK_PARAM_SIZE in .nv.info.<k>           (not reported)
//   parameters           EIATTR_KPARAM_INFO in .nv.info.<k>, one record    (not reported)
//                        per parameter: ordinal, offset, size
//   spill_*_bytes        (not stored)                                      "N bytes spill stores/loads"
//   max_threads          EIATTR_MAX_THREADS in .nv.info.<k>: x, y, z of    (not reported)
//                        .maxntid (__launch_bounds__'s first argument, x)
//   required_threads     EIATTR_REQNTID in .nv.info.<k>: x, y, z of .reqntid (not reported)

#include "harness/core/error.hxx"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace harness::compile {

/// A cubin or kernel that cannot be read or found; what() names the problem and where.
class CubinError : public Error {
public:
    CubinError(ErrorKind kind, const std::string& message) : Error(kind, message) {}
};

/// One parameter of a kernel, as its EIATTR_KPARAM_INFO record gives it.
struct KernelParameter {
    int ordinal = 0;    ///< position in the parameter list, from 0
    int offset = 0;     ///< bytes from the start of the parameter block
    int size_bytes = 0; ///< 8 for a pointer, sizeof(T) for a value of type T
};

/// Resources ptxas allocated to one kernel: the inputs of the occupancy calculation.
struct KernelResources {
    std::string name;                     ///< mangled symbol, as nvrtcGetLoweredName returns it
    int registers = 0;                    ///< 32-bit registers per thread
    int static_shared_bytes = 0;          ///< __shared__ variables, without dynamic or driver-reserved memory
    int local_bytes = 0;                  ///< stack frame per thread (local arrays and spills)
    int max_stack_bytes = 0;              ///< stack per thread including callees (ptxas "cumulative stack size")
    int barriers = 0;                     ///< named barriers (bar.sync ids) the kernel uses
    int param_bytes = 0;                  ///< kernel parameter block; 0 when read from a ptxas log
    std::optional<int> spill_store_bytes; ///< per thread; only the ptxas log states it
    std::optional<int> spill_load_bytes;  ///< per thread; only the ptxas log states it
    /// Every parameter, by ordinal; nullopt when the cubin does not list them (or read from a ptxas log).
    std::optional<std::vector<KernelParameter>> parameters;
    /// `.maxntid` x, y, z (`__launch_bounds__(N)` gives N, 1, 1): a launch of more threads than their
    /// product is refused by the driver. nullopt when the kernel declares none.
    std::optional<std::array<int, 3>> max_threads;
    /// `.reqntid` x, y, z: the one block shape the kernel may be launched with; nullopt when none.
    std::optional<std::array<int, 3>> required_threads;
};

/// Every kernel (entry function) of one cubin.
struct CubinInfo {
    int sm_version = 0;                   ///< target architecture from the ELF header, e.g. 90 for sm_90
    std::vector<KernelResources> kernels; ///< in symbol-table order

    /// The kernel with this mangled name, else the only kernel whose demangled base name matches.
    const KernelResources* find(std::string_view name) const;
    /// As find(), but throws CubinError naming the kernel and the ones the cubin holds.
    const KernelResources& kernel(std::string_view name) const;
};

/// Reads every kernel's resources from a cubin; throws CubinError for anything that is not a
/// well-formed CUDA ELF. Every read is bounds-checked.
CubinInfo read_cubin_info(std::span<const std::byte> cubin);
/// Same, for a cubin held in a string (as nvrtcGetCUBIN fills one).
CubinInfo read_cubin_info(std::string_view cubin);

/// The source files a cubin's line table (.debug_line, written with -lineinfo) names, each as
/// recorded: joined with its folder where the table gives one (nvcc records the absolute folder of
/// the file it was given). Empty when the cubin has no line table. Throws CubinError for a cubin or
/// a line table that is malformed; DWARF versions other than 2 to 4 are skipped.
std::vector<std::string> line_table_files(std::string_view cubin);

/// The PTX text a cubin keeps of itself (section .nv_debug_ptx_txt, which Triton's and cuTile's
/// cubins carry: one line a string), its lines joined; empty when it keeps none. The text has no
/// `.loc` lines, so what is read from it names no source line. Throws CubinError for a malformed cubin.
std::string embedded_ptx(std::string_view cubin);

/// The resources of each entry function in a ptxas -v report, in the order ptxas compiled them.
/// Lines it does not know (warnings, device functions, cmem) are skipped.
std::vector<KernelResources> parse_ptxas_log(std::string_view log);

/// Fills what the ELF does not hold (spill bytes) from the same compilation's ptxas report.
void merge_ptxas_log(CubinInfo& info, std::span<const KernelResources> from_log);

/// "tile_sum" for "_Z8tile_sumPKfPf", "ns::gemm" for "_ZN2ns4gemmILi32EEvPf"; an extern "C" name unchanged.
std::string demangled_base_name(std::string_view mangled);

} // namespace harness::compile
