// The `ferrite` executable: the CLI (cli/cli.h) over the process allocator.
#include "cli/cli.h"
#include "cli/process_exit.h"

#if FERRITE_WITH_MIMALLOC
#include <pthread.h>
#include <signal.h>

#include <cstdlib>
#include <cstring>
#include <system_error>
#include <thread>

#include <mimalloc.h>
#endif

namespace {

#if FERRITE_WITH_MIMALLOC
// The CLI on a thread whose heap lies on 2 MiB pages (mimalloc's
// large_os_pages, transparent huge pages asked for with madvise). A compile
// touches tens of MiB of fresh heap, and on virtual machines each 4 KiB
// first-touch fault costs microseconds: about a quarter of a 128-layer
// compile and of a short `run` (docs/performance.md, step 10).
//
// Hazards: mimalloc reads the option once, when the process starts, and the
// main thread's first heap segment is mapped by the first allocation, before
// main. So the option is set here and the CLI runs on a new thread, whose
// segments are mapped after it. MIMALLOC_LARGE_OS_PAGES in the environment
// decides instead when it is set (0 keeps 4 KiB pages and the main thread).
// Every asynchronous signal stays blocked on the waiting main thread, so
// signals reach the CLI's threads as if it ran on main (`serve` waits for
// SIGTERM on a thread of its own with the signal blocked everywhere else).
//
// Not for `serve`: a server's many HTTP threads each allocate and free a
// little per request, mimalloc returns freed pages to the system after a
// short delay, and on 2 MiB pages every page touched again is a fresh huge
// page the kernel zeroes first: about 4 ms on this VM, added to a request's
// time to first token (measured: GET /health 4.7 ms on 2 MiB pages after
// some load, 1.5 ms on 4 KiB pages; docs/performance.md, "Serving").
bool runs_on_large_pages(int argc, char** argv) {
  if (std::getenv("MIMALLOC_LARGE_OS_PAGES") != nullptr) return false;
  return !(argc > 1 && std::strcmp(argv[1], "serve") == 0);
}

int run_cli_on_large_pages(int argc, char** argv) {
  if (!runs_on_large_pages(argc, argv)) return ferrite::cli::run_cli(argc, argv);
  mi_option_set_enabled(mi_option_large_os_pages, true);
  mi_option_set(mi_option_eager_commit_delay, 0);
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &previous);
  int exit_code = 1;
  try {
    std::thread cli([&] {
      pthread_sigmask(SIG_SETMASK, &previous, nullptr);
      exit_code = ferrite::cli::run_cli(argc, argv);
    });
    cli.join();
  } catch (const std::system_error&) {  // no thread to be had: run here
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    exit_code = ferrite::cli::run_cli(argc, argv);
  }
  return exit_code;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  ferrite::cli::end_commands_with_the_process();
#if FERRITE_WITH_MIMALLOC
  return run_cli_on_large_pages(argc, argv);
#else
  return ferrite::cli::run_cli(argc, argv);
#endif
}
