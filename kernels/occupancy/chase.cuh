// Shared by the occupancy kernels: each warp follows a chain of dependent loads through a large table, so a
// kernel's speed is memory latency times steps divided by resident warps, and lost occupancy shows directly.
#pragma once

/// Threads per block of every occupancy kernel; the blocks-per-SM figures in their comments assume it.
constexpr int kChaseBlock = 256;

/// Dependent loads per chase; every PARTIALS count used by occupancy_registers must divide it.
constexpr int kChaseSteps = 48;

/// The warp's first sector (8 floats, 32 bytes). sectors: table elements / 8, a power of two.
__device__ __forceinline__ unsigned chase_first(unsigned warp, unsigned sectors)
{
    return (warp * 2654435761u) & (sectors - 1);
}

/// This lane's value in the current sector: the whole warp reads one 32-byte sector per step, so the chase
/// is bound by latency, not by bandwidth.
__device__ __forceinline__ float chase_load(const float* __restrict__ table, unsigned sector)
{
    return table[sector * 8 + threadIdx.x % 8];
}

/// The next sector depends on the value lane 0 just loaded, so step s + 1 cannot issue before step s returns.
/// Every lane of the warp must call it.
__device__ __forceinline__ unsigned chase_next(unsigned sector, float loaded, unsigned sectors)
{
    const unsigned leader = __shfl_sync(0xffffffffu, __float_as_uint(loaded), 0);
    return (sector * 1664525u + 1013904223u + leader) & (sectors - 1);
}
