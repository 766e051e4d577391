// Input validation, LOAD and the independent checker of a packing.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <utility>
#include <vector>

#include "ferrite/core/checked_math.h"
#include "ferrite/memory/interval_packing.h"
#include "memory/packing_model.h"

namespace ferrite {
namespace {

}  // namespace

Result<void> validate_packing_buffers(std::span<const PackingBuffer> buffers) {
  uint64_t total = 0;
  for (const PackingBuffer& b : buffers) {
    if (b.lower >= b.upper) {
      return make_error(ErrorCode::kInvalidArgument, "buffer {}: lower {} must be below upper {}",
                        b.id, b.lower, b.upper)
          .with_field("buffer_id", b.id);
    }
    if (b.size == 0) {
      return make_error(ErrorCode::kInvalidArgument, "buffer {}: size must be positive", b.id)
          .with_field("buffer_id", b.id);
    }
    if (!is_power_of_two(b.alignment)) {
      return make_error(ErrorCode::kInvalidArgument,
                        "buffer {}: alignment {} is not a power of two", b.id, b.alignment)
          .with_field("buffer_id", b.id);
    }
    auto padded = checked_add(b.size, b.alignment - 1);
    auto sum = padded ? checked_add(total, *padded) : std::nullopt;
    if (!sum) {
      return make_error(ErrorCode::kInvalidArgument,
                        "buffer {}: the sum of sizes plus alignment padding overflows u64", b.id)
          .with_field("buffer_id", b.id);
    }
    total = *sum;
  }
  return {};
}

Result<uint64_t> compute_load(std::span<const PackingBuffer> buffers) {
  FERRITE_ASSIGN_OR_RETURN(auto model, packing_detail::build_packing_model(buffers, false));
  return model.load;
}

Result<uint64_t> verify_packing(std::span<const PackingBuffer> buffers,
                                std::span<const uint64_t> offsets) {
  if (offsets.size() != buffers.size()) {
    return make_error(ErrorCode::kInvalidArgument, "{} offsets for {} buffers", offsets.size(),
                      buffers.size());
  }
  uint64_t peak = 0;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const PackingBuffer& b = buffers[i];
    if (b.lower >= b.upper || b.size == 0 || !is_power_of_two(b.alignment)) {
      FERRITE_RETURN_IF_ERROR(validate_packing_buffers(buffers.subspan(i, 1)));
    }
    if (offsets[i] % b.alignment != 0) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "buffer {}: offset {} is not a multiple of its alignment {}", b.id,
                        offsets[i], b.alignment)
          .with_field("buffer_id", b.id);
    }
    auto end = checked_add(offsets[i], b.size);
    if (!end) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "buffer {}: offset {} + size {} overflows u64", b.id, offsets[i], b.size)
          .with_field("buffer_id", b.id);
    }
    peak = std::max(peak, *end);
  }
  // Sweep over time: at each step the frees (upper == t) happen before the
  // allocations (lower == t). The live set ordered by offset stays pairwise
  // disjoint, so a new buffer only needs checking against its two neighbours.
  std::vector<std::pair<uint64_t, size_t>> events;  // (time, 2*i for free / 2*i+1 for alloc)
  events.reserve(2 * buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    events.emplace_back(buffers[i].upper, 2 * i);
    events.emplace_back(buffers[i].lower, 2 * i + 1);
  }
  std::sort(events.begin(), events.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    if ((a.second & 1) != (b.second & 1)) return (a.second & 1) < (b.second & 1);
    return a.second < b.second;
  });
  std::set<std::pair<uint64_t, size_t>> live;  // (offset, index)
  uint64_t live_bytes = 0;                     // ≤ peak: the live ranges are disjoint
  uint64_t load = 0;
  for (const auto& event : events) {
    const uint64_t time = event.first;
    const size_t i = event.second / 2;
    if ((event.second & 1) == 0) {
      live.erase({offsets[i], i});
      live_bytes -= buffers[i].size;
      continue;
    }
    const auto it = live.insert({offsets[i], i}).first;
    auto clash = [&](size_t a, size_t b) {
      const std::string message = fmt::format(
          "buffers {} and {} are both live at step {} and overlap: [{}, {}) and [{}, {})",
          buffers[a].id, buffers[b].id, time, offsets[a], offsets[a] + buffers[a].size, offsets[b],
          offsets[b] + buffers[b].size);
      return make_error(ErrorCode::kInvalidExecutionPlan, message)
          .with_field("buffer_id", std::to_string(buffers[a].id))
          .with_field("other_buffer_id", std::to_string(buffers[b].id));
    };
    if (it != live.begin()) {
      const size_t p = std::prev(it)->second;
      if (offsets[p] + buffers[p].size > offsets[i]) return clash(p, i);
    }
    if (auto next = std::next(it); next != live.end()) {
      if (offsets[i] + buffers[i].size > next->first) return clash(i, next->second);
    }
    live_bytes += buffers[i].size;
    load = std::max(load, live_bytes);
  }
  if (peak < load) {  // impossible for disjoint ranges; guards the checker itself
    return make_error(ErrorCode::kInvalidExecutionPlan, "peak {} is below LOAD {}", peak, load);
  }
  return peak;
}

}  // namespace ferrite
