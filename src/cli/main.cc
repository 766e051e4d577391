// The `ferrite` executable: the CLI (cli/cli.h) over the process allocator.
#include "cli/cli.h"
#include "cli/process_exit.h"

#if FERRITE_WITH_MIMALLOC
#include <cstring>

#include "cli/large_page_heap.h"
#endif

namespace {

#if FERRITE_WITH_MIMALLOC
// The CLI runs on 2 MiB pages (cli/large_page_heap.h: a compile touches tens
// of MiB of fresh heap, and on virtual machines each 4 KiB first-touch fault
// costs microseconds — about a quarter of a 128-layer compile and of a short
// `run`; docs/performance.md, steps 10 and 22) unless
// MIMALLOC_LARGE_OS_PAGES in the environment decides (0 keeps 4 KiB pages
// and the main thread; run_on_large_page_heap reads it), and never for
// `serve`: a server's many HTTP threads
// each allocate and free a little per request, and on 2 MiB pages every page
// touched again after mimalloc returned it is a fresh huge page the kernel
// zeroes first: about 4 ms on this VM, added to a request's time to first
// token (measured: GET /health 4.7 ms on 2 MiB pages after some load, 1.5 ms
// on 4 KiB pages; docs/performance.md, "Serving").
bool runs_on_large_pages(int argc, char** argv) {
  return !(argc > 1 && std::strcmp(argv[1], "serve") == 0);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  ferrite::cli::end_commands_with_the_process();
#if FERRITE_WITH_MIMALLOC
  if (!runs_on_large_pages(argc, argv)) return ferrite::cli::run_cli(argc, argv);
  return ferrite::cli::run_on_large_page_heap([&] { return ferrite::cli::run_cli(argc, argv); });
#else
  return ferrite::cli::run_cli(argc, argv);
#endif
}
