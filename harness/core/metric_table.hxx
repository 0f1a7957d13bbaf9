#pragma once
// The metric table: every figure the harness measures, derives or predicts is one row here, with
// how it is gated and the roles that collectors, comparison, reports and docs read from it.
// Adding a range-profiler counter is adding its row (docs/architecture.md, "A metric").

#include "harness/core/metric_info.hxx"

#include <optional>
#include <span>

namespace harness::metric_rows {

using enum Direction;
using enum Stability;
using enum Collector;
using enum OccupancyRole;
using Roles = MetricRoles;

// The formulas of derived figures (MetricRoles::formula).

/// inputs[0] / inputs[1]; none where the denominator is zero.
constexpr std::optional<double> ratio(std::span<const double> v)
{
    if (v[1] == 0) return std::nullopt;
    return v[0] / v[1];
}

/// inputs[0] - inputs[1].
constexpr std::optional<double> difference(std::span<const double> v)
{
    return v[0] - v[1];
}

/// inputs[0] + inputs[1].
constexpr std::optional<double> sum(std::span<const double> v)
{
    return v[0] + v[1];
}

/// 100 * (actual - ideal) / ideal: an excess as a share of the ideal, in percent.
constexpr std::optional<double> excess_percent(std::span<const double> v)
{
    const double excess[] = {v[0] - v[1], v[1]};
    const auto r = ratio(excess);
    return r ? std::optional<double>(100.0 * *r) : std::nullopt;
}

/// adds + multiplies + 2 x fused multiply-adds.
constexpr std::optional<double> fp32_operations(std::span<const double> v)
{
    return v[0] + v[1] + 2.0 * v[2];
}

/// FLOP / us = MFLOP/s; / 1e3 -> GFLOP/s.
constexpr std::optional<double> gflop_per_s(std::span<const double> v)
{
    const auto r = ratio(v);
    return r ? std::optional<double>(*r / 1e3) : std::nullopt;
}

/// DRAM traffic against Nsight Compute's: within 2 % or 1 MiB.
inline constexpr NcuCounterpart dram_crosscheck{.compared = true, .tolerance = 0.02, .floor = 1048576.0};

// The hotspot families: profile/hotspots.cxx ranks source lines by the four metrics whose rows say
// so (MetricRoles::lines), counted per instruction. A regression of a global or shared figure
// prefers lines of its own access kind (a load figure, load lines); spills and local memory are
// explained by local-memory lines.
inline constexpr HotspotFamily global_load{"excess_global_sectors", "global load"};
inline constexpr HotspotFamily global_store{"excess_global_sectors", "global store"};
inline constexpr HotspotFamily global_any{"excess_global_sectors", ""};
inline constexpr HotspotFamily shared_load{"excess_shared_wavefronts", "shared load"};
inline constexpr HotspotFamily shared_store{"excess_shared_wavefronts", "shared store"};
inline constexpr HotspotFamily shared_any{"excess_shared_wavefronts", ""};
inline constexpr HotspotFamily local{"local_sectors", "local"};
inline constexpr HotspotFamily branch{"divergent_branch_targets", "branch"};
// Predicted figures are explained by the predicted accesses (CaseResult::predicted_accesses), not
// by hotspots; their family names the access kind a regression's line is taken from.
inline constexpr HotspotFamily predicted_load{"predicted_excess_global_sectors", "global load"};
inline constexpr HotspotFamily predicted_store{"predicted_excess_global_sectors", "global store"};
inline constexpr HotspotFamily predicted_global{"predicted_excess_global_sectors", ""};
inline constexpr HotspotFamily predicted_shared{"predicted_excess_shared_wavefronts", ""};

inline constexpr MetricInfo table[] = {
    // Timing pass.
    // Kernel durations of kernels under 20 us move by up to 0.42 us between processes on an H100
    // (seven checks of every suite against their baselines, 51 such cases each), a shift of the
    // whole sample set that no within-run test sees: 0.5 us at least (CUDA events, which count the
    // launch latency, moved by up to 1.2 us and needed 2). Long kernels move by up to 2.5 %
    // between runs: 2 %, or 4 widths of the baseline's own spread where that is larger.
    {"time_median", "kernel durations, unprofiled pass", "us", lower_is_better, noisy, timing, "samples 2% min 0.5",
     true, "median kernel time over the timed samples", Roles{.html = {1, "median"}, .console = {1, "{:.2f} us"}}},
    {"time_min", "kernel durations, unprofiled pass", "us", lower_is_better, noisy, timing, "ignore", true,
     "fastest timed sample"},
    {"time_noise", "kernel durations, unprofiled pass", "%", lower_is_better, noisy, timing, "ignore", true,
     "relative standard deviation of the samples", Roles{.html = {2, "noise"}}},
    {"time_samples", "kernel durations, unprofiled pass", "count", neither, noisy, timing, "ignore", true,
     "number of timed samples"},
    {"gflops", "suite flops expression / time_median", "GFLOP/s", higher_is_better, noisy, timing, "ignore", true,
     "useful floating-point throughput (the suite's operation count over the median time)",
     Roles{.html = {3, "throughput"}}},
    {"bandwidth", "suite bytes expression / time_median", "GB/s", higher_is_better, noisy, timing, "ignore", true,
     "compulsory-traffic bandwidth (the suite's byte count over the median time)", Roles{.html = {4, "bandwidth"}}},

    // Static resources: from the loaded kernel, or from the cubin in the static tier. Registers and
    // shared memory move with most edits; what fails is the occupancy they lead to (blocks per SM,
    // theoretical occupancy) and local memory, so they are reported ("report"), not gated.
    {"registers", "cuFuncGetAttribute(NUM_REGS)", "regs/thread", lower_is_better, exact, resources, "report", true,
     "registers per thread of the kernel as loaded",
     Roles{.occupancy = limits, .html = {5, "registers"}, .console = {2, "{:.0f} regs"}}},
    {"static_shared_bytes", "cuFuncGetAttribute(SHARED_SIZE_BYTES)", "B", lower_is_better, exact, resources, "report",
     true, "statically declared shared memory per block",
     Roles{.occupancy = limits,
           .companion = "dynamic_shared_bytes",
           .html = {.order = 6, .label = "shared", .with_companion = true},
           .console = {.order = 4, .label = "smem {:.0f}", .with_companion = true}}},
    {"dynamic_shared_bytes", "suite shared_bytes expression", "B", lower_is_better, exact, resources, "report", true,
     "dynamic shared memory per block requested at launch", Roles{.occupancy = limits}},
    {"spill_store_bytes", "ptxas report (-Xptxas=-v)", "B", lower_is_better, exact, resources, "exact", true,
     "bytes per thread stored to local memory because registers ran out",
     Roles{.hotspot = local,
           .companion = "spill_load_bytes",
           .html = {.order = 8, .label = "spill", .only_when_nonzero = true},
           .console = {.order = 3, .label = "spill {:.0f}", .with_companion = true}}},
    {"spill_load_bytes", "ptxas report (-Xptxas=-v)", "B", lower_is_better, exact, resources, "exact", true,
     "bytes per thread loaded back from local memory after spilling", Roles{.hotspot = local}},
    {"barriers", "cubin .nv.info EIATTR_NUM_BARRIERS", "count", lower_is_better, exact, resources, "report", true,
     "named barriers the kernel uses", Roles{.occupancy = limits}},
    {"local_bytes", "cuFuncGetAttribute(LOCAL_SIZE_BYTES)", "B", lower_is_better, exact, resources, "exact", true,
     "local memory (stack and spills) per thread",
     Roles{.hotspot = local, .html = {.order = 7, .label = "local", .only_when_nonzero = true}}},
    {"blocks_per_sm", "cuOccupancyMaxActiveBlocksPerMultiprocessor", "blocks", higher_is_better, exact, resources,
     "exact", true, "resident blocks per SM the occupancy calculator allows",
     Roles{.occupancy = measures, .html = {9, "resident"}}},
    {"theoretical_occupancy", "occupancy calculator", "fraction", higher_is_better, exact, resources, "exact", true,
     "resident warps / maximum warps per SM",
     Roles{.occupancy = measures, .html = {10, "theoretical occ."}, .console = {5, "occ {:.0f}%"}}},

    // Verification: gated through the case status, reported for reference. Noisy: kernels that
    // add floats with atomics sum in a different order each run (reduce/atomic on an H100: max abs
    // error 4.5 to 19 at N=16777216 over five runs).
    {"verify_max_abs_error", "comparison with the reference variant", "abs", lower_is_better, noisy, verification,
     "ignore", true, "largest absolute difference from the reference output"},
    {"verify_max_rel_error", "comparison with the reference variant", "rel", lower_is_better, noisy, verification,
     "ignore", true, "largest relative difference from the reference output"},

    // CUPTI Range Profiler, one range per launch, summed over a variant's launches. Raw request,
    // sector and instruction counts follow the work and any edit of the code: reported. The
    // pathologies are gated on sectors per request and on the SASS excess figures.
    {"global_ld_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "requests", lower_is_better, exact,
     range_profiler, "report", true, "global load requests (one per warp-level load instruction)",
     Roles{.ncu = {.compared = true}}},
    {"global_ld_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "sectors", lower_is_better, exact,
     range_profiler, "report", true, "32-byte sectors the global loads touched",
     Roles{.hotspot = global_load, .console = {6, "ld sectors {:.0f}"}, .ncu = {.compared = true}}},
    {"global_st_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "requests", lower_is_better, exact,
     range_profiler, "report", true, "global store requests", Roles{.ncu = {.compared = true}}},
    {"global_st_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "sectors", lower_is_better, exact,
     range_profiler, "report", true, "32-byte sectors the global stores touched",
     Roles{.hotspot = global_store, .ncu = {.compared = true}}},
    // The hardware wavefront counters vary by up to 2 % between identical runs: never gated, and
    // opt-in, since they cost the range profiler a pass of their own (five instead of four) for
    // what shared_wavefronts (SASS-instrumented, exact) already gives; bank conflicts are gated on
    // excess_shared_wavefronts. Nsight Compute's differ as much between its runs: cross-checked within 3 %.
    {"shared_ld_wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "wavefronts", lower_is_better,
     noisy, range_profiler, "ignore", false,
     "shared-memory load wavefronts, hardware counter (opt-in; shared_wavefronts is the exact figure)",
     Roles{.hotspot = shared_load, .ncu = {.compared = true, .tolerance = 0.03}}},
    {"shared_st_wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "wavefronts", lower_is_better,
     noisy, range_profiler, "ignore", false, "shared-memory store wavefronts, hardware counter (opt-in)",
     Roles{.hotspot = shared_store, .ncu = {.compared = true, .tolerance = 0.03}}},
    {"shared_ld_instructions", "smsp__sass_inst_executed_op_shared_ld.sum", "warp insts", neither, exact,
     range_profiler, "report", true, "warp-level shared-memory load instructions", Roles{.ncu = {.compared = true}}},
    {"shared_st_instructions", "smsp__sass_inst_executed_op_shared_st.sum", "warp insts", neither, exact,
     range_profiler, "report", true, "warp-level shared-memory store instructions", Roles{.ncu = {.compared = true}}},
    {"shared_bank_conflicts_raw", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", "conflicts", lower_is_better,
     noisy, range_profiler, "ignore", false,
     "the hardware's bank-conflict counter; it counts arbitration too, so it is shown, never gated"},
    {"instructions", "smsp__inst_executed.sum", "warp insts", lower_is_better, exact, range_profiler, "report", true,
     "warp-level instructions executed", Roles{.ncu = {.compared = true}}},
    {"fp32_add_thread_instructions", "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", "thread insts", neither,
     exact, range_profiler, "ignore", true, "FP32 adds executed by threads (predicate on)"},
    {"fp32_mul_thread_instructions", "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", "thread insts", neither,
     exact, range_profiler, "ignore", true, "FP32 multiplies executed by threads (predicate on)"},
    {"fp32_fma_thread_instructions", "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "thread insts", neither,
     exact, range_profiler, "ignore", true, "FP32 fused multiply-adds executed by threads (predicate on)",
     Roles{.ncu = {.compared = true}}},
    {"achieved_occupancy", "sm__warps_active.avg.pct_of_peak_sustained_active", "fraction", higher_is_better, noisy,
     range_profiler, "abs 0.15", true,
     "average active warps / maximum warps per SM, measured (kernels of a few microseconds vary by up to 10 "
     "points between runs)",
     Roles{.html = {11, "achieved occ."},
           .counter = {.launches = LaunchCombine::duration_weighted, .percent = true},
           .ncu = {.compared = true, .tolerance = 0.05, .absolute = true}}},
    // DRAM traffic is cross-checked within 2 % or 1 MiB: how many dirty lines a kernel evicts, rather
    // than leaves in the L2 at its end, moves by up to ~1.2 MB between runs of the same kernel in
    // either tool.
    {"dram_read_bytes", "dram__bytes_read.sum", "B", lower_is_better, noisy, range_profiler, "rel 5% min 1048576", true,
     "bytes read from device memory (depends on the cache state)", Roles{.ncu = dram_crosscheck}},
    {"dram_write_bytes", "dram__bytes_write.sum", "B", lower_is_better, noisy, range_profiler, "rel 10% min 2097152",
     true,
     "bytes written to device memory: the dirty lines the L2 evicts during the kernel (what it still holds at "
     "the end is not counted), so it moves between runs more than reads do",
     Roles{.ncu = dram_crosscheck}},

    // CUPTI SASS Metrics: instrumented, exact, per instruction and so per source line.
    {"global_sectors", "smsp__sass_sectors_mem_global", "sectors", lower_is_better, exact, sass_metrics, "ignore", true,
     "global sectors accessed, loads and stores (SASS-instrumented)", Roles{.hotspot = global_any}},
    {"global_sectors_ideal", "smsp__sass_sectors_mem_global_ideal", "sectors", neither, exact, sass_metrics, "ignore",
     true, "global sectors a perfectly coalesced access pattern would touch", Roles{.hotspot = global_any}},
    {"shared_wavefronts", "smsp__sass_l1tex_pipe_lsu_wavefronts_mem_shared", "wavefronts", lower_is_better, exact,
     sass_metrics, "ignore", true, "shared-memory wavefronts (SASS-instrumented)",
     Roles{.hotspot = shared_any, .ncu = {.compared = true}}},
    {"shared_wavefronts_ideal", "smsp__sass_l1tex_pipe_lsu_wavefronts_mem_shared_ideal", "wavefronts", neither, exact,
     sass_metrics, "ignore", true, "shared-memory wavefronts without bank conflicts"},
    {"local_sectors", "smsp__sass_sectors_mem_local", "sectors", lower_is_better, exact, sass_metrics, "exact", true,
     "local-memory sectors accessed (spills and stack arrays)", Roles{.hotspot = local, .lines = {.access = "local"}}},
    {"divergent_branch_targets", "smsp__sass_branch_targets_threads_divergent", "branches", lower_is_better, exact,
     sass_metrics, "exact", true, "branches whose active threads went more than one way",
     Roles{.hotspot = branch, .ncu = {.compared = true}, .lines = {.access = "branch"}}},

    // Derived, each by its formula (MetricRoles::formula), in this order: a formula may read a figure
    // derived above it (dram_bytes before arithmetic_intensity).
    {"global_ld_sectors_per_request", "global_ld_sectors / global_ld_requests", "sectors/request", lower_is_better,
     exact, derived, "exact", true, "4 for coalesced 32-bit loads, 32 when every thread touches its own sector",
     Roles{.hotspot = global_load, .formula = {{"global_ld_sectors", "global_ld_requests"}, ratio}}},
    {"global_st_sectors_per_request", "global_st_sectors / global_st_requests", "sectors/request", lower_is_better,
     exact, derived, "exact", true, "4 for coalesced 32-bit stores, 32 when every thread touches its own sector",
     Roles{.hotspot = global_store, .formula = {{"global_st_sectors", "global_st_requests"}, ratio}}},
    {"excess_global_sectors", "global_sectors - global_sectors_ideal", "sectors", lower_is_better, exact, derived,
     "exact", true, "sectors beyond what coalesced accesses would need: uncoalesced traffic",
     Roles{.hotspot = global_any,
           .formula = {{"global_sectors", "global_sectors_ideal"}, difference},
           .lines = {.access = "global", .by_instruction_kind = true}}},
    {"excess_global_sectors_pct", "100 * excess_global_sectors / global_sectors_ideal", "%", lower_is_better, exact,
     derived, "ignore", true, "excess global sectors as a share of the ideal",
     Roles{.formula = {{"global_sectors", "global_sectors_ideal"}, excess_percent}}},
    {"excess_shared_wavefronts", "shared_wavefronts - shared_wavefronts_ideal", "wavefronts", lower_is_better, exact,
     derived, "exact", true, "wavefronts beyond the conflict-free ideal: bank conflicts",
     Roles{.hotspot = shared_any,
           .formula = {{"shared_wavefronts", "shared_wavefronts_ideal"}, difference},
           .lines = {.access = "shared", .by_instruction_kind = true}}},
    {"shared_conflict_ways", "shared_wavefronts / shared_wavefronts_ideal", "x", lower_is_better, exact, derived,
     "ignore", true, "average replay factor of shared accesses (1 = conflict-free, 32 = fully serialised)",
     Roles{.formula = {{"shared_wavefronts", "shared_wavefronts_ideal"}, ratio}}},
    {"flops", "fp32 adds + muls + 2 x fmas (thread instructions)", "FLOP", neither, exact, derived, "report", true,
     "FP32 floating-point operations executed",
     Roles{.formula = {{"fp32_add_thread_instructions", "fp32_mul_thread_instructions", "fp32_fma_thread_instructions"},
                       fp32_operations}}},
    {"dram_bytes", "dram_read_bytes + dram_write_bytes", "B", lower_is_better, noisy, derived, "rel 5% min 2097152",
     true, "device-memory traffic",
     Roles{.from_noisy_counters = true,
           .console = {7, "DRAM {:.0f} B"},
           .formula = {{"dram_read_bytes", "dram_write_bytes"}, sum}}},
    {"arithmetic_intensity", "flops / dram_bytes", "FLOP/B", neither, noisy, derived, "ignore", true,
     "operations per byte of device-memory traffic (roofline x axis)",
     Roles{.formula = {{"flops", "dram_bytes"}, ratio}}},
    {"achieved_gflops", "flops / time_median", "GFLOP/s", higher_is_better, noisy, derived, "ignore", true,
     "executed FP32 throughput (roofline y axis)", Roles{.formula = {{"flops", "time_median"}, gflop_per_s}}},

    // Predicted from the kernel's PTX at the case's own launch, without a GPU (analysis/access_model,
    // docs/static-analysis.md): the figures the GPU measures under the names without "predicted_",
    // for cases whose every access is predicted; a case that is not gets none of them, never a zero.
    // Raw counts follow the work (reported); the pathologies are gated as the GPU's are.
    {"predicted_global_ld_requests", "PTX access model: warp-level global loads", "requests (predicted)",
     lower_is_better, exact, access_model, "report", true, "predicted, not measured: global load requests"},
    {"predicted_global_ld_sectors", "PTX access model: sectors of global loads", "sectors (predicted)", lower_is_better,
     exact, access_model, "report", true, "predicted, not measured: 32-byte sectors the global loads touch",
     Roles{.hotspot = predicted_load}},
    {"predicted_global_st_requests", "PTX access model: warp-level global stores", "requests (predicted)",
     lower_is_better, exact, access_model, "report", true, "predicted, not measured: global store requests"},
    {"predicted_global_st_sectors", "PTX access model: sectors of global stores", "sectors (predicted)",
     lower_is_better, exact, access_model, "report", true,
     "predicted, not measured: 32-byte sectors the global stores touch", Roles{.hotspot = predicted_store}},
    {"predicted_global_sectors", "PTX access model: sectors of global loads, stores and atomics", "sectors (predicted)",
     lower_is_better, exact, access_model, "ignore", true, "predicted, not measured: global sectors accessed",
     Roles{.hotspot = predicted_global}},
    {"predicted_global_sectors_ideal", "PTX access model: the same bytes, aligned and contiguous",
     "sectors (predicted)", neither, exact, access_model, "ignore", true,
     "predicted, not measured: global sectors a perfectly coalesced pattern would touch"},
    {"predicted_shared_wavefronts", "PTX access model: shared-memory wavefronts", "wavefronts (predicted)",
     lower_is_better, exact, access_model, "ignore", true, "predicted, not measured: shared-memory wavefronts",
     Roles{.hotspot = predicted_shared}},
    {"predicted_shared_wavefronts_ideal", "PTX access model: wavefronts without bank conflicts",
     "wavefronts (predicted)", neither, exact, access_model, "ignore", true,
     "predicted, not measured: shared-memory wavefronts without bank conflicts"},
    {"predicted_global_ld_sectors_per_request", "predicted_global_ld_sectors / predicted_global_ld_requests",
     "sectors/request (predicted)", lower_is_better, exact, access_model, "exact", true,
     "predicted, not measured: global_ld_sectors_per_request", Roles{.hotspot = predicted_load}},
    {"predicted_global_st_sectors_per_request", "predicted_global_st_sectors / predicted_global_st_requests",
     "sectors/request (predicted)", lower_is_better, exact, access_model, "exact", true,
     "predicted, not measured: global_st_sectors_per_request", Roles{.hotspot = predicted_store}},
    {"predicted_excess_global_sectors", "predicted_global_sectors - predicted_global_sectors_ideal",
     "sectors (predicted)", lower_is_better, exact, access_model, "exact", true,
     "predicted, not measured: excess_global_sectors (uncoalesced traffic)", Roles{.hotspot = predicted_global}},
    {"predicted_excess_shared_wavefronts", "predicted_shared_wavefronts - predicted_shared_wavefronts_ideal",
     "wavefronts (predicted)", lower_is_better, exact, access_model, "exact", true,
     "predicted, not measured: excess_shared_wavefronts (bank conflicts)", Roles{.hotspot = predicted_shared}},
    // Counted in the cubin's SASS by the static tier (compile/sass_classes.cxx): instructions in
    // the code, not executed. Counts move with any edit and are drift; what fails is gated per
    // source line by compare/sass_gate.cxx (docs/sass.md): an access narrowed at a line (a 128-bit
    // load become four 32-bit ones), tensor-core instructions or asynchronous copies gone, and
    // local-memory instructions appearing.
    {"sass_instructions", "nvdisasm: instructions less NOPs", "insts", lower_is_better, exact, disassembly, "report",
     true, "SASS instructions in the kernel's code"},
    {"sass_global_ld_32", "nvdisasm: LDG (none, .U8 .S16 ...)", "insts", neither, exact, disassembly, "report", true,
     "global loads of 32 bits or narrower in the SASS (a line whose accesses narrow fails)"},
    {"sass_global_ld_64", "nvdisasm: LDG .64", "insts", neither, exact, disassembly, "report", true,
     "global loads of 64 bits in the SASS (a line whose accesses narrow fails)"},
    {"sass_global_ld_128", "nvdisasm: LDG .128", "insts", neither, exact, disassembly, "report", true,
     "global loads of 128 bits in the SASS (a line whose accesses narrow fails)"},
    {"sass_global_st_32", "nvdisasm: STG (none, .U8 .S16 ...)", "insts", neither, exact, disassembly, "report", true,
     "global stores of 32 bits or narrower in the SASS (a line whose accesses narrow fails)"},
    {"sass_global_st_64", "nvdisasm: STG .64", "insts", neither, exact, disassembly, "report", true,
     "global stores of 64 bits in the SASS (a line whose accesses narrow fails)"},
    {"sass_global_st_128", "nvdisasm: STG .128", "insts", neither, exact, disassembly, "report", true,
     "global stores of 128 bits in the SASS (a line whose accesses narrow fails)"},
    {"sass_shared_ld_32", "nvdisasm: LDS (none, .U8 .S16 ...)", "insts", neither, exact, disassembly, "report", true,
     "shared loads of 32 bits or narrower in the SASS (a line whose accesses narrow fails)"},
    {"sass_shared_ld_64", "nvdisasm: LDS .64", "insts", neither, exact, disassembly, "report", true,
     "shared loads of 64 bits in the SASS (a line whose accesses narrow fails)"},
    {"sass_shared_ld_128", "nvdisasm: LDS .128", "insts", neither, exact, disassembly, "report", true,
     "shared loads of 128 bits in the SASS (a line whose accesses narrow fails)"},
    {"sass_shared_st_32", "nvdisasm: STS (none, .U8 .S16 ...)", "insts", neither, exact, disassembly, "report", true,
     "shared stores of 32 bits or narrower in the SASS (a line whose accesses narrow fails)"},
    {"sass_shared_st_64", "nvdisasm: STS .64", "insts", neither, exact, disassembly, "report", true,
     "shared stores of 64 bits in the SASS (a line whose accesses narrow fails)"},
    {"sass_shared_st_128", "nvdisasm: STS .128", "insts", neither, exact, disassembly, "report", true,
     "shared stores of 128 bits in the SASS (a line whose accesses narrow fails)"},
    {"sass_ldsm", "nvdisasm: LDSM", "insts", neither, exact, disassembly, "report", true,
     "shared-memory matrix loads (LDSM) in the SASS"},
    {"sass_local_ld", "nvdisasm: LDL", "insts", lower_is_better, exact, disassembly, "exact", true,
     "local-memory loads in the SASS (spills, stack arrays)", Roles{.hotspot = local}},
    {"sass_local_st", "nvdisasm: STL", "insts", lower_is_better, exact, disassembly, "exact", true,
     "local-memory stores in the SASS (spills, stack arrays)", Roles{.hotspot = local}},
    {"sass_async_copies", "nvdisasm: LDGSTS", "insts", neither, exact, disassembly, "report", true,
     "asynchronous global-to-shared copies in the SASS (all of them gone fails)"},
    {"sass_tma", "nvdisasm: UTMALDG UTMASTG UBLKCP ...", "insts", neither, exact, disassembly, "report", true,
     "tensor-memory-accelerator copies in the SASS (all of them gone fails)"},
    {"sass_tensor", "nvdisasm: HMMA IMMA DMMA HGMMA ...", "insts", neither, exact, disassembly, "report", true,
     "tensor-core instructions in the SASS (all of them gone fails)"},
    {"sass_fp32", "nvdisasm: FADD FMUL FFMA FMNMX ...", "insts", neither, exact, disassembly, "report", true,
     "FP32 arithmetic instructions in the SASS"},
    {"sass_fp64", "nvdisasm: DADD DMUL DFMA DMNMX", "insts", neither, exact, disassembly, "report", true,
     "FP64 arithmetic instructions in the SASS"},
    {"sass_mufu", "nvdisasm: MUFU", "insts", neither, exact, disassembly, "report", true,
     "multi-function unit instructions (reciprocal, square root, exponent, sine) in the SASS"},
    {"sass_conversions", "nvdisasm: F2F F2I I2F I2FP F2FP I2I FRND", "insts", neither, exact, disassembly, "report",
     true, "type conversions in the SASS"},
    {"sass_branches", "nvdisasm: BRA BRX JMP CALL RET", "insts", neither, exact, disassembly, "report", true,
     "branches, calls and returns in the SASS"},
    {"sass_barriers", "nvdisasm: BAR SYNCS", "insts", neither, exact, disassembly, "report", true,
     "barrier and memory-barrier-object instructions in the SASS"},
};

} // namespace harness::metric_rows
