// memory/packing_search.h — bounded exact search over canonical placements.
//
// Contract: every packing can be compacted (each buffer dropped as low as its
// conflicting buffers and alignment allow) without raising its peak, and a
// compacted packing is reached by placing buffers in non-decreasing offset
// order, each at its floor (the aligned maximum top of the conflicting buffers
// already placed). The search branches on an open buffer at the lowest floor
// (chosen fail-first, ties by lowest `rank`): place it at its floor now, or
// defer it until a later placement raises its floor. A node is cut when some
// unplaced buffer cannot fit below the capacity above its lower bound, or a
// time section's lowest bound plus its remaining demand exceeds it. So an
// exhausted search proves that no packing with peak ≤ capacity exists. Work is counted in steps
// (nodes plus neighbour updates) and the search stops after `budget` of them; it is deterministic.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "memory/packing_model.h"

namespace ferrite::packing_detail {

struct SearchOutcome {
  bool found = false;
  std::vector<uint64_t> offsets;  // the packing found (when found)
  uint64_t peak = 0;
  bool exhausted = false;  // the whole tree was explored within the budget
  uint64_t work = 0;
};

// Looks for a packing with peak ≤ capacity and stops at the first one found.
// Requires conflict lists and rank.size() == model.n with distinct ranks.
SearchOutcome search_packing(const PackingModel& model, std::span<const uint32_t> rank,
                             uint64_t capacity, uint64_t budget);

}  // namespace ferrite::packing_detail
