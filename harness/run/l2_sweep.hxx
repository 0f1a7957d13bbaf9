#pragma once
// A kernel that reads a buffer once, used to leave the L2 holding only clean lines.

#include <string_view>

namespace harness::run {

/// Entry point in l2_sweep_ptx(): (const uint4* data, uint64 count, uint32* sink). It reads
/// `count` 16-byte words with a grid-stride loop; `sink` is written only if the words XOR to a
/// value they never do, which keeps the loads alive.
inline constexpr const char* l2_sweep_entry = "harness_l2_sweep";

/// PTX for sm_70 and later (the driver compiles it for the device when the module is loaded), so
/// the worker needs no compiler of its own.
std::string_view l2_sweep_ptx();

} // namespace harness::run
