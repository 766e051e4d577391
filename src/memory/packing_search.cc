#include "memory/packing_search.h"

#include <algorithm>
#include <limits>

namespace ferrite::packing_detail {
namespace {

// Max over sections of the remaining (unplaced) demand, with range add.
class DemandTree {
 public:
  explicit DemandTree(std::span<const uint64_t> initial) : size_(initial.size()) {
    if (size_ == 0) return;
    max_.assign(4 * size_, 0);
    add_.assign(4 * size_, 0);
    build(1, 0, size_, initial);
  }
  // Adds `delta` (two's complement, may be "negative") to sections [lo, hi).
  void add(size_t lo, size_t hi, uint64_t delta) { add(1, 0, size_, lo, hi, delta); }
  uint64_t max() const { return size_ == 0 ? 0 : max_[1]; }

 private:
  void build(size_t node, size_t lo, size_t hi, std::span<const uint64_t> initial) {
    if (hi - lo == 1) {
      max_[node] = initial[lo];
      return;
    }
    const size_t mid = lo + (hi - lo) / 2;
    build(2 * node, lo, mid, initial);
    build(2 * node + 1, mid, hi, initial);
    max_[node] = std::max(max_[2 * node], max_[2 * node + 1]);
  }
  void add(size_t node, size_t lo, size_t hi, size_t qlo, size_t qhi, uint64_t delta) {
    if (qhi <= lo || hi <= qlo) return;
    if (qlo <= lo && hi <= qhi) {
      max_[node] += delta;
      add_[node] += delta;
      return;
    }
    const size_t mid = lo + (hi - lo) / 2;
    add(2 * node, lo, mid, qlo, qhi, delta);
    add(2 * node + 1, mid, hi, qlo, qhi, delta);
    max_[node] = std::max(max_[2 * node], max_[2 * node + 1]) + add_[node];
  }

  size_t size_;
  std::vector<uint64_t> max_;
  std::vector<uint64_t> add_;
};

// Binary min-heap of buffer indices keyed by (floor key, rank), with positions
// so keys can change in place.
class FloorHeap {
 public:
  FloorHeap(const std::vector<uint64_t>& key, std::span<const uint32_t> rank)
      : key_(key), rank_(rank), pos_(rank.size(), kAbsent) {
    heap_.reserve(rank.size());
  }
  bool empty() const { return heap_.empty(); }
  uint32_t top() const { return heap_.front(); }
  void push(uint32_t i) {
    pos_[i] = heap_.size();
    heap_.push_back(i);
    up(pos_[i]);
  }
  void remove(uint32_t i) {
    const size_t at = pos_[i];
    const uint32_t last = heap_.back();
    heap_.pop_back();
    pos_[i] = kAbsent;
    if (last == i) return;
    heap_[at] = last;
    pos_[last] = at;
    up(at);
    down(pos_[last]);
  }
  void key_increased(uint32_t i) { down(pos_[i]); }
  void key_decreased(uint32_t i) { up(pos_[i]); }

 private:
  static constexpr size_t kAbsent = std::numeric_limits<size_t>::max();
  bool less(uint32_t a, uint32_t b) const {
    if (key_[a] != key_[b]) return key_[a] < key_[b];
    return rank_[a] < rank_[b];
  }
  void up(size_t at) {
    while (at > 0) {
      const size_t parent = (at - 1) / 2;
      if (!less(heap_[at], heap_[parent])) break;
      swap_at(at, parent);
      at = parent;
    }
  }
  void down(size_t at) {
    for (;;) {
      size_t best = at;
      const size_t l = 2 * at + 1;
      const size_t r = l + 1;
      if (l < heap_.size() && less(heap_[l], heap_[best])) best = l;
      if (r < heap_.size() && less(heap_[r], heap_[best])) best = r;
      if (best == at) return;
      swap_at(at, best);
      at = best;
    }
  }
  void swap_at(size_t a, size_t b) {
    std::swap(heap_[a], heap_[b]);
    pos_[heap_[a]] = a;
    pos_[heap_[b]] = b;
  }

  const std::vector<uint64_t>& key_;
  std::span<const uint32_t> rank_;
  std::vector<size_t> pos_;
  std::vector<uint32_t> heap_;
};

enum class State : uint8_t { kOpen, kDeferred, kPlaced };

class Search {
 public:
  Search(const PackingModel& model, std::span<const uint32_t> rank, uint64_t capacity,
         uint64_t budget)
      : m_(model),
        rank_(rank),
        capacity_(capacity),
        budget_(budget),
        floor_(model.n, 0),
        key_(model.n, 0),
        deferred_at_(model.n, 0),
        state_(model.n, State::kOpen),
        open_neighbours_(model.n, 0),
        offsets_(model.n, 0),
        heap_(key_, rank),
        demand_(model.section_load),
        remaining_(model.section_load),
        bottom_(model.sections, 0),
        count_(model.sections, 0) {
    for (uint32_t i = 0; i < m_.n; ++i) {
      open_neighbours_[i] = static_cast<uint32_t>(m_.neighbours(i).size());
      heap_.push(i);
    }
  }

