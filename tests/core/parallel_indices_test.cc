// for_each_index (core/parallel_indices.h): every index once, and a stop
// never leaves an index below the lowest stopping one unvisited.
#include "ferrite/core/parallel_indices.h"

#include <sched.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

namespace ferrite {
namespace {

TEST(ParallelIndicesTest, VisitsEveryIndexExactlyOnce) {
  for (unsigned threads : {1u, 2u, 3u, 8u}) {
    for (size_t count : {size_t{0}, size_t{1}, size_t{15}, size_t{16}, size_t{17}, size_t{1000}}) {
      auto visits = std::make_unique<std::atomic<int>[]>(count + 1);
      for_each_index(count, threads, 16, [&](size_t i) {
        visits[i].fetch_add(1);
        return true;
      });
      for (size_t i = 0; i < count; ++i) {
        ASSERT_EQ(visits[i].load(), 1) << "index " << i << " of " << count << ", " << threads
                                       << " threads";
      }
    }
  }
}

TEST(ParallelIndicesTest, SerialLoopStopsAtTheFirstFalse) {
  std::vector<size_t> seen;
  for_each_index(100, 1, 16, [&](size_t i) {
    seen.push_back(i);
    return i != 41;
  });
  ASSERT_EQ(seen.size(), 42u);
  EXPECT_EQ(seen.back(), 41u);
}

TEST(ParallelIndicesTest, LittleWorkStaysOnTheCallingThread) {
  const std::thread::id caller = std::this_thread::get_id();
  const size_t little = kMinimumParallelChunks * 16 - 1;
  std::atomic<int> elsewhere{0};
  for_each_index(little, 8, 16, [&](size_t) {
    if (std::this_thread::get_id() != caller) elsewhere.fetch_add(1);
    return true;
  });
  EXPECT_EQ(elsewhere.load(), 0);
}

TEST(ParallelIndicesTest, EveryIndexBelowTheLowestStopIsVisited) {
  std::mt19937 random(7);
  for (int run = 0; run < 200; ++run) {
    const size_t count = 50 + random() % 500;
    const size_t first_stop = random() % count;
    const size_t second_stop = first_stop + random() % (count - first_stop);
    auto visited = std::make_unique<std::atomic<bool>[]>(count);
    for_each_index(count, 4, 1 + random() % 20, [&](size_t i) {
      visited[i].store(true);
      return i != first_stop && i != second_stop;
    });
    for (size_t i = 0; i <= first_stop; ++i) {
      ASSERT_TRUE(visited[i].load()) << "run " << run << ": index " << i << " below the stop at "
                                     << first_stop << " was skipped";
    }
  }
}

// results_in_order: the values in index order, or the lowest failing
// index's error, whatever the threads and chunks; a value type needs no
// default constructor.
struct Boxed {
  explicit Boxed(size_t v) : value(v) {}
  size_t value;
};
static_assert(!std::is_default_constructible_v<Boxed>);

template <class T, bool kInPlace = false>
void expect_results_in_order_like_a_serial_loop(T (*make)(size_t),
                                                 size_t (*value_of)(const T&)) {
  std::mt19937 random(11);
  for (int run = 0; run < 100; ++run) {
    const size_t count = 50 + random() % 400;
    const size_t chunk = 1 + random() % 20;
    const size_t first_failure = random() % (2 * count);  // past the end: none
    const size_t second_failure = first_failure + random() % count;
    auto fn = [&](size_t i) -> Result<T> {
      if (i == first_failure || i == second_failure) {
        return make_error(ErrorCode::kInvalidExecutionPlan, "failed at {}", i);
      }
      return make(i * 3);
    };
    auto result = [&] {
      if constexpr (kInPlace) {
        return results_in_place<T>(count, 4, chunk, fn);
      } else {
        return results_in_order<T>(count, 4, chunk, fn);
      }
    }();
    if (first_failure < count) {
      ASSERT_FALSE(result) << "run " << run;
      EXPECT_EQ(result.error().message(), "failed at " + std::to_string(first_failure));
      continue;
    }
    ASSERT_TRUE(result) << "run " << run << ": " << result.error().to_string();
    ASSERT_EQ(result->size(), count);
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(value_of((*result)[i]), i * 3) << i;
  }
}

TEST(ParallelIndicesTest, ResultsInOrderAreWhatASerialLoopReturns) {
  expect_results_in_order_like_a_serial_loop<std::string>(
      [](size_t v) { return std::to_string(v); },
      [](const std::string& s) -> size_t { return std::stoul(s); });
}

TEST(ParallelIndicesTest, ResultsInOrderNeedNoDefaultConstructor) {
  expect_results_in_order_like_a_serial_loop<Boxed>([](size_t v) { return Boxed(v); },
                                                    [](const Boxed& b) { return b.value; });
}

// results_in_place: the same answers, each value moved straight into its
// place; on failure the values made so far are destroyed (strings: a leak
// shows under the sanitizers).
TEST(ParallelIndicesTest, ResultsInPlaceAreWhatASerialLoopReturns) {
  expect_results_in_order_like_a_serial_loop<std::string, true>(
      [](size_t v) { return std::string(40, 'x') + std::to_string(v); },
      [](const std::string& s) -> size_t { return std::stoul(s.substr(40)); });
}

TEST(ParallelIndicesTest, ResultsInPlaceNeedNoDefaultConstructor) {
  expect_results_in_order_like_a_serial_loop<Boxed, true>([](size_t v) { return Boxed(v); },
                                                          [](const Boxed& b) { return b.value; });
}

// Several threads calling at once share the kept workers: every call sees
// each of its indices once, and the helpers' plain writes are visible to the
// caller when the call returns (a missing hand-over shows as a wrong slot
// here, and as a race or use-after-return under the sanitizers).
TEST(ParallelIndicesTest, ConcurrentCallersEachGetEveryIndexOnce) {
  constexpr int kCallers = 4;
  std::vector<std::thread> callers;
  std::vector<int> failures(kCallers, 0);
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([c, &failures] {
      for (int call = 0; call < 100; ++call) {
        const size_t count = 200 + static_cast<size_t>((c * 37 + call * 11) % 400);
        std::vector<int> slots(count, 0);  // plain ints: written by whichever thread
        for_each_index(count, 3, 8, [&](size_t i) {
          slots[i] += static_cast<int>(i) + 1;
          return true;
        });
        for (size_t i = 0; i < count; ++i) {
          if (slots[i] != static_cast<int>(i) + 1) ++failures[c];
        }
      }
    });
  }
  for (auto& caller : callers) caller.join();
  for (int c = 0; c < kCallers; ++c) EXPECT_EQ(failures[c], 0) << "caller " << c;
}

// The helpers are kept between calls: some thread other than the caller
// works on more than one call (with threads started per call, none would).
TEST(ParallelIndicesTest, HelperThreadsAreKeptBetweenCalls) {
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> most_calls_on_one_helper{0};
  for (int call = 1; call <= 20; ++call) {
    for_each_index(64, 2, 1, [&](size_t) {
      thread_local int last_call = 0;
      thread_local int calls = 0;
      if (std::this_thread::get_id() != caller && last_call != call) {
        last_call = call;
        ++calls;
        int seen = most_calls_on_one_helper.load();
        while (calls > seen && !most_calls_on_one_helper.compare_exchange_weak(seen, calls)) {
        }
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));  // room for the helper
      return true;
    });
  }
  EXPECT_GT(most_calls_on_one_helper.load(), 1);
}

