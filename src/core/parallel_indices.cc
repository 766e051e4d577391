#include "ferrite/core/parallel_indices.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>

namespace ferrite {

size_t max_helper_threads() {
  // One CPU of the process's is the caller's; at least one helper, so that a
  // caller on a single CPU still has one to hand work to.
  static const size_t cap = std::max(1u, default_compile_threads() - 1);
  return cap;
}

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

namespace {

// One for_each_index call: its indices handed out in chunks by `next`.
// Whoever takes part (the caller, and helpers counted in `active`) takes
// chunks until `next` passes `count`; a body that returns false moves `next`
// to `count`, so no new chunk is taken.
struct Job {
  const std::function<bool(size_t)>* body = nullptr;
  size_t count = 0;
  size_t chunk = 1;
  std::atomic<size_t> next{0};
  std::mutex mutex;
  std::condition_variable finished;
  size_t active = 0;  // helpers inside run(), under `mutex`

  // Every helper that joined finishes its chunk before this returns (and
  // its writes happen before the return, through `mutex`); one that joins
  // later finds the job spent.
  void wait_for_helpers() {
    std::unique_lock<std::mutex> lock(mutex);
    finished.wait(lock, [&] { return active == 0; });
  }

  void run() {
    for (;;) {
      // A read-modify-write reads the latest `next`: a helper that joins
      // after the job is spent gets no chunk and never calls `body`.
      const size_t begin = next.fetch_add(chunk, std::memory_order_relaxed);
      if (begin >= count) return;
      const size_t end = std::min(count, begin + chunk);
      for (size_t i = begin; i < end; ++i) {
        if (!(*body)(i)) {
          next.store(count, std::memory_order_relaxed);
          return;
        }
      }
    }
  }
};

// Threads kept for the life of the process, so that a call does not pay for
// starting threads and warming their allocator heaps (docs/performance.md,
// step 17). A job is queued once per helper it wants; a worker that takes a
// spent job leaves it at once. Never destroyed: workers wait on `wake_` past
// the end of main, and nothing at exit has to join them. HAZARD: the workers
// do not survive fork (Ferrite never forks).
class WorkerPool {
 public:
  static WorkerPool& instance() {
    static WorkerPool* pool = new WorkerPool;  // deliberately never freed
    return *pool;
  }

  // Offers `job` to `helpers` workers, starting workers (up to
  // max_helper_threads() in all) when too few are idle. A worker the system
  // refuses to start, or one the cap leaves unstarted, is work the caller
  // does instead.
  void offer(const std::shared_ptr<Job>& job, size_t helpers) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t h = 0; h < helpers; ++h) queue_.push_back(job);
    while (idle_ < queue_.size() && workers_ < cap_) {
      try {
        std::thread([this] { work(); }).detach();
      } catch (const std::system_error&) {
        break;
      }
      ++workers_;
      ++idle_;  // counted idle until it takes its first job
    }
    wake_.notify_all();
  }

 private:
  void work() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return !queue_.empty(); });
      std::shared_ptr<Job> job = std::move(queue_.front());
      queue_.pop_front();
      --idle_;
      lock.unlock();
      {
        std::lock_guard<std::mutex> job_lock(job->mutex);
        ++job->active;
      }
      job->run();
      {
        std::lock_guard<std::mutex> job_lock(job->mutex);
        if (--job->active == 0) job->finished.notify_all();
      }
      job.reset();
      lock.lock();
      ++idle_;
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Job>> queue_;
  const size_t cap_ = max_helper_threads();
  size_t workers_ = 0;
  size_t idle_ = 0;
};

}  // namespace

void for_each_index(size_t count, unsigned threads, size_t chunk,
                    const std::function<bool(size_t)>& body) {
  chunk = std::max<size_t>(chunk, 1);
  if (threads <= 1 || count / chunk < kMinimumParallelChunks) {
    for (size_t i = 0; i < count; ++i) {
      if (!body(i)) return;
    }
    return;
  }
  auto job = std::make_shared<Job>();
  job->body = &body;
  job->count = count;
  job->chunk = chunk;
  const size_t helpers = std::min<size_t>(threads - 1, (count + chunk - 1) / chunk - 1);
  WorkerPool::instance().offer(job, helpers);
  job->run();
  job->wait_for_helpers();
}

void run_beside(unsigned threads, const std::function<void()>& beside,
                const std::function<void()>& here) {
  if (threads <= 1) {
    beside();
    here();
    return;
  }
  const std::function<bool(size_t)> body = [&](size_t) {
    beside();
    return true;
  };
  auto job = std::make_shared<Job>();
  job->body = &body;
  job->count = 1;
  WorkerPool::instance().offer(job, 1);
  here();
  job->run();  // `beside`, unless a worker has taken it
  job->wait_for_helpers();
}

}  // namespace ferrite
