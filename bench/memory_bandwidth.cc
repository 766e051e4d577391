// memory_bandwidth — this machine's sustained read bandwidth, the physical
// limit of weight streaming during decode.
//
//   memory_bandwidth [THREADS] [MIB]     (defaults: 1 thread, 1024 MiB)
//
// Every thread reads its contiguous slice of one buffer (far larger than the
// caches) with 64-bit loads into four independent sums; a pass is timed from
// the first thread's start to the last thread's end. Prints the best of 7
// passes in GB/s (10^9 bytes per second), the unit tokens/s x bytes/token is
// reported in.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

uint64_t read_slice(const uint64_t* p, size_t n) {
  uint64_t a = 0, b = 0, c = 0, d = 0;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    a += p[i];
    b += p[i + 1];
    c += p[i + 2];
    d += p[i + 3];
  }
  for (; i < n; ++i) a += p[i];
  return a ^ b ^ c ^ d;
}

}  // namespace

int main(int argc, char** argv) {
  const unsigned threads = argc > 1 ? static_cast<unsigned>(std::strtoul(argv[1], nullptr, 10)) : 1;
  const size_t mib = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 1024;
  if (threads == 0 || threads > 256 || mib == 0 || mib > (1u << 16)) {
    std::fprintf(stderr, "usage: memory_bandwidth [THREADS 1..256] [MIB 1..65536]\n");
    return 2;
  }
  const size_t words = mib * (size_t{1} << 20) / sizeof(uint64_t);
  std::vector<uint64_t> buffer(words);
  for (size_t i = 0; i < words; ++i) buffer[i] = i * 0x9e3779b97f4a7c15ull;
  double best = 0;
  volatile uint64_t sink = 0;
  for (int pass = 0; pass < 7; ++pass) {
    std::vector<uint64_t> results(threads);
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        const size_t begin = words * t / threads, end = words * (t + 1) / threads;
        results[t] = read_slice(buffer.data() + begin, end - begin);
      });
    }
    for (auto& th : pool) th.join();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (uint64_t r : results) sink = sink ^ r;
    best = std::max(best, static_cast<double>(words * sizeof(uint64_t)) / seconds / 1e9);
  }
  std::printf("%.2f\n", best);
  return sink == 42 ? 1 : 0;
}
