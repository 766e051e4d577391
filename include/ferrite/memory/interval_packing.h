// ferrite/memory/interval_packing.h — offsets for buffers with fixed lifetimes.
//
// Contract: a buffer is live during the half-open interval [lower, upper) and
// needs `size` bytes at an offset that is a multiple of `alignment` (a power of
// two). Two buffers conflict when their intervals intersect; a packing gives
// every buffer an offset so that conflicting buffers occupy disjoint byte
// ranges [offset, offset + size). The peak is max(offset + size) (0 for no
// buffers). LOAD, the maximum over time of the sum of live sizes, is a lower
// bound on every peak.
//
// Inputs are validated (lower < upper, size > 0, power-of-two alignment) and
// the sum over buffers of (size + alignment − 1) must fit in u64, which bounds
// every offset the packers compute; otherwise the result is an error naming
// the buffer id. The effort is a count of work steps, never wall-clock time:
// the same buffers and options give the same offsets in every process and on
// every machine. Buffer ids are carried for messages only and need not be
// unique; the solution's offsets are indexed like the input.
//
// Example:
//   std::vector<PackingBuffer> buffers = {{.id = 0, .lower = 0, .upper = 2, .size = 64},
//                                         {.id = 1, .lower = 1, .upper = 3, .size = 32},
//                                         {.id = 2, .lower = 2, .upper = 4, .size = 64}};
//   FERRITE_ASSIGN_OR_RETURN(PackingSolution solution, pack_intervals(buffers));
//   // solution.peak == solution.load == 96; offsets {0, 64, 0}
//   FERRITE_RETURN_IF_ERROR(verify_packing(buffers, solution.offsets));
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ferrite/core/status.h"

namespace ferrite {

struct PackingBuffer {
  uint64_t id = 0;
  uint64_t lower = 0;  // first live step (inclusive)
  uint64_t upper = 0;  // first step after the lifetime (exclusive)
  uint64_t size = 0;
  uint64_t alignment = 1;

  friend bool operator==(const PackingBuffer&, const PackingBuffer&) = default;
};

// The default effort finishes the eleven MiniMalloc "challenging" instances in
// well under two seconds each and 100,000 short-lived random buffers in a few
// seconds on one core of a current x86-64 machine. Effort 0 keeps only the
// constructive heuristics; the exact search and improvement phases are skipped.
inline constexpr uint64_t kDefaultPackingEffort = 400'000'000;

struct PackingOptions {
  uint64_t effort = kDefaultPackingEffort;
};

struct PackingSolution {
  std::vector<uint64_t> offsets;  // offsets[i] belongs to buffers[i]
  uint64_t peak = 0;
  uint64_t load = 0;
  bool proven_optimal = false;  // peak == load, or exhausted searches proved peak − 1 infeasible
  uint64_t steps = 0;           // work steps spent: the effort plus the constructions' work
  std::string method;           // which phase produced the offsets, e.g. "search"
};

// Checks every buffer: lower < upper, size > 0, power-of-two alignment, and
// that Σ (size + alignment − 1) fits in u64.
Result<void> validate_packing_buffers(std::span<const PackingBuffer> buffers);

// LOAD = max over time of the sum of live sizes (0 for no buffers).
// Errors: invalid buffers (see validate_packing_buffers).
Result<uint64_t> compute_load(std::span<const PackingBuffer> buffers);

// Ferrite's packer: the online best-fit packing and four best-fit constructions
// (by size, best and first fit; by size × lifetime; by lifetime), then, while
// the best peak is above LOAD, probes "does a packing with peak ≤ C exist?" by
// a bounded exact search over canonical bottom-up placements (restarted on a
// Luby schedule), first at C = LOAD and then bisecting towards the best peak.
// Never worse than pack_greedy_by_size or pack_online_best_fit. Cost:
// O(n log n + conflicting pairs) plus the effort. With more than 2^24
// conflicting pairs the online best-fit packing is returned as is; the search
// is skipped when one descent (n placements) would exceed the effort.
Result<PackingSolution> pack_intervals(std::span<const PackingBuffer> buffers,
                                       const PackingOptions& options = {});

// Checks a proposed packing in O(n log n): one offset per buffer, every offset
// aligned, offset + size without overflow, conflicting buffers disjoint. On
// success returns the peak (which is then ≥ LOAD). Errors name the buffer ids.
Result<uint64_t> verify_packing(std::span<const PackingBuffer> buffers,
                                std::span<const uint64_t> offsets);

}  // namespace ferrite