// However calls overlap — several callers at once, each asking for more
// threads than the machine has, phases beside phases — no more helper
// threads than max_helper_threads() ever take part.
TEST(ParallelIndicesTest, HelpersNeverOutnumberTheCap) {
  const std::thread::id main_caller = std::this_thread::get_id();
  std::mutex mutex;
  std::set<std::thread::id> callers{main_caller};
  std::set<std::thread::id> seen;
  auto record = [&] {
    std::lock_guard<std::mutex> lock(mutex);
    seen.insert(std::this_thread::get_id());
  };
  std::vector<std::thread> threads;
  for (int c = 0; c < 3; ++c) {
    threads.emplace_back([&] {
      {
        std::lock_guard<std::mutex> lock(mutex);
        callers.insert(std::this_thread::get_id());
      }
      for (int call = 0; call < 20; ++call) {
        run_beside(
            kMaxCompileThreads, [&] { record(); },
            [&] {
              for_each_index(256, kMaxCompileThreads, 1, [&](size_t) {
                record();
                std::this_thread::sleep_for(std::chrono::microseconds(20));
                return true;
              });
            });
      }
    });
  }
  for (auto& t : threads) t.join();
  size_t helpers = 0;
  for (const auto& id : seen) helpers += callers.contains(id) ? 0 : 1;
  EXPECT_LE(helpers, max_helper_threads());
  EXPECT_GE(max_helper_threads(), 1u);
  EXPECT_LE(max_helper_threads(), size_t{kMaxCompileThreads} - 1);
}

// run_beside: both pieces run once, whoever runs `beside`; the call returns
// only after a slow `beside` is done, with its plain writes visible; on one
// thread the order is beside, then here.
TEST(ParallelIndicesTest, RunBesideRunsBothAndWaitsForTheSlowOne) {
  for (int round = 0; round < 50; ++round) {
    int beside_runs = 0;
    int here_runs = 0;
    std::vector<int> written;
    run_beside(
        2,
        [&] {
          if (round % 5 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
          written.assign(1000, round);
          ++beside_runs;
        },
        [&] { ++here_runs; });
    ASSERT_EQ(beside_runs, 1) << "round " << round;
    ASSERT_EQ(here_runs, 1) << "round " << round;
    ASSERT_EQ(written, std::vector<int>(1000, round)) << "round " << round;
  }
  std::vector<std::string> order;
  run_beside(1, [&] { order.push_back("beside"); }, [&] { order.push_back("here"); });
  EXPECT_EQ(order, (std::vector<std::string>{"beside", "here"}));
}

TEST(ParallelIndicesTest, DefaultThreadsAreBounded) {
  EXPECT_GE(default_compile_threads(), 1u);
  EXPECT_LE(default_compile_threads(), kMaxCompileThreads);
}

TEST(ParallelIndicesTest, DefaultThreadsFollowTheCpusThisThreadMayUse) {
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof(saved), &saved), 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &saved)) {
      CPU_SET(cpu, &one);
      break;
    }
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  const unsigned pinned = default_compile_threads();
  ASSERT_EQ(sched_setaffinity(0, sizeof(saved), &saved), 0);
  EXPECT_EQ(pinned, 1u);
}

}  // namespace
}  // namespace ferrite