  SearchOutcome run() {
    struct Frame {
      uint32_t buffer = 0;
      uint8_t stage = 0;  // 0 enter, 1 placed child done, 2 deferred child done
      size_t mark = 0;
      uint64_t saved_deferred_at = 0;  // restored when the deferral is undone
    };
    std::vector<Frame> stack;
    stack.push_back({});
    bool stopped = false;
    while (!stack.empty()) {
      if (outcome_.work >= budget_) {
        stopped = true;
        break;
      }
      Frame& frame = stack.back();
      if (frame.stage == 0) {
        ++outcome_.work;
        if (heap_.empty()) {
          if (placed_ == m_.n) {
            outcome_.found = true;
            outcome_.offsets = offsets_;
            outcome_.peak = peak_of(m_, offsets_);
            stopped = true;
            break;
          }
          stack.pop_back();
          continue;
        }
        const uint64_t floor = key_[heap_.top()];
        if (floor > capacity_ || demand_.max() > capacity_ - floor || !sections_fit()) {
          stack.pop_back();
          continue;
        }
        const uint32_t b = choose_branch(floor);
        frame.buffer = b;
        frame.stage = 1;
        frame.mark = trail_.size();
        place(b, floor);
        stack.push_back({});
        continue;
      }
      if (frame.stage == 1) {
        const uint32_t b = frame.buffer;
        unplace(b, frame.mark);
        if (open_neighbours_[b] == 0) {  // nothing left that could raise its floor
          stack.pop_back();
          continue;
        }
        frame.stage = 2;
        frame.saved_deferred_at = deferred_at_[b];
        heap_.remove(b);
        state_[b] = State::kDeferred;
        deferred_at_[b] = key_[b];
        stack.push_back({});
        continue;
      }
      const uint32_t b = frame.buffer;
      state_[b] = State::kOpen;
      deferred_at_[b] = frame.saved_deferred_at;
      heap_.push(b);
      stack.pop_back();
    }
    outcome_.exhausted = !stopped;
    return std::move(outcome_);
  }

 private:
  struct TrailEntry {
    uint32_t buffer;
    bool reopened;
    uint64_t old_floor;
  };

  // Lower bound on the final offset of an unplaced buffer: its aligned floor;
  // a deferred buffer must also rise above its deferral point, onto the top
  // of a conflicting buffer not placed yet.
  uint64_t lower_bound(uint32_t i) {
    if (state_[i] == State::kOpen) return key_[i];
    uint64_t rise = std::numeric_limits<uint64_t>::max();
    const auto neighbours = m_.neighbours(i);
    outcome_.work += neighbours.size();
    for (uint32_t x : neighbours) {
      if (state_[x] != State::kPlaced) rise = std::min(rise, key_[x] + m_.size[x]);
    }
    if (rise == std::numeric_limits<uint64_t>::max()) return rise;  // nothing can raise it
    return align_up_unchecked(std::max({key_[i], deferred_at_[i] + 1, rise}), m_.alignment[i]);
  }

  // Every unplaced buffer lies at or above its lower bound, so it needs
  // bound + size ≤ capacity, and each time section needs the lowest bound of
  // the buffers covering it plus their remaining demand ≤ capacity.
  bool sections_fit() {
    std::fill(bottom_.begin(), bottom_.end(), std::numeric_limits<uint64_t>::max());
    for (uint32_t i = 0; i < m_.n; ++i) {
      if (state_[i] == State::kPlaced) continue;
      const uint64_t bound = lower_bound(i);
      if (bound > capacity_ || m_.size[i] > capacity_ - bound) return false;
      const uint32_t end = m_.end_section[i];
      for (uint32_t t = m_.first_section[i]; t < end; ++t) bottom_[t] = std::min(bottom_[t], bound);
      outcome_.work += end - m_.first_section[i];
    }
    for (size_t t = 0; t < m_.sections; ++t) {
      if (remaining_[t] == 0) continue;
      if (bottom_[t] > capacity_ || remaining_[t] > capacity_ - bottom_[t]) return false;
    }
    return true;
  }

