// ferrite/runtime/thread_pool.h — a persistent pool for kernels that split work.
//
// Contract: `ThreadPool(n)` starts n - 1 workers once; the calling thread is
// the n-th participant of every `parallel_for`. `parallel_for(count, body)`
// calls `body(begin, end)` over disjoint ranges covering [0, count): range k
// of n is [count*k/n, count*(k+1)/n), run by participant k (the caller is
// participant 0), and returns when every range is done. The split depends on
// (count, n) only, so a kernel whose ranges write disjoint outputs computed in
// a fixed order gives the same bytes for every thread count. `body` must not
// throw and must not call `parallel_for` on the same pool. One caller at a
// time: the pool is owned by one executor's step loop.
//
// Wake-up cost: on small shared machines a sleeping worker takes milliseconds
// to wake (futex + scheduler), longer than a whole decode kernel. Workers
// therefore spin (with a pause instruction) for `spin` after their last job
// before they sleep on an atomic wait, so consecutive kernels of a step, and
// consecutive decode steps, find them awake. A waiting thread (a worker
// between jobs, the caller waiting for workers) pauses briefly, then yields
// its core on each poll, so an oversubscribed machine degrades to time
// slicing instead of spinning against a descheduled peer. `ThreadPool(1)` has no workers
// and runs every body inline.
//
// Example:
//   ThreadPool pool(2);
//   pool.parallel_for(rows, [&](uint64_t begin, uint64_t end) {
//     for (uint64_t r = begin; r < end; ++r) out[r] = dot(w + r * n, x, n);
//   });
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace ferrite {

class ThreadPool {
 public:
  explicit ThreadPool(uint32_t threads,
                      std::chrono::microseconds spin = std::chrono::microseconds(20000));
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool();

  uint32_t threads() const { return threads_; }

  template <class Body>
  void parallel_for(uint64_t count, Body&& body) {
    if (threads_ == 1 || count <= 1) {
      if (count > 0) body(uint64_t{0}, count);
      return;
    }
    run_job(count, &invoke<std::remove_reference_t<Body>>, &body);
  }

  // The machine's hardware threads (at least 1).
  static uint32_t hardware_threads();

 private:
  using Trampoline = void (*)(void* body, uint64_t begin, uint64_t end);
  template <class Body>
  static void invoke(void* body, uint64_t begin, uint64_t end) {
    (*static_cast<Body*>(body))(begin, end);
  }
  void run_job(uint64_t count, Trampoline trampoline, void* body);
  void worker_loop(uint32_t index);
  void run_share(uint32_t index);

  uint32_t threads_;
  std::chrono::microseconds spin_;
  std::vector<std::thread> workers_;
  // The current job, published by a release increment of `generation_`.
  Trampoline trampoline_ = nullptr;
  void* body_ = nullptr;
  uint64_t count_ = 0;
  alignas(64) std::atomic<uint64_t> generation_{0};
  alignas(64) std::atomic<uint32_t> pending_{0};
  alignas(64) std::atomic<uint32_t> sleepers_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace ferrite
