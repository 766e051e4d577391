// cli/large_page_heap.h — run a body on a thread whose mimalloc heap lies on
// 2 MiB pages: the heap the `ferrite` executable compiles on (cli/main.cc),
// shared with bench/compile_bench so that the compile it times is the one
// the executable runs.
//
// Contract: `run_on_large_page_heap(body)` runs `body` where it is called
// when MIMALLOC_LARGE_OS_PAGES is set in the environment (then mimalloc's
// own reading of it decides: 0 keeps 4 KiB pages). Otherwise it sets
// mimalloc's large_os_pages
// (transparent huge pages asked for with madvise) and eager_commit_delay 0,
// runs `body` on a new thread with every asynchronous signal blocked on the
// calling thread (so signals reach the body's threads as if it ran on the
// caller), and returns what `body` returned. When no thread can be had it
// runs `body` on the calling thread. Only for executables linked with
// mimalloc (FERRITE_WITH_MIMALLOC); header-only, so that the Ferrite
// libraries do not depend on the allocator.
//
// Why: a compile touches tens of MiB of fresh heap (hundreds for programs
// of 100,000 nodes), and on virtual machines each 4 KiB first-touch fault
// costs microseconds — on the paravirtualized hosts of docs/performance.md
// (step 22) a third to a half of a 100,001-node compile on 4 KiB pages.
//
// Hazards: mimalloc reads the option when it maps a segment, and the calling
// thread's first segment was mapped by the first allocation, before main; a
// new thread's segments are mapped after the option is set. Call it once,
// early, before other threads allocate. Not for servers: a server's many
// HTTP threads each allocate and free a little per request, mimalloc returns
// freed pages to the system after a short delay, and every page touched
// again is a fresh huge page the kernel zeroes first (docs/performance.md,
// "Serving").
//
// Example:
//   int main(int argc, char** argv) {
//     return ferrite::cli::run_on_large_page_heap([&] { return run_cli(argc, argv); });
//   }
#pragma once

#if FERRITE_WITH_MIMALLOC
#include <pthread.h>
#include <signal.h>

#include <cstdlib>
#include <system_error>
#include <thread>
#include <utility>

#include <mimalloc.h>

namespace ferrite::cli {

template <class Body>
int run_on_large_page_heap(Body&& body) {
  if (std::getenv("MIMALLOC_LARGE_OS_PAGES") != nullptr) return std::forward<Body>(body)();
  mi_option_set_enabled(mi_option_large_os_pages, true);
  mi_option_set(mi_option_eager_commit_delay, 0);
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &previous);
  int exit_code = 1;
  try {
    std::thread thread([&] {
      pthread_sigmask(SIG_SETMASK, &previous, nullptr);
      exit_code = std::forward<Body>(body)();
    });
    thread.join();
  } catch (const std::system_error&) {  // no thread to be had: run here
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    exit_code = std::forward<Body>(body)();
  }
  return exit_code;
}

}  // namespace ferrite::cli
#endif
