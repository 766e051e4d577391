#include "ferrite/runtime/thread_pool.h"

#include <algorithm>

namespace ferrite {
namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Participant k of n owns [floor(count*k/n), floor(count*(k+1)/n)): the
// split depends on (count, n) only. With count = q*n + r this is
// q*k + floor(r*k/n), which cannot overflow (r*k < n*n <= 2^64).
inline uint64_t split_point(uint64_t count, uint32_t k, uint32_t n) {
  return (count / n) * k + (count % n) * k / n;
}

// About 20-50 µs of pause instructions before a waiting thread starts yielding.
constexpr uint32_t kPollsBeforeYield = 1024;

}  // namespace

uint32_t ThreadPool::hardware_threads() {
  return std::max(1u, std::thread::hardware_concurrency());
}

ThreadPool::ThreadPool(uint32_t threads, std::chrono::microseconds spin)
    : threads_(std::max(1u, threads)), spin_(spin) {
  workers_.reserve(threads_ - 1);
  for (uint32_t i = 1; i < threads_; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_seq_cst);
  generation_.fetch_add(1, std::memory_order_seq_cst);
  generation_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::run_share(uint32_t index) {
  const uint64_t begin = split_point(count_, index, threads_);
  const uint64_t end = split_point(count_, index + 1, threads_);
  if (begin < end) trampoline_(body_, begin, end);
}

void ThreadPool::run_job(uint64_t count, Trampoline trampoline, void* body) {
  trampoline_ = trampoline;
  body_ = body;
  count_ = count;
  pending_.store(threads_ - 1, std::memory_order_relaxed);
  // seq_cst pairs with the worker's sleepers_ increment: either the worker
  // sees the new generation before it sleeps, or we see it asleep here.
  generation_.fetch_add(1, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0) generation_.notify_all();
  run_share(0);
  // Spin briefly; then yield, so that on an oversubscribed machine a worker
  // that lost its core gets it back instead of waiting out our time slice.
  for (uint32_t polls = 0; pending_.load(std::memory_order_acquire) != 0; ++polls) {
    if (polls < kPollsBeforeYield) {
      cpu_relax();
    } else {
      std::this_thread::yield();
    }
  }
}

void ThreadPool::worker_loop(uint32_t index) {
  using SpinClock = std::chrono::steady_clock;
  uint64_t seen = 0;  // generation_ starts at 0; no job can precede the constructor
  for (;;) {
    auto deadline = SpinClock::now() + spin_;
    uint32_t polls = 0;
    uint64_t current;
    while ((current = generation_.load(std::memory_order_acquire)) == seen) {
      if (++polls < kPollsBeforeYield) {
        cpu_relax();
      } else {
        std::this_thread::yield();  // see run_job
      }
      if ((polls & 255u) != 0 || SpinClock::now() < deadline) continue;
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      if (generation_.load(std::memory_order_seq_cst) == seen) {
        generation_.wait(seen, std::memory_order_seq_cst);
      }
      sleepers_.fetch_sub(1, std::memory_order_seq_cst);
      deadline = SpinClock::now() + spin_;
    }
    seen = current;
    if (stop_.load(std::memory_order_acquire)) return;
    run_share(index);
    pending_.fetch_sub(1, std::memory_order_release);
  }
}

}  // namespace ferrite
