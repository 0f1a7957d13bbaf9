#pragma once
// Wall time on the host, for the cost figures a run reports.

#include <chrono>

namespace harness {

/// Seconds elapsed since `start` on the steady clock.
inline double seconds_since(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace harness
