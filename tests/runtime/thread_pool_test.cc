#include "ferrite/runtime/thread_pool.h"

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace ferrite {
namespace thread_pool_test {

// Every index runs exactly once, ranges are the documented split, and the
// caller runs range 0.
TEST(ThreadPoolTest, ParallelForCoversEveryIndexOnceWithTheDocumentedSplit) {
  for (uint32_t threads : {1u, 2u, 3u, 5u}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.threads(), threads);
    for (uint64_t count : {0ull, 1ull, 2ull, 3ull, 7ull, 64ull, 1001ull}) {
      std::vector<std::atomic<int>> hits(count);
      std::mutex mutex;
      std::set<std::pair<uint64_t, uint64_t>> ranges;
      std::atomic<bool> caller_took_first{false};
      const auto caller = std::this_thread::get_id();
      pool.parallel_for(count, [&](uint64_t begin, uint64_t end) {
        for (uint64_t i = begin; i < end; ++i) hits[i].fetch_add(1);
        std::lock_guard lock(mutex);
        ranges.emplace(begin, end);
        if (begin == 0 && std::this_thread::get_id() == caller) caller_took_first = true;
      });
      for (uint64_t i = 0; i < count; ++i) ASSERT_EQ(hits[i].load(), 1) << threads << " " << count;
      std::set<std::pair<uint64_t, uint64_t>> expected;
      const uint32_t parts = count <= 1 ? 1 : threads;
      for (uint32_t k = 0; k < parts && count > 0; ++k) {
        const uint64_t b = count * k / parts, e = count * (k + 1) / parts;
        if (b < e) expected.emplace(b, e);
      }
      EXPECT_EQ(ranges, expected) << threads << " threads, " << count;
      // Range 0 belongs to the caller; it is empty when count < threads.
      const bool first_range_empty = count == 0 || count / parts == 0;
      EXPECT_EQ(caller_took_first.load(), !first_range_empty) << threads << " threads, " << count;
    }
  }
}

// Workers that have gone to sleep (no spinning at all) still wake for every
// job, and a pool whose workers sleep shuts down cleanly.
TEST(ThreadPoolTest, SleepingWorkersWakeForEveryJob) {
  ThreadPool pool(3, std::chrono::microseconds(0));
  for (int round = 0; round < 200; ++round) {
    if (round % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::atomic<uint64_t> sum{0};
    pool.parallel_for(300, [&](uint64_t begin, uint64_t end) {
      for (uint64_t i = begin; i < end; ++i) sum.fetch_add(i);
    });
    ASSERT_EQ(sum.load(), 300u * 299u / 2) << round;
  }
}

TEST(ThreadPoolTest, ZeroThreadsMeansOne) {
  ThreadPool pool(0);
  EXPECT_EQ(pool.threads(), 1u);
  EXPECT_GE(ThreadPool::hardware_threads(), 1u);
}

}  // namespace thread_pool_test
}  // namespace ferrite