  // Fail first: some open buffer must sit at the lowest floor in each section
  // whose bottom is that floor, unless the section wastes space there. Branch
  // on the section with the fewest such candidates (then the least slack) and
  // on its best-ranked candidate. Any open buffer at the lowest floor keeps
  // the search complete.
  uint32_t choose_branch(uint64_t floor) {
    std::fill(count_.begin(), count_.end(), 0u);
    for (uint32_t i = 0; i < m_.n; ++i) {
      if (state_[i] != State::kOpen || key_[i] != floor) continue;
      for (uint32_t t = m_.first_section[i]; t < m_.end_section[i]; ++t) ++count_[t];
      outcome_.work += m_.end_section[i] - m_.first_section[i];
    }
    size_t tightest = m_.sections;
    uint32_t fewest = std::numeric_limits<uint32_t>::max();
    uint64_t least_slack = std::numeric_limits<uint64_t>::max();
    for (size_t t = 0; t < m_.sections; ++t) {
      if (remaining_[t] == 0 || bottom_[t] != floor || count_[t] == 0) continue;
      const uint64_t slack = capacity_ - floor - remaining_[t];
      if (count_[t] < fewest || (count_[t] == fewest && slack < least_slack)) {
        fewest = count_[t];
        least_slack = slack;
        tightest = t;
      }
    }
    uint32_t chosen = heap_.top();
    if (tightest == m_.sections) return chosen;
    bool any = false;
    for (uint32_t i = 0; i < m_.n; ++i) {
      if (state_[i] != State::kOpen || key_[i] != floor) continue;
      if (m_.first_section[i] > tightest || m_.end_section[i] <= tightest) continue;
      if (!any || rank_[i] < rank_[chosen]) chosen = i;
      any = true;
    }
    outcome_.work += m_.n + m_.sections;
    return chosen;
  }

  void set_floor(uint32_t i, uint64_t floor) {
    floor_[i] = floor;
    key_[i] = align_up_unchecked(floor, m_.alignment[i]);
  }

  void place(uint32_t b, uint64_t offset) {
    heap_.remove(b);
    state_[b] = State::kPlaced;
    offsets_[b] = offset;
    ++placed_;
    demand_.add(m_.first_section[b], m_.end_section[b], uint64_t{0} - m_.size[b]);
    for (uint32_t t = m_.first_section[b]; t < m_.end_section[b]; ++t) remaining_[t] -= m_.size[b];
    const uint64_t top = offset + m_.size[b];
    const auto neighbours = m_.neighbours(b);
    outcome_.work += neighbours.size();
    for (uint32_t x : neighbours) {
      --open_neighbours_[x];
      if (state_[x] == State::kPlaced || floor_[x] >= top) continue;
      TrailEntry entry{x, false, floor_[x]};
      set_floor(x, top);
      if (state_[x] == State::kOpen) {
        heap_.key_increased(x);
      } else if (key_[x] > deferred_at_[x]) {
        state_[x] = State::kOpen;
        heap_.push(x);
        entry.reopened = true;
      }
      trail_.push_back(entry);
    }
  }

  void unplace(uint32_t b, size_t mark) {
    while (trail_.size() > mark) {
      const TrailEntry entry = trail_.back();
      trail_.pop_back();
      const uint32_t x = entry.buffer;
      set_floor(x, entry.old_floor);
      if (entry.reopened) {
        heap_.remove(x);
        state_[x] = State::kDeferred;
      } else if (state_[x] == State::kOpen) {
        heap_.key_decreased(x);
      }
    }
    for (uint32_t x : m_.neighbours(b)) ++open_neighbours_[x];
    demand_.add(m_.first_section[b], m_.end_section[b], m_.size[b]);
    for (uint32_t t = m_.first_section[b]; t < m_.end_section[b]; ++t) remaining_[t] += m_.size[b];
    --placed_;
    state_[b] = State::kOpen;
    heap_.push(b);
  }

  const PackingModel& m_;
  std::span<const uint32_t> rank_;
  uint64_t capacity_;
  uint64_t budget_;
  std::vector<uint64_t> floor_;  // max top of placed neighbours
  std::vector<uint64_t> key_;    // floor_ rounded up to the alignment
  std::vector<uint64_t> deferred_at_;
  std::vector<State> state_;
  std::vector<uint32_t> open_neighbours_;
  std::vector<uint64_t> offsets_;
  FloorHeap heap_;
  DemandTree demand_;
  std::vector<uint64_t> remaining_;  // unplaced demand per section
  std::vector<uint64_t> bottom_;     // scratch of sections_fit
  std::vector<uint32_t> count_;      // scratch of choose_branch
  std::vector<TrailEntry> trail_;
  size_t placed_ = 0;
  SearchOutcome outcome_;
};

}  // namespace

SearchOutcome search_packing(const PackingModel& model, std::span<const uint32_t> rank,
                             uint64_t capacity, uint64_t budget) {
  Search search(model, rank, capacity, budget);
  return search.run();
}

}  // namespace ferrite::packing_detail
