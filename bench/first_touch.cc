// first_touch — what writing to memory the process has not touched yet costs
// on this machine, against rewriting memory already in place: the part of a
// large compile's time that is the size of its heap, not its work
// (docs/performance.md, step 36).
//
//   first_touch [MIB] [ROUNDS] [IDLE_SECONDS]   (defaults: 512 MiB, 6 rounds, 3 s)
//
// Each round maps MIB of anonymous memory (transparent huge pages asked for,
// as the `ferrite` executable's heap asks), writes one byte per 4 KiB page
// (the first touch: the kernel finds and zeroes each page), then writes every
// byte (the same pages again), and unmaps it. Before the middle round the
// program sleeps IDLE_SECONDS: on a virtual machine whose host takes back the
// memory its guest frees (free page reporting), the round after the pause
// touches memory the host must supply again. Prints each round's first-touch
// and rewrite rates in GB/s (10^9 bytes per second).
//
// Hazard: Linux only (mmap, madvise); the rates vary with what else the host
// runs — compare rounds of one run, not runs.
#include <sys/mman.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

long argument(int argc, char** argv, int index, long fallback, long most) {
  if (argc <= index) return fallback;
  char* end = nullptr;
  const long value = std::strtol(argv[index], &end, 10);
  if (end == argv[index] || *end != '\0' || value < 0 || value > most) {
    std::fprintf(stderr, "first_touch: argument %d `%s` is not a number from 0 to %ld\n", index,
                 argv[index], most);
    std::exit(2);
  }
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  const long mib = argument(argc, argv, 1, 512, 1L << 20);
  const long rounds = argument(argc, argv, 2, 6, 1000);
  const long idle_seconds = argument(argc, argv, 3, 3, 3600);
  if (mib == 0 || rounds == 0) {
    std::fprintf(stderr, "first_touch: MIB and ROUNDS must be positive\n");
    return 2;
  }
  const size_t bytes = static_cast<size_t>(mib) << 20;  // at most 2^40: no overflow
  constexpr size_t kPage = 4096;
  for (long round = 0; round < rounds; ++round) {
    if (round == rounds / 2 && idle_seconds > 0) {
      std::printf("(idle %ld s)\n", idle_seconds);
      std::this_thread::sleep_for(std::chrono::seconds(idle_seconds));
    }
    void* mapped = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED) {
      std::fprintf(stderr, "first_touch: cannot map %ld MiB\n", mib);
      return 1;
    }
    (void)madvise(mapped, bytes, MADV_HUGEPAGE);  // advice only: 4 KiB pages if refused
    auto* p = static_cast<volatile char*>(mapped);
    auto start = std::chrono::steady_clock::now();
    for (size_t i = 0; i < bytes; i += kPage) p[i] = 1;
    const double first = seconds_since(start);
    start = std::chrono::steady_clock::now();
    std::memset(mapped, 2, bytes);
    const double again = seconds_since(start);
    munmap(mapped, bytes);
    std::printf("round %ld: first touch %.3f s (%.2f GB/s), rewrite %.3f s (%.2f GB/s)\n", round,
                first, static_cast<double>(bytes) / first / 1e9, again,
                static_cast<double>(bytes) / again / 1e9);
  }
  return 0;
}
