// pack_bench: Ferrite's interval packer against greedy-by-size and online
// best-fit on the MiniMalloc instances (A–K and example.12), one row per
// instance with peak, peak/LOAD and time for each, then the mean and max
// ratios over A–K; and the time to pack 100,000 random intervals.
//
// Usage: pack_bench [DIR] [--effort N]
//   DIR defaults to FERRITE_SOURCE_DIR/../shared/bench/minimalloc.
// Every packing is checked with verify_packing; a failure exits with 1.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "ferrite/format/minimalloc_csv.h"
#include "ferrite/memory/interval_packing.h"
#include "ferrite/memory/packing_baselines.h"

namespace {

using ferrite::PackingBuffer;
using ferrite::PackingSolution;
using ferrite::Result;

struct Timed {
  PackingSolution solution;
  double ms = 0;
};

bool run_timed(const std::function<Result<PackingSolution>()>& pack,
               std::span<const PackingBuffer> buffers, const char* what, Timed& out) {
  const auto start = std::chrono::steady_clock::now();
  auto solution = pack();
  const auto stop = std::chrono::steady_clock::now();
  if (!solution) {
    fmt::print(stderr, "{}: {}\n", what, solution.error().to_string());
    return false;
  }
  auto peak = ferrite::verify_packing(buffers, solution->offsets);
  if (!peak || *peak != solution->peak) {
    fmt::print(stderr, "{}: invalid packing: {}\n", what,
               peak ? "peak mismatch" : peak.error().to_string());
    return false;
  }
  out.solution = std::move(*solution);
  out.ms = std::chrono::duration<double, std::milli>(stop - start).count();
  return true;
}

// Short-lived buffers over a long horizon, the shape of a decoder's
// activations: about 40 live at a time, sizes from 64 B to 256 KiB.
std::vector<PackingBuffer> random_intervals(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<PackingBuffer> buffers(n);
  const uint64_t horizon = 2 * n;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t lower = rng() % horizon;
    uint64_t lifetime = 1 + rng() % 64;
    if (rng() % 16 == 0) lifetime += rng() % 512;
    const uint64_t alignment = uint64_t{1} << (rng() % 7);
    buffers[i] = PackingBuffer{.id = i,
                               .lower = lower,
                               .upper = lower + lifetime,
                               .size = 64 * (1 + rng() % 4096),
                               .alignment = alignment};
  }
  return buffers;
}

}  // namespace

int main(int argc, char** argv) {
  std::filesystem::path dir =
      std::filesystem::path(FERRITE_SOURCE_DIR) / ".." / "shared" / "bench" / "minimalloc";
  ferrite::PackingOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--effort" && i + 1 < argc) {
      options.effort = std::stoull(argv[++i]);
    } else {
      dir = arg;
    }
  }
  fmt::print("effort {}\n", options.effort);
  fmt::print("{:<9} {:>5} {:>9} | {:>9} {:>7} {:>8} | {:>9} {:>7} {:>8} | {:>9} {:>7} {:>8}\n",
             "instance", "n", "LOAD", "ferrite", "ratio", "ms", "greedy", "ratio", "ms", "online",
             "ratio", "ms");
  double sum[3] = {0, 0, 0};
  double worst[3] = {0, 0, 0};
  int counted = 0;
  const std::vector<std::string> names = {"A", "B", "C", "D", "E", "F",
                                          "G", "H", "I", "J", "K", "example.12"};
  for (const std::string& name : names) {
    const bool challenging = name.size() == 1;
    const auto path = dir / (challenging ? name + ".1048576.csv" : name + ".csv");
    auto instance = ferrite::read_minimalloc_csv(path);
    if (!instance) {
      fmt::print(stderr, "{}\n", instance.error().to_string());
      return 1;
    }
    const auto& buffers = instance->buffers;
    Timed runs[3];
    if (!run_timed([&] { return ferrite::pack_intervals(buffers, options); }, buffers, "ferrite",
                   runs[0]) ||
        !run_timed([&] { return ferrite::pack_greedy_by_size(buffers); }, buffers, "greedy",
                   runs[1]) ||
        !run_timed([&] { return ferrite::pack_online_best_fit(buffers); }, buffers, "online",
                   runs[2])) {
      return 1;
    }
    const double load = static_cast<double>(runs[0].solution.load);
    fmt::print("{:<9} {:>5} {:>9}", name, buffers.size(), runs[0].solution.load);
    for (int k = 0; k < 3; ++k) {
      const double ratio = static_cast<double>(runs[k].solution.peak) / load;
      fmt::print(" | {:>9} {:>7.4f} {:>8.1f}", runs[k].solution.peak, ratio, runs[k].ms);
      if (challenging) {
        sum[k] += ratio;
        worst[k] = std::max(worst[k], ratio);
      }
    }
    fmt::print("\n");
    counted += challenging ? 1 : 0;
  }
  fmt::print("{:<25} | {:>17.4f} {:>8} | {:>17.4f} {:>8} | {:>17.4f}\n", "mean ratio A-K",
             sum[0] / counted, "", sum[1] / counted, "", sum[2] / counted);
  fmt::print("{:<25} | {:>17.4f} {:>8} | {:>17.4f} {:>8} | {:>17.4f}\n", "max ratio A-K", worst[0],
             "", worst[1], "", worst[2]);

  const auto random = random_intervals(100'000, 20240601);
  Timed runs[3];
  if (!run_timed([&] { return ferrite::pack_intervals(random, options); }, random, "ferrite",
                 runs[0]) ||
      !run_timed([&] { return ferrite::pack_greedy_by_size(random); }, random, "greedy", runs[1]) ||
      !run_timed([&] { return ferrite::pack_online_best_fit(random); }, random, "online",
                 runs[2])) {
    return 1;
  }
  const double load = static_cast<double>(runs[0].solution.load);
  fmt::print("{:<9} {:>5} {:>9}", "random", random.size(), runs[0].solution.load);
  for (const Timed& run : runs) {
    fmt::print(" | {:>9} {:>7.4f} {:>8.1f}", run.solution.peak,
               static_cast<double>(run.solution.peak) / load, run.ms);
  }
  fmt::print("\n");
  return 0;
}
