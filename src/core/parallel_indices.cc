#include "ferrite/core/parallel_indices.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <system_error>
#include <thread>
#include <vector>

namespace ferrite {

unsigned default_compile_threads() {
  // The CPUs this process may run on (taskset, a container's cpuset), else
  // the machine's.
  unsigned cpus = std::thread::hardware_concurrency();
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0) {
    cpus = static_cast<unsigned>(CPU_COUNT(&allowed));
  }
  return std::clamp(cpus, 1u, kMaxCompileThreads);
}

void for_each_index(size_t count, unsigned threads, size_t chunk,
                    const std::function<bool(size_t)>& body) {
  chunk = std::max<size_t>(chunk, 1);
  if (threads <= 1 || count / chunk < kMinimumParallelChunks) {
    for (size_t i = 0; i < count; ++i) {
      if (!body(i)) return;
    }
    return;
  }
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  auto work = [&] {
    while (!stop.load(std::memory_order_relaxed)) {
      const size_t begin = next.fetch_add(chunk, std::memory_order_relaxed);
      if (begin >= count) return;
      const size_t end = std::min(count, begin + chunk);
      for (size_t i = begin; i < end; ++i) {
        if (!body(i)) {
          stop.store(true, std::memory_order_relaxed);
          return;
        }
      }
    }
  };
  const size_t helpers =
      std::min<size_t>(threads - 1, (count + chunk - 1) / chunk - 1);
  std::vector<std::thread> pool;
  pool.reserve(helpers);
  for (size_t t = 0; t < helpers; ++t) {
    // A thread the system refuses (a process or container limit) is work
    // the others do instead: fewer threads, the same results.
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;
    }
  }
  work();
  for (std::thread& thread : pool) thread.join();
}

}  // namespace ferrite
