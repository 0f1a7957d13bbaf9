#pragma once
// Kernels that empty the L2: one reads a buffer twice the L2 size (evicting, and so writing back,
// every dirty line), the other then discards the buffer's lines, so the L2 ends up empty.

#include <string_view>

namespace harness::run {

/// Entry point in l2_sweep_ptx(): (const uint4* data, uint64 count, uint32* sink). It reads
/// `count` 16-byte words with a grid-stride loop; `sink` is written only if the words XOR to a
/// value they never do, which keeps the loads alive.
inline constexpr const char* l2_sweep_entry = "harness_l2_sweep";

/// PTX for sm_70 and later (the driver compiles it for the device when the module is loaded), so
/// the worker needs no compiler of its own.
std::string_view l2_sweep_ptx();

/// Entry point in l2_discard_ptx(): (const void* data, uint64 lines). It invalidates `lines`
/// 128-byte lines from `data` in the L2 without writing them back (`discard.global.L2`); the
/// memory's contents are undefined afterwards.
inline constexpr const char* l2_discard_entry = "harness_l2_discard";

/// PTX for sm_80 and later (`discard` needs them).
std::string_view l2_discard_ptx();

} // namespace harness::run
