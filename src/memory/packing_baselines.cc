// The reference packers: greedy best fit by decreasing size, and online best
// fit in time order with a coalescing free list.
#include "ferrite/memory/packing_baselines.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "memory/best_fit_placement.h"
#include "memory/packing_model.h"

namespace ferrite {
namespace {

using packing_detail::align_up_unchecked;

// The arena of the online packer: free blocks by offset and by (size, offset).
class FreeList {
 public:
  uint64_t allocate(uint64_t size, uint64_t alignment) {
    for (auto it = by_size_.lower_bound({size, 0}); it != by_size_.end(); ++it) {
      const auto [block_size, block] = *it;
      const uint64_t start = align_up_unchecked(block, alignment);
      if (start - block <= block_size - size) {  // start + size ≤ block + block_size
        take(block, block_size, start, size);
        return start;
      }
    }
    // Grow the arena, starting inside a free block that touches its end; the
    // alignment padding below the new block stays free.
    uint64_t base = end_;
    if (!by_offset_.empty()) {
      auto last = std::prev(by_offset_.end());
      if (last->first + last->second == end_) {
        base = last->first;
        erase(last->first, last->second);
      }
    }
    const uint64_t start = align_up_unchecked(base, alignment);
    if (start > base) insert(base, start - base);
    end_ = start + size;
    return start;
  }

  void release(uint64_t offset, uint64_t size) {
    uint64_t begin = offset;
    uint64_t end = offset + size;
    auto next = by_offset_.lower_bound(offset);
    if (next != by_offset_.end() && next->first == end) {
      end += next->second;
      erase(next->first, next->second);
    }
    auto after = by_offset_.lower_bound(offset);
    if (after != by_offset_.begin()) {
      auto prev = std::prev(after);
      if (prev->first + prev->second == begin) {
        begin = prev->first;
        erase(prev->first, prev->second);
      }
    }
    insert(begin, end - begin);
  }

  uint64_t end() const { return end_; }

 private:
  void take(uint64_t block, uint64_t block_size, uint64_t start, uint64_t size) {
    erase(block, block_size);
    if (start > block) insert(block, start - block);
    if (block + block_size > start + size) insert(start + size, block + block_size - start - size);
  }
  void insert(uint64_t offset, uint64_t size) {
    by_offset_.emplace(offset, size);
    by_size_.emplace(size, offset);
  }
  void erase(uint64_t offset, uint64_t size) {
    by_offset_.erase(offset);
    by_size_.erase({size, offset});
  }

  std::map<uint64_t, uint64_t> by_offset_;
  std::set<std::pair<uint64_t, uint64_t>> by_size_;
  uint64_t end_ = 0;
};

}  // namespace

Result<PackingSolution> pack_greedy_by_size(std::span<const PackingBuffer> buffers) {
  FERRITE_ASSIGN_OR_RETURN(auto model, packing_detail::build_packing_model(buffers, true));
  std::vector<uint32_t> order(model.n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (model.size[a] != model.size[b]) return model.size[a] > model.size[b];
    if (model.lower[a] != model.lower[b]) return model.lower[a] < model.lower[b];
    return model.upper[a] > model.upper[b];
  });
  packing_detail::GapPlacer placer(model);
  PackingSolution solution;
  solution.offsets = placer.place_all(order, packing_detail::GapChoice::kBestFit, &solution.steps);
  solution.peak = packing_detail::peak_of(model, solution.offsets);
  solution.load = model.load;
  solution.proven_optimal = solution.peak == solution.load;
  solution.method = "greedy-by-size";
  return solution;
}

Result<PackingSolution> pack_online_best_fit(std::span<const PackingBuffer> buffers) {
  FERRITE_ASSIGN_OR_RETURN(auto model, packing_detail::build_packing_model(buffers, false));
  // (time, kind, index): kind 0 frees before kind 1 allocates at the same step.
  std::vector<std::tuple<uint64_t, int, uint32_t>> events;
  events.reserve(2 * model.n);
  for (uint32_t i = 0; i < model.n; ++i) {
    events.emplace_back(model.upper[i], 0, i);
    events.emplace_back(model.lower[i], 1, i);
  }
  std::sort(events.begin(), events.end());
  FreeList arena;
  PackingSolution solution;
  solution.offsets.assign(model.n, 0);
  for (const auto& [time, kind, i] : events) {
    if (kind == 0) {
      arena.release(solution.offsets[i], model.size[i]);
    } else {
      solution.offsets[i] = arena.allocate(model.size[i], model.alignment[i]);
    }
    ++solution.steps;
  }
  solution.peak = packing_detail::peak_of(model, solution.offsets);
  solution.load = model.load;
  solution.proven_optimal = solution.peak == solution.load;
  solution.method = "online-best-fit";
  return solution;
}

}  // namespace ferrite
