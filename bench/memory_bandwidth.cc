// memory_bandwidth — this machine's sustained read bandwidth, the physical
// limit of weight streaming during decode.
//
//   memory_bandwidth [THREADS] [MIB]     (defaults: 1 thread, 1024 MiB)
//
// Every thread reads its contiguous slice of one buffer (far larger than the
// caches) with the widest loads the CPU has (AVX-512, else AVX2, else 64-bit)
// into four independent sums, prefetching 1 KiB ahead as a tuned kernel
// would; a pass is timed from the first thread's start to the last thread's
// end. Prints the best of 7
// passes in GB/s (10^9 bytes per second), the unit tokens/s x bytes/token is
// reported in.
#include <immintrin.h>

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

__attribute__((target("avx512f"))) uint64_t read_slice_avx512(const uint64_t* p, size_t n) {
  __m512i a = _mm512_setzero_si512(), b = a, c = a, d = a;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    _mm_prefetch(reinterpret_cast<const char*>(p + i + 128), _MM_HINT_T0);
    a = _mm512_add_epi64(a, _mm512_loadu_si512(p + i));
    b = _mm512_add_epi64(b, _mm512_loadu_si512(p + i + 8));
    c = _mm512_add_epi64(c, _mm512_loadu_si512(p + i + 16));
    d = _mm512_add_epi64(d, _mm512_loadu_si512(p + i + 24));
  }
  const __m512i s = _mm512_add_epi64(_mm512_add_epi64(a, b), _mm512_add_epi64(c, d));
  alignas(64) uint64_t lanes[8];
  _mm512_store_si512(lanes, s);
  return read_slice(lanes, 8) + read_slice(p + i, n - i);
}

__attribute__((target("avx2"))) uint64_t read_slice_avx2(const uint64_t* p, size_t n) {
  __m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    _mm_prefetch(reinterpret_cast<const char*>(p + i + 128), _MM_HINT_T0);
    a = _mm256_add_epi64(a, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)));
    b = _mm256_add_epi64(b, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 4)));
    c = _mm256_add_epi64(c, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 8)));
    d = _mm256_add_epi64(d, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 12)));
  }
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes),
                     _mm256_add_epi64(_mm256_add_epi64(a, b), _mm256_add_epi64(c, d)));
  return lanes[0] + lanes[1] + lanes[2] + lanes[3] + read_slice(p + i, n - i);
}

uint64_t read_widest(const uint64_t* p, size_t n) {
  if (__builtin_cpu_supports("avx512f")) return read_slice_avx512(p, n);
  if (__builtin_cpu_supports("avx2")) return read_slice_avx2(p, n);
  return read_slice(p, n);
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
        results[t] = read_widest(buffer.data() + begin, end - begin);
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
