#include "memory/best_fit_placement.h"

#include <algorithm>
#include <limits>

namespace ferrite::packing_detail {

uint64_t GapPlacer::choose(size_t i, std::span<const uint64_t> offsets,
                           std::span<const uint8_t> placed, GapChoice choice) {
  ranges_.clear();
  if (model_.has_conflicts) {
    for (uint32_t j : model_.neighbours(i)) {
      if (placed[j] != 0) ranges_.emplace_back(offsets[j], offsets[j] + model_.size[j]);
    }
  } else {
    for (size_t j = 0; j < model_.n; ++j) {
      if (placed[j] != 0 && model_.lower[j] < model_.upper[i] &&
          model_.lower[i] < model_.upper[j]) {
        ranges_.emplace_back(offsets[j], offsets[j] + model_.size[j]);
      }
    }
  }
  std::sort(ranges_.begin(), ranges_.end());
  const uint64_t size = model_.size[i];
  const uint64_t alignment = model_.alignment[i];
  uint64_t best = std::numeric_limits<uint64_t>::max();
  uint64_t best_gap = std::numeric_limits<uint64_t>::max();
  uint64_t cursor = 0;  // everything below is occupied or already examined
  for (const auto& [begin, end] : ranges_) {
    if (begin > cursor) {
      const uint64_t start = align_up_unchecked(cursor, alignment);
      if (start < begin && begin - start >= size) {
        if (choice == GapChoice::kFirstFit) return start;
        const uint64_t gap = begin - cursor;
        if (gap < best_gap) {
          best_gap = gap;
          best = start;
        }
      }
    }
    cursor = std::max(cursor, end);
  }
  if (best != std::numeric_limits<uint64_t>::max()) return best;
  return align_up_unchecked(cursor, alignment);
}

std::vector<uint64_t> GapPlacer::place_all(std::span<const uint32_t> order, GapChoice choice,
                                           uint64_t* work) {
  std::vector<uint64_t> offsets(model_.n, 0);
  std::vector<uint8_t> placed(model_.n, 0);
  for (uint32_t i : order) {
    offsets[i] = choose(i, offsets, placed, choice);
    placed[i] = 1;
    if (work != nullptr)
      *work += (model_.has_conflicts ? model_.neighbours(i).size() : model_.n) + 1;
  }
  return offsets;
}

}  // namespace ferrite::packing_detail
