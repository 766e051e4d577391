// run_once: one run per flag across threads, waiters see its writes, a
// throwing run leaves the flag for the next caller.
#include "ferrite/core/once.h"

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace ferrite {
namespace {

TEST(OnceTest, RunsOnceAndLaterCallsReturnAtOnce) {
  OnceFlag flag;
  int runs = 0;
  EXPECT_FALSE(flag.done());
  run_once(flag, [&] { ++runs; });
  run_once(flag, [&] { ++runs; });
  EXPECT_EQ(runs, 1);
  EXPECT_TRUE(flag.done());
}

TEST(OnceTest, ManyThreadsRunItOnceAndAllSeeItsWrites) {
  for (int trial = 0; trial < 50; ++trial) {
    OnceFlag flag;
    std::atomic<int> runs{0};
    std::string text;  // written by the run only, read by every thread after
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    std::vector<std::string> seen(8);
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&, t] {
        while (!go.load()) {
        }
        run_once(flag, [&] {
          ++runs;
          std::this_thread::yield();  // let others arrive and wait
          text = "written once";
        });
        seen[t] = text;
      });
    }
    go = true;
    for (auto& thread : threads) thread.join();
    ASSERT_EQ(runs.load(), 1) << "trial " << trial;
    for (const auto& s : seen) EXPECT_EQ(s, "written once");
  }
}

TEST(OnceTest, AThrowingRunLeavesTheFlagForTheNextCall) {
  OnceFlag flag;
  EXPECT_THROW(run_once(flag, [] { throw std::runtime_error("no"); }), std::runtime_error);
  EXPECT_FALSE(flag.done());
  int runs = 0;
  run_once(flag, [&] { ++runs; });
  EXPECT_EQ(runs, 1);
  EXPECT_TRUE(flag.done());
}

}  // namespace
}  // namespace ferrite
