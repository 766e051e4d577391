// ferrite/core/once.h — run a function once per flag, with no system call
// unless a thread has to wait.
//
// Contract: `run_once(flag, f)` runs `f` at most once to completion per
// `flag`, whichever threads call it; every call returns after that run has
// completed, and what `f` wrote is visible to the caller (release on
// completion, acquire on every return). If `f` throws, the flag is left
// unset and the exception propagates: a later or waiting call runs `f`
// again, as with std::call_once. `done()` is true once a run has completed.
//
// Why not std::call_once: libstdc++ implements it with pthread_once, and
// glibc's pthread_once issues a futex wake after every first run, waiters or
// not — a system call per flag. The compiler sets two such flags per node
// and round (a storage's canonical bytes, an estimator input's digest); on a
// virtual machine those wakes were 12% of the digest's cost. Here the first
// run costs two atomic operations, and a wake is issued only when another
// thread registered itself as waiting.
//
// Hazards: a flag can be neither copied nor moved; `f` must not call
// run_once on its own flag (it would wait for itself, as std::call_once
// would deadlock).
//
// Example:
//   OnceFlag flag;
//   std::string text;
//   run_once(flag, [&] { text = expensive(); });  // later calls return at once
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

namespace ferrite {

class OnceFlag {
 public:
  OnceFlag() = default;
  OnceFlag(const OnceFlag&) = delete;
  OnceFlag& operator=(const OnceFlag&) = delete;

  bool done() const { return state_.load(std::memory_order_acquire) == kDone; }

 private:
  template <class F>
  friend void run_once(OnceFlag& flag, F&& f);

  static constexpr uint32_t kIdle = 0;
  static constexpr uint32_t kRunning = 1;
  static constexpr uint32_t kRunningWithWaiters = 2;
  static constexpr uint32_t kDone = 3;

  // Leaves kRunning / kRunningWithWaiters for `next`, waking waiters if any.
  void finish(uint32_t next) {
    if (state_.exchange(next, std::memory_order_acq_rel) == kRunningWithWaiters) {
      state_.notify_all();
    }
  }

  std::atomic<uint32_t> state_{kIdle};
};

template <class F>
void run_once(OnceFlag& flag, F&& f) {
  uint32_t state = flag.state_.load(std::memory_order_acquire);
  while (state != OnceFlag::kDone) {
    if (state == OnceFlag::kIdle) {
      if (!flag.state_.compare_exchange_weak(state, OnceFlag::kRunning,
                                             std::memory_order_acquire)) {
        continue;  // `state` holds what another thread set
      }
      try {
        std::forward<F>(f)();
      } catch (...) {
        flag.finish(OnceFlag::kIdle);
        throw;
      }
      flag.finish(OnceFlag::kDone);
      return;
    }
    // Running elsewhere: register as a waiter, then sleep until it changes.
    if (state == OnceFlag::kRunning &&
        !flag.state_.compare_exchange_weak(state, OnceFlag::kRunningWithWaiters,
                                           std::memory_order_acquire)) {
      continue;
    }
    flag.state_.wait(OnceFlag::kRunningWithWaiters, std::memory_order_acquire);
    state = flag.state_.load(std::memory_order_acquire);
  }
}

}  // namespace ferrite
