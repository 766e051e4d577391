// ferrite/core/parallel_indices.h — run independent per-index work on a few
// threads, with results that do not depend on how many.
//
// Contract: `for_each_index(count, threads, chunk, body)` calls body(i) for
// indices of [0, count), from the calling thread and up to threads - 1
// helper threads, and returns once every helper that took part is done
// (their writes happen before the return). Helpers come from workers kept
// for the life of the process (started on first need, at most
// max_helper_threads() — the process's CPUs less the caller's, at least one
// — never joined: starting threads per call cost more than small programs'
// whole phases); a worker busy elsewhere, one the cap leaves unstarted or
// one the system refuses to start is work the caller does instead. Several
// threads may call at once. The cap bounds the process's threads (and the
// memory each one's heap holds: on 2 MiB pages, at least one page a thread)
// however the calls overlap: a phase offered beside another, or a worker
// still on its way back from its last job, never starts another thread past
// it. HAZARD: the workers do not survive fork(): a forked
// child's calls run on the calling thread alone, and a fork while a worker
// held the pool's lock leaves it locked in the child (Ferrite never forks).
// Indices are handed out in chunks of `chunk`, in increasing order. body
// returns true to go on; once any call returns false no NEW chunk is taken
// (chunks already taken run to their end), so every index below the lowest
// one that returned false has been visited — a caller that keeps per-index
// results and reports the lowest failing index reports what a serial loop
// would. With threads ≤ 1, or fewer than kMinimumParallelChunks chunks of
// work (handing them out would cost more than it saves), it is a plain
// serial loop that stops at the first false.
// body must be safe to call concurrently for different indices; results go
// to per-index slots, so nothing shared is written in an order that depends
// on scheduling (DETERMINISM). `default_compile_threads()` is the number of
// CPUs the process may run on (its affinity: `taskset -c 0 ferrite compile`
// compiles on one thread), at least 1 and at most kMaxCompileThreads.
//
// Example:
//   std::vector<std::optional<Result<Node>>> out(n);
//   for_each_index(n, default_compile_threads(), 16, [&](size_t i) {
//     out[i] = resolve(i);
//     return out[i]->has_value();
//   });
#pragma once

#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "ferrite/core/in_place_array.h"
#include "ferrite/core/status.h"

namespace ferrite {

inline constexpr unsigned kMaxCompileThreads = 16;
inline constexpr size_t kMinimumParallelChunks = 4;
// Programs with fewer nodes run their compile phases one after the other
// (run_beside with one thread): handing a phase of a few microseconds to a
// worker costs more than it saves.
inline constexpr size_t kMinimumBesideNodes = 64;

unsigned default_compile_threads();
// The most helper threads the process keeps: default_compile_threads() - 1,
// at least 1.
size_t max_helper_threads();

// The threads for run_beside in a compile of a `nodes`-node program.
inline unsigned threads_beside(size_t nodes, unsigned threads) {
  return nodes >= kMinimumBesideNodes ? threads : 1;
}

void for_each_index(size_t count, unsigned threads, size_t chunk,
                    const std::function<bool(size_t)>& body);

// Two independent pieces of work at once: `beside` is offered to a kept
// worker while the calling thread runs `here`; when `here` is done and no
// worker has taken `beside`, the caller runs it too. Returns when both are
// done (a worker's writes happen before the return). With threads ≤ 1:
// beside(), then here(). The two must not touch the same data unless both
// only read it; each reports its outcome through what it captures.
void run_beside(unsigned threads, const std::function<void()>& beside,
                const std::function<void()>& here);

// fn(i) for every i of [0, count) through for_each_index, each result moved
// straight into its place in one array (core/in_place_array.h): the results
// in index order, or the lowest failing index's error — what a serial loop
// would return. No per-index slots, no second array (for plan nodes of a
// large program the slots were as much fresh memory again as the results).
// An error is kept only for the lowest index that failed, under a lock
// (errors are rare and end the loop).
template <class T, class Fn>
Result<InPlaceArray<T>> results_in_place(size_t count, unsigned threads, size_t chunk, Fn fn) {
  typename InPlaceArray<T>::Building building(count);
  std::mutex error_lock;
  std::optional<std::pair<size_t, Status>> lowest_error;
  for_each_index(count, threads, chunk, [&](size_t i) {
    Result<T> result = fn(i);
    if (!result) {
      std::lock_guard<std::mutex> lock(error_lock);
      if (!lowest_error || i < lowest_error->first) lowest_error.emplace(i, std::move(result.error()));
      return false;
    }
    building.construct(i, std::move(*result));
    return true;
  });
  if (lowest_error) return Error(std::move(lowest_error->second));
  if (!building.complete()) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "index {} of {} was not computed",
                      building.first_missing(), count);
  }
  return std::move(building).release();
}

// The same results in a vector: built in place, then moved into it (one move
// per result; for small results such as shared resolutions).
template <class T, class Fn>
Result<std::vector<T>> results_in_order(size_t count, unsigned threads, size_t chunk, Fn fn) {
  auto built = results_in_place<T>(count, threads, chunk, std::move(fn));
  if (!built) return Error(std::move(built.error()));
  std::vector<T> out;
  out.reserve(count);
  for (T& result : *built) out.push_back(std::move(result));
  return out;
}

}  // namespace ferrite
