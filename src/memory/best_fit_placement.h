// memory/best_fit_placement.h — placing buffers one at a time into the gaps
// left by already placed conflicting buffers.
//
// Contract: with conflict lists a placement costs O(k log k) for k placed
// neighbours; without them (the cap was exceeded) every placed buffer is
// scanned, O(n) per placement. Every placement is valid (disjoint
// from placed conflicting buffers, aligned) and at most Σ (size + alignment −
// 1), so it cannot overflow (see packing_model.h). Ties are broken by offset,
// so results depend only on the model and the order.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "memory/packing_model.h"

namespace ferrite::packing_detail {

enum class GapChoice {
  kBestFit,   // the smallest gap that fits (ties: lowest offset), else on top
  kFirstFit,  // the lowest offset that fits
};

class GapPlacer {
 public:
  explicit GapPlacer(const PackingModel& model) : model_(model) {}

  // Offset for buffer i among the neighbours with placed[j] != 0.
  uint64_t choose(size_t i, std::span<const uint64_t> offsets, std::span<const uint8_t> placed,
                  GapChoice choice);

  // Places every buffer in `order` (a permutation of 0..n-1); returns offsets.
  // `work` is increased by the neighbours visited.
  std::vector<uint64_t> place_all(std::span<const uint32_t> order, GapChoice choice,
                                  uint64_t* work = nullptr);

 private:
  const PackingModel& model_;
  std::vector<std::pair<uint64_t, uint64_t>> ranges_;  // scratch: (offset, end)
};

}  // namespace ferrite::packing_detail
