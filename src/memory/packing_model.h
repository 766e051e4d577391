// memory/packing_model.h — the packers' shared, index-based view of a buffer set.
//
// Contract: built only from buffers that passed validate_packing_buffers, so
// every offset a packer derives from tops of other buffers (rounded up to an
// alignment) is ≤ Σ (size + alignment − 1) and fits in u64; the packers rely on
// that bound instead of re-checking each addition. Time is compressed into
// sections, the gaps between consecutive distinct interval endpoints; buffer i
// covers sections [first_section[i], end_section[i]). Conflict lists are
// sorted by index and are built only while their total stays under a cap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "ferrite/core/status.h"
#include "ferrite/memory/interval_packing.h"

namespace ferrite::packing_detail {

// Directed conflict entries (each conflicting pair counts twice) above which
// no conflict lists are built: 2^25 entries are 128 MiB of u32.
inline constexpr uint64_t kMaxConflictEntries = uint64_t{1} << 25;

struct PackingModel {
  size_t n = 0;
  std::vector<uint64_t> size;
  std::vector<uint64_t> alignment;
  std::vector<uint64_t> lower;
  std::vector<uint64_t> upper;
  std::vector<uint32_t> first_section;
  std::vector<uint32_t> end_section;
  size_t sections = 0;
  std::vector<uint64_t> section_load;  // Σ sizes live in each section
  uint64_t load = 0;

  bool has_conflicts = false;            // false: the cap was exceeded
  std::vector<uint64_t> conflict_begin;  // n + 1 entries into `conflicts`
  std::vector<uint32_t> conflicts;

  std::span<const uint32_t> neighbours(size_t i) const {
    return {conflicts.data() + conflict_begin[i], conflicts.data() + conflict_begin[i + 1]};
  }
  uint64_t lifetime(size_t i) const { return upper[i] - lower[i]; }
};

// Builds sections and LOAD; conflict lists too when `with_conflicts` and the
// cap allows. Errors: invalid buffers, or more than 2^32 − 1 buffers.
Result<PackingModel> build_packing_model(std::span<const PackingBuffer> buffers,
                                         bool with_conflicts);

inline uint64_t align_up_unchecked(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) & ~(alignment - 1);
}

// Peak of a complete assignment (max offset + size).
uint64_t peak_of(const PackingModel& model, std::span<const uint64_t> offsets);

}  // namespace ferrite::packing_detail
