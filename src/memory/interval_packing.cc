// pack_intervals: constructive heuristics, then a bounded exact search.
#include "ferrite/memory/interval_packing.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "ferrite/core/checked_math.h"
#include "ferrite/memory/packing_baselines.h"
#include "memory/best_fit_placement.h"
#include "memory/packing_model.h"
#include "memory/packing_search.h"

namespace ferrite {
namespace {

using packing_detail::GapChoice;
using packing_detail::GapPlacer;
using packing_detail::PackingModel;
__extension__ typedef unsigned __int128 u128;

struct Candidate {
  std::vector<uint64_t> offsets;
  uint64_t peak = 0;
  std::string method;
};

// A permutation of 0..n-1 sorted by `less`, ties by index.
template <class Less>
std::vector<uint32_t> order_by(const PackingModel& m, Less less) {
  std::vector<uint32_t> order(m.n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), less);
  return order;
}

std::vector<uint32_t> ranks_of(std::span<const uint32_t> order) {
  std::vector<uint32_t> rank(order.size());
  for (uint32_t position = 0; position < order.size(); ++position) rank[order[position]] = position;
  return rank;
}

// The Luby sequence 1 1 2 1 1 2 4 1 1 2 ... (index from 1).
uint64_t luby(uint64_t i) {
  for (;;) {
    uint64_t k = 1;
    while (k < 63 && ((uint64_t{1} << k) - 1) < i) ++k;
    const uint64_t full = (uint64_t{1} << k) - 1;
    if (i >= full) return uint64_t{1} << (k - 1);
    i -= full >> 1;
  }
}

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Sizes scaled by a random factor in [1/2, 3/2), then by index.
std::vector<uint32_t> perturbed_order(const PackingModel& m, uint64_t seed) {
  uint64_t state = seed;
  std::vector<u128> score(m.n);
  for (size_t i = 0; i < m.n; ++i) {
    const uint64_t factor = (splitmix64(state) >> 44) + (uint64_t{1} << 19);  // [2^19, 3·2^19)
    score[i] = static_cast<u128>(m.size[i]) * factor;
  }
  return order_by(m, [&](uint32_t a, uint32_t b) { return score[a] > score[b]; });
}

}  // namespace

Result<PackingSolution> pack_intervals(std::span<const PackingBuffer> buffers,
                                       const PackingOptions& options) {
  FERRITE_ASSIGN_OR_RETURN(PackingModel m, packing_detail::build_packing_model(buffers, true));
  PackingSolution solution;
  solution.load = m.load;

  FERRITE_ASSIGN_OR_RETURN(PackingSolution online, pack_online_best_fit(buffers));
  solution.steps += online.steps;
  Candidate best{std::move(online.offsets), online.peak, "online-best-fit"};
  auto consider = [&](std::vector<uint64_t> offsets, std::string method) {
    const uint64_t peak = packing_detail::peak_of(m, offsets);
    if (peak < best.peak) best = Candidate{std::move(offsets), peak, std::move(method)};
  };
  auto finish = [&]() {
    solution.offsets = std::move(best.offsets);
    solution.peak = best.peak;
    solution.method = std::move(best.method);
    solution.proven_optimal = solution.proven_optimal || solution.peak == solution.load;
    return solution;
  };
  // Too many conflicting pairs for the gap-based packers: keep the online packing.
  if (!m.has_conflicts) return finish();

  // Orders for the constructions; the first is the greedy-by-size baseline's.
  const auto by_size = order_by(m, [&](uint32_t a, uint32_t b) {
    if (m.size[a] != m.size[b]) return m.size[a] > m.size[b];
    if (m.lower[a] != m.lower[b]) return m.lower[a] < m.lower[b];
    return m.upper[a] > m.upper[b];
  });
  const auto by_area = order_by(m, [&](uint32_t a, uint32_t b) {
    const u128 area_a = static_cast<u128>(m.size[a]) * m.lifetime(a);
    const u128 area_b = static_cast<u128>(m.size[b]) * m.lifetime(b);
    if (area_a != area_b) return area_a > area_b;
    return m.size[a] > m.size[b];
  });
  const auto by_lifetime = order_by(m, [&](uint32_t a, uint32_t b) {
    if (m.lifetime(a) != m.lifetime(b)) return m.lifetime(a) > m.lifetime(b);
    return m.size[a] > m.size[b];
  });
  GapPlacer placer(m);
  consider(placer.place_all(by_size, GapChoice::kBestFit, &solution.steps), "greedy-by-size");
  consider(placer.place_all(by_size, GapChoice::kFirstFit, &solution.steps), "first-fit-by-size");
  consider(placer.place_all(by_area, GapChoice::kBestFit, &solution.steps), "best-fit-by-area");
  consider(placer.place_all(by_lifetime, GapChoice::kBestFit, &solution.steps),
           "best-fit-by-lifetime");
  if (best.peak == m.load || options.effort == 0) return finish();

  // Probes: "is there a packing with peak ≤ C?" answered by restarts of the
  // exact search with a Luby schedule of budgets (restart r > 0 ranks ties by
  // a size order perturbed by a PRNG seeded with r, so the run is
  // deterministic). First C = LOAD, then bisection between the best lower
  // bound and the best peak found. A probe that runs out of budget counts as
  // "no" for the bisection but proves nothing.
  uint64_t spent = 0;
  // A restart needs room for at least a few complete descents: a descent
  // places n buffers and each node scans every section of every buffer.
  uint64_t node_cost = m.n + m.sections;
  for (size_t i = 0; i < m.n; ++i) node_cost += m.end_section[i] - m.first_section[i];
  const auto descent = checked_mul(m.n, node_cost);
  if (!descent || *descent > options.effort) return finish();  // not even one descent fits
  const uint64_t unit = std::max<uint64_t>(options.effort / 1024, *descent);
  auto probe = [&](uint64_t capacity, uint64_t budget) -> packing_detail::SearchOutcome {
    packing_detail::SearchOutcome last;
    uint64_t used = 0;
    for (uint64_t r = 0; used < budget; ++r) {
      const auto rank = r == 0 ? ranks_of(by_size) : ranks_of(perturbed_order(m, r));
      const uint64_t slice = checked_mul(unit, luby(r + 1)).value_or(budget);
      last = packing_detail::search_packing(m, rank, capacity, std::min(slice, budget - used));
      used += last.work;
      if (last.found || last.exhausted) break;
    }
    spent += used;
    return last;
  };
  uint64_t low = m.load;   // no packing below this is known to exist
  bool low_proven = true;  // `low` is a proven lower bound
  for (uint64_t target = m.load, round = 0; low < best.peak && spent < options.effort; ++round) {
    const uint64_t left = options.effort - spent;
    const uint64_t budget = round == 0 ? left / 4 : std::min(left, std::max(left / 3, unit));
    auto outcome = probe(target, budget);
    if (outcome.found) {
      consider(std::move(outcome.offsets), "search");
    } else {
      low = target + 1;
      low_proven = low_proven && outcome.exhausted;
    }
    target = low + (best.peak - 1 - low) / 2;
  }
  solution.proven_optimal = low_proven && low >= best.peak;
  solution.steps += spent;
  return finish();
}

}  // namespace ferrite
