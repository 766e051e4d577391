// ferrite/memory/packing_baselines.h — the two reference packers Ferrite's
// packer is compared against.
//
// Contract: same buffers, validation and overflow rules as
// interval_packing.h; both are deterministic and need no effort parameter.
//   * pack_greedy_by_size: buffers by decreasing size (ties: earlier lower,
//     later upper, input order); each goes into the smallest gap between the
//     already placed conflicting buffers that fits it (ties: lowest offset),
//     else on top of them.
//   * pack_online_best_fit: events in time order, frees before allocations at
//     the same step, allocations by input order; an arena with a free list,
//     best fit (smallest free block that fits, ties: lowest offset), freed
//     blocks coalesce, and the arena grows at its end (reusing a free block
//     that touches the end). This is how runtimes such as ONNX Runtime's memory
//     patterns and ggml's graph allocator plan activations.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(PackingSolution greedy, pack_greedy_by_size(buffers));
//   FERRITE_ASSIGN_OR_RETURN(PackingSolution online, pack_online_best_fit(buffers));
#pragma once

#include <span>

#include "ferrite/memory/interval_packing.h"

namespace ferrite {

Result<PackingSolution> pack_greedy_by_size(std::span<const PackingBuffer> buffers);
Result<PackingSolution> pack_online_best_fit(std::span<const PackingBuffer> buffers);

}  // namespace ferrite
