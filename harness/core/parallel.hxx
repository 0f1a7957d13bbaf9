#pragma once
// Independent pieces of work spread over the cores: disassemblies, parses of files.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace harness {

/// Calls `work(i)` for every i in [0, count), on at most `jobs` threads (0: one per core, at most 16).
/// Every call runs even when one throws; then the exception of the lowest index that threw is
/// rethrown, as a loop in order would have thrown it first.
template <typename Work> void for_each_index(std::size_t count, unsigned jobs, Work&& work)
{
    if (jobs == 0) jobs = std::clamp(std::thread::hardware_concurrency(), 1u, 16u);
    const std::size_t threads = std::min<std::size_t>(jobs, count);
    std::vector<std::exception_ptr> failures(count);
    if (threads <= 1) {
        for (std::size_t i = 0; i < count; ++i) try {
                work(i);
            } catch (...) {
                failures[i] = std::current_exception();
            }
    } else {
        std::atomic<std::size_t> next{0};
        std::vector<std::thread> pool;
        for (std::size_t t = 0; t < threads; ++t)
            pool.emplace_back([&] {
                for (std::size_t i; (i = next++) < count;) try {
                        work(i);
                    } catch (...) {
                        failures[i] = std::current_exception();
                    }
            });
        for (auto& thread : pool) thread.join();
    }
    for (const auto& failure : failures)
        if (failure) std::rethrow_exception(failure);
}

} // namespace harness
