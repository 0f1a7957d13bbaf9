// for_each_index: every index once, on several threads, and the failure a loop in order would throw first.

#include "harness/core/parallel.hxx"

#include <atomic>
#include <gtest/gtest.h>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

namespace parallel_test {

TEST(ForEachIndex, CallsEveryIndexOnceOnSeveralThreads)
{
    std::vector<std::atomic<int>> calls(1000);
    std::mutex mutex;
    std::set<std::thread::id> threads;
    harness::for_each_index(calls.size(), 4, [&](std::size_t i) {
        ++calls[i];
        const std::lock_guard lock(mutex);
        threads.insert(std::this_thread::get_id());
    });
    for (std::size_t i = 0; i < calls.size(); ++i) EXPECT_EQ(calls[i], 1) << i;
    EXPECT_LE(threads.size(), 4u);
    EXPECT_FALSE(threads.contains(std::this_thread::get_id())) << "the work runs on the pool's threads";
}

TEST(ForEachIndex, RunsEveryCallAndRethrowsTheLowestIndexThatThrew)
{
    for (const unsigned jobs : {1u, 3u}) {
        std::atomic<int> ran{0};
        try {
            harness::for_each_index(50, jobs, [&](std::size_t i) {
                ++ran;
                if (i == 7 || i == 31) throw std::runtime_error("index " + std::to_string(i));
            });
            ADD_FAILURE() << "nothing was thrown with " << jobs << " jobs";
        } catch (const std::runtime_error& e) {
            EXPECT_STREQ(e.what(), "index 7") << jobs << " jobs";
        }
        EXPECT_EQ(ran, 50) << jobs << " jobs";
    }
}

TEST(ForEachIndex, NoWorkNoThreads)
{
    int calls = 0;
    harness::for_each_index(0, 0, [&](std::size_t) { ++calls; });
    EXPECT_EQ(calls, 0);
}

} // namespace parallel_test
