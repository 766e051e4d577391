#include "memory/packing_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <numeric>

namespace ferrite::packing_detail {
namespace {

// Counts (and, when `adjacency` is set, records) conflicting pairs with one
// sweep over buffers ordered by lower bound. Returns false once `cap` directed
// entries are exceeded.
bool sweep_conflicts(const PackingModel& m, const std::vector<uint32_t>& by_lower,
                     std::vector<uint64_t>* degree, PackingModel* adjacency,
                     std::vector<uint64_t>* cursor, uint64_t cap) {
  std::vector<uint32_t> active;
  uint64_t entries = 0;
  for (uint32_t i : by_lower) {
    size_t kept = 0;
    for (uint32_t j : active) {
      if (m.upper[j] <= m.lower[i]) continue;  // expired for every later buffer too
      active[kept++] = j;
      if (degree != nullptr) {
        ++(*degree)[i];
        ++(*degree)[j];
      } else {
        adjacency->conflicts[(*cursor)[i]++] = j;
        adjacency->conflicts[(*cursor)[j]++] = i;
      }
    }
    active.resize(kept);
    entries += 2 * kept;
    if (entries > cap) return false;
    active.push_back(i);
  }
  return true;
}

}  // namespace

Result<PackingModel> build_packing_model(std::span<const PackingBuffer> buffers,
                                         bool with_conflicts) {
  FERRITE_RETURN_IF_ERROR(validate_packing_buffers(buffers));
  if (buffers.size() >= std::numeric_limits<uint32_t>::max()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "{} buffers exceed the packer's limit of 2^32 - 2", buffers.size());
  }
  PackingModel m;
  m.n = buffers.size();
  m.size.resize(m.n);
  m.alignment.resize(m.n);
  m.lower.resize(m.n);
  m.upper.resize(m.n);
  std::vector<uint64_t> points;
  points.reserve(2 * m.n);
  for (size_t i = 0; i < m.n; ++i) {
    m.size[i] = buffers[i].size;
    m.alignment[i] = buffers[i].alignment;
    m.lower[i] = buffers[i].lower;
    m.upper[i] = buffers[i].upper;
    points.push_back(buffers[i].lower);
    points.push_back(buffers[i].upper);
  }
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  m.sections = points.empty() ? 0 : points.size() - 1;
  m.first_section.resize(m.n);
  m.end_section.resize(m.n);
  std::vector<uint64_t> delta(points.size() + 1, 0);
  for (size_t i = 0; i < m.n; ++i) {
    auto at = [&](uint64_t v) {
      return static_cast<uint32_t>(std::lower_bound(points.begin(), points.end(), v) -
                                   points.begin());
    };
    m.first_section[i] = at(m.lower[i]);
    m.end_section[i] = at(m.upper[i]);
    // Σ sizes fits in u64 (validated), so running sums cannot overflow.
    delta[m.first_section[i]] += m.size[i];
    delta[m.end_section[i]] -= m.size[i];
  }
  m.section_load.resize(m.sections);
  uint64_t running = 0;
  for (size_t s = 0; s < m.sections; ++s) {
    running += delta[s];
    m.section_load[s] = running;
    m.load = std::max(m.load, running);
  }

  if (!with_conflicts) return m;
  std::vector<uint32_t> by_lower(m.n);
  std::iota(by_lower.begin(), by_lower.end(), 0u);
  std::stable_sort(by_lower.begin(), by_lower.end(),
                   [&](uint32_t a, uint32_t b) { return m.lower[a] < m.lower[b]; });
  std::vector<uint64_t> degree(m.n, 0);
  if (!sweep_conflicts(m, by_lower, &degree, nullptr, nullptr, kMaxConflictEntries)) return m;
  m.conflict_begin.assign(m.n + 1, 0);
  for (size_t i = 0; i < m.n; ++i) m.conflict_begin[i + 1] = m.conflict_begin[i] + degree[i];
  m.conflicts.resize(m.conflict_begin[m.n]);
  std::vector<uint64_t> cursor(m.conflict_begin.begin(), m.conflict_begin.end() - 1);
  sweep_conflicts(m, by_lower, nullptr, &m, &cursor, std::numeric_limits<uint64_t>::max());
  for (size_t i = 0; i < m.n; ++i) {
    std::sort(m.conflicts.begin() + static_cast<std::ptrdiff_t>(m.conflict_begin[i]),
              m.conflicts.begin() + static_cast<std::ptrdiff_t>(m.conflict_begin[i + 1]));
  }
  m.has_conflicts = true;
  return m;
}

uint64_t peak_of(const PackingModel& model, std::span<const uint64_t> offsets) {
  uint64_t peak = 0;
  for (size_t i = 0; i < model.n; ++i) peak = std::max(peak, offsets[i] + model.size[i]);
  return peak;
}

}  // namespace ferrite::packing_detail
