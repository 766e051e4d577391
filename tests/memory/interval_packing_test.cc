#include "ferrite/memory/interval_packing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "ferrite/format/minimalloc_csv.h"
#include "ferrite/memory/packing_baselines.h"

namespace ferrite {
namespace interval_packing_test {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

PackingBuffer buf(uint64_t id, uint64_t lower, uint64_t upper, uint64_t size,
                  uint64_t alignment = 1) {
  return PackingBuffer{
      .id = id, .lower = lower, .upper = upper, .size = size, .alignment = alignment};
}

PackingSolution pack_ok(const std::vector<PackingBuffer>& buffers,
                        uint64_t effort = kDefaultPackingEffort) {
  auto solution = pack_intervals(buffers, {.effort = effort});
  EXPECT_TRUE(solution) << solution.error().to_string();
  return solution ? *solution : PackingSolution{};
}

// Random interval sets: `n` buffers over a horizon of `horizon` steps.
std::vector<PackingBuffer> random_set(std::mt19937_64& rng, size_t n, uint64_t horizon,
                                      uint64_t max_size, bool aligned) {
  std::vector<PackingBuffer> buffers;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t lower = rng() % horizon;
    const uint64_t upper = lower + 1 + rng() % std::max<uint64_t>(1, horizon / 3);
    const uint64_t alignment = aligned ? uint64_t{1} << (rng() % 4) : 1;
    buffers.push_back(buf(i, lower, upper, 1 + rng() % max_size, alignment));
  }
  return buffers;
}

// The optimum by enumeration: every compacted packing is produced by placing
// the buffers in some order, each at the aligned top of the placed buffers it
// conflicts with (n ≤ 7).
uint64_t brute_force_optimum(const std::vector<PackingBuffer>& buffers) {
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0u);
  uint64_t best = kMax;
  do {
    std::vector<uint64_t> offsets(buffers.size(), 0);
    uint64_t peak = 0;
    for (size_t k = 0; k < order.size(); ++k) {
      const PackingBuffer& b = buffers[order[k]];
      uint64_t floor = 0;
      for (size_t j = 0; j < k; ++j) {
        const PackingBuffer& p = buffers[order[j]];
        if (p.lower < b.upper && b.lower < p.upper)
          floor = std::max(floor, offsets[order[j]] + p.size);
      }
      offsets[order[k]] = (floor + b.alignment - 1) / b.alignment * b.alignment;
      peak = std::max(peak, offsets[order[k]] + b.size);
    }
    best = std::min(best, peak);
  } while (std::next_permutation(order.begin(), order.end()));
  return buffers.empty() ? 0 : best;
}

// ---- hand-built fixtures ---------------------------------------------------

TEST(IntervalPackingTest, HeaderExample) {
  const std::vector<PackingBuffer> buffers = {buf(0, 0, 2, 64), buf(1, 1, 3, 32), buf(2, 2, 4, 64)};
  const PackingSolution solution = pack_ok(buffers);
  EXPECT_EQ(solution.offsets, (std::vector<uint64_t>{0, 64, 0}));
  EXPECT_EQ(solution.peak, 96u);
  EXPECT_EQ(solution.load, 96u);
  EXPECT_TRUE(solution.proven_optimal);
}

TEST(IntervalPackingTest, EmptyInput) {
  const PackingSolution solution = pack_ok({});
  EXPECT_TRUE(solution.offsets.empty());
  EXPECT_EQ(solution.peak, 0u);
  EXPECT_EQ(solution.load, 0u);
  EXPECT_EQ(compute_load({}), 0u);
  EXPECT_EQ(verify_packing({}, {}), 0u);
}

TEST(IntervalPackingTest, MinimallocExampleReachesLoad) {
  // example.12.csv: LOAD 12, reached by b5 at 0, b3 at 4, b1/b2/b4 at 8.
  const std::vector<PackingBuffer> buffers = {buf(0, 0, 3, 4), buf(1, 3, 9, 4), buf(2, 0, 9, 4),
                                              buf(3, 9, 21, 4), buf(4, 0, 21, 4)};
  const PackingSolution solution = pack_ok(buffers);
  EXPECT_EQ(solution.load, 12u);
  EXPECT_EQ(solution.peak, 12u);
  EXPECT_TRUE(verify_packing(buffers, solution.offsets));
}

TEST(IntervalPackingTest, GapBetweenNeighboursIsReused) {
  // 0 and 2 are live throughout and stacked; 1 and 3 take turns above them.
  const std::vector<PackingBuffer> buffers = {buf(0, 0, 10, 100), buf(1, 0, 5, 50),
                                              buf(2, 0, 10, 30), buf(3, 5, 10, 50)};
  const PackingSolution solution = pack_ok(buffers);
  EXPECT_EQ(solution.peak, 180u);
  EXPECT_EQ(solution.offsets[1], solution.offsets[3]);
  EXPECT_EQ(*verify_packing(buffers, solution.offsets), 180u);
}

TEST(IntervalPackingTest, AlignmentIsHonoured) {
  const std::vector<PackingBuffer> buffers = {buf(0, 0, 4, 3, 1), buf(1, 0, 4, 5, 64),
                                              buf(2, 1, 3, 7, 16), buf(3, 2, 6, 1, 128)};
  const PackingSolution solution = pack_ok(buffers);
  for (size_t i = 0; i < buffers.size(); ++i) {
    EXPECT_EQ(solution.offsets[i] % buffers[i].alignment, 0u) << "buffer " << i;
  }
  EXPECT_TRUE(verify_packing(buffers, solution.offsets));
  EXPECT_EQ(solution.peak, brute_force_optimum(buffers));
}

TEST(IntervalPackingTest, DecoderChainsAndTreesPackToExactlyLoad) {
  // A residual stream live throughout, per-layer chains of activations that
  // each feed the next, and a branch (attention and MLP) joining back.
  std::vector<PackingBuffer> buffers;
  uint64_t id = 0;
  buffers.push_back(buf(id++, 0, 100, 4096));
  for (uint64_t layer = 0; layer < 8; ++layer) {
    const uint64_t t = layer * 12;
    buffers.push_back(buf(id++, t + 0, t + 2, 4096));      // norm
    buffers.push_back(buf(id++, t + 1, t + 4, 3 * 4096));  // qkv
    buffers.push_back(buf(id++, t + 3, t + 5, 8192));      // scores
    buffers.push_back(buf(id++, t + 4, t + 6, 4096));      // context
    buffers.push_back(buf(id++, t + 5, t + 7, 4096));      // projection
    buffers.push_back(buf(id++, t + 6, t + 8, 4096));      // norm 2
    buffers.push_back(buf(id++, t + 7, t + 10, 11008));    // gate
    buffers.push_back(buf(id++, t + 7, t + 10, 11008));    // up
    buffers.push_back(buf(id++, t + 9, t + 11, 11008));    // gate * up
    buffers.push_back(buf(id++, t + 10, t + 12, 4096));    // down
  }
  const PackingSolution solution = pack_ok(buffers);
  EXPECT_EQ(solution.peak, solution.load);
  EXPECT_TRUE(verify_packing(buffers, solution.offsets));

  std::vector<PackingBuffer> chain;
  for (uint64_t i = 0; i < 200; ++i) chain.push_back(buf(i, i, i + 2, 1 + (i * 7919) % 1000));
  const PackingSolution chained = pack_ok(chain);
  EXPECT_EQ(chained.peak, chained.load);
}

// ---- validation and errors -------------------------------------------------

TEST(IntervalPackingTest, InvalidBuffersAreErrorsNamingTheId) {
  auto expect_invalid = [](std::vector<PackingBuffer> buffers, const std::string& needle) {
    auto packed = pack_intervals(buffers);
    ASSERT_FALSE(packed);
    EXPECT_EQ(packed.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(packed.error().message().find(needle), std::string::npos) << packed.error().message();
    EXPECT_FALSE(compute_load(buffers));
    EXPECT_FALSE(pack_greedy_by_size(buffers));
    EXPECT_FALSE(pack_online_best_fit(buffers));
  };
  expect_invalid({buf(1, 0, 1, 1), buf(42, 3, 3, 1)}, "buffer 42: lower 3 must be below upper 3");
  expect_invalid({buf(7, 0, 1, 0)}, "buffer 7: size must be positive");
  expect_invalid({buf(8, 0, 1, 1, 3)}, "buffer 8: alignment 3 is not a power of two");
  expect_invalid({buf(8, 0, 1, 1, 0)}, "alignment 0 is not a power of two");
  expect_invalid({buf(1, 0, 1, kMax - 10), buf(9, 5, 6, 11)}, "buffer 9: the sum of sizes");
  expect_invalid({buf(1, 0, 1, kMax - 10, uint64_t{1} << 63)}, "buffer 1: the sum of sizes");
}

TEST(IntervalPackingTest, HugeSizesWithoutOverflow) {
  // Σ sizes just fits: packing must not wrap.
  const std::vector<PackingBuffer> buffers = {buf(0, 0, 2, kMax / 2), buf(1, 1, 3, kMax / 2),
                                              buf(2, 3, 4, 1)};
  const PackingSolution solution = pack_ok(buffers);
  EXPECT_EQ(solution.peak, kMax / 2 * 2);
  EXPECT_TRUE(verify_packing(buffers, solution.offsets));
}

TEST(IntervalPackingTest, VerifyRejectsOverlapMisalignmentAndOverflow) {
  const std::vector<PackingBuffer> buffers = {buf(10, 0, 4, 8, 4), buf(11, 2, 6, 8, 4),
                                              buf(12, 4, 8, 8, 4)};
  // 12 starts when 10 ends: they may share bytes.
  EXPECT_EQ(verify_packing(buffers, std::vector<uint64_t>{0, 8, 0}), 16u);

  auto overlap = verify_packing(buffers, std::vector<uint64_t>{0, 4, 16});
  ASSERT_FALSE(overlap);
  EXPECT_NE(overlap.error().message().find("buffers 10 and 11 are both live at step 2"),
            std::string::npos)
      << overlap.error().message();
  EXPECT_EQ(overlap.error().fields().at("buffer_id"), "10");
  EXPECT_EQ(overlap.error().fields().at("other_buffer_id"), "11");

  auto misaligned = verify_packing(buffers, std::vector<uint64_t>{0, 10, 0});
  ASSERT_FALSE(misaligned);
  EXPECT_NE(misaligned.error().message().find("buffer 11: offset 10 is not a multiple"),
            std::string::npos);

  // offset + size == 2^64 - 1 still fits; one more byte does not.
  EXPECT_EQ(
      verify_packing(std::vector<PackingBuffer>{buf(5, 0, 1, 8)}, std::vector<uint64_t>{kMax - 8}),
      kMax);
  auto overflow =
      verify_packing(std::vector<PackingBuffer>{buf(5, 0, 1, 8)}, std::vector<uint64_t>{kMax - 7});
  ASSERT_FALSE(overflow);
  EXPECT_NE(overflow.error().message().find("buffer 5: offset"), std::string::npos);

  EXPECT_FALSE(verify_packing(buffers, std::vector<uint64_t>{0, 8}));
}

TEST(IntervalPackingTest, ComputeLoad) {
  EXPECT_EQ(compute_load(std::vector<PackingBuffer>{buf(0, 0, 2, 5), buf(1, 2, 4, 7)}), 7u);
  EXPECT_EQ(compute_load(std::vector<PackingBuffer>{buf(0, 0, 3, 5), buf(1, 2, 4, 7)}), 12u);
}

TEST(IntervalPackingTest, BaselinesOnAFixture) {
  // Greedy by size places 2 (size 8) first at 0, then 0 (size 4) above it...
  const std::vector<PackingBuffer> buffers = {buf(0, 0, 2, 4), buf(1, 2, 4, 4), buf(2, 1, 3, 8)};
  auto greedy = pack_greedy_by_size(buffers);
  ASSERT_TRUE(greedy);
  EXPECT_EQ(greedy->offsets, (std::vector<uint64_t>{8, 8, 0}));
  EXPECT_EQ(greedy->peak, 12u);
  auto online = pack_online_best_fit(buffers);
  ASSERT_TRUE(online);
  // Time order: 0 at 0; 2 at 4 (arena end); 0 frees [0,4), 1 (size 4) takes it.
  EXPECT_EQ(online->offsets, (std::vector<uint64_t>{0, 0, 4}));
  EXPECT_EQ(online->peak, 12u);
}

TEST(IntervalPackingTest, TooManyConflictsFallsBackToOnlineBestFit) {
  std::vector<PackingBuffer> buffers;
  // 6,000 buffers live at once: 35,994,000 directed conflicts, above the cap.
  for (uint64_t i = 0; i < 6000; ++i) buffers.push_back(buf(i, i % 7, 10'000 + i % 5, 1 + i % 3));
  const PackingSolution solution = pack_ok(buffers);
  EXPECT_EQ(solution.method, "online-best-fit");
  EXPECT_TRUE(verify_packing(buffers, solution.offsets));
}

// ---- properties over random sets ------------------------------------------

TEST(IntervalPackingPropertyTest, ValidDeterministicAndNeverWorseThanBaselines) {
  std::mt19937_64 rng(0x5eed0001);
  for (int round = 0; round < 2000; ++round) {
    const size_t n = 1 + rng() % 30;
    const auto buffers = random_set(rng, n, 4 + rng() % 40, 1 + rng() % 1000, round % 2 == 1);
    const uint64_t effort = round % 3 == 0 ? 0 : 100'000;
    auto first = pack_intervals(buffers, {.effort = effort});
    ASSERT_TRUE(first) << first.error().to_string();
    auto verified = verify_packing(buffers, first->offsets);
    ASSERT_TRUE(verified) << "round " << round << ": " << verified.error().to_string();
    EXPECT_EQ(*verified, first->peak);
    EXPECT_GE(first->peak, first->load);
    EXPECT_EQ(compute_load(buffers), first->load);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(first->offsets[i] % buffers[i].alignment, 0u);
    auto second = pack_intervals(buffers, {.effort = effort});
    ASSERT_TRUE(second);
    EXPECT_EQ(second->offsets, first->offsets) << "round " << round;
    auto greedy = pack_greedy_by_size(buffers);
    auto online = pack_online_best_fit(buffers);
    ASSERT_TRUE(greedy && online);
    ASSERT_TRUE(verify_packing(buffers, greedy->offsets));
    ASSERT_TRUE(verify_packing(buffers, online->offsets));
    EXPECT_LE(first->peak, greedy->peak) << "round " << round;
    EXPECT_LE(first->peak, online->peak) << "round " << round;
  }
}

TEST(IntervalPackingPropertyTest, SearchMatchesBruteForceOnTinySets) {
  std::mt19937_64 rng(0x5eed0002);
  for (int round = 0; round < 600; ++round) {
    const size_t n = 1 + rng() % 6;
    const auto buffers = random_set(rng, n, 3 + rng() % 8, 1 + rng() % 20, round % 2 == 1);
    const PackingSolution solution = pack_ok(buffers, 2'000'000);
    EXPECT_EQ(solution.peak, brute_force_optimum(buffers)) << "round " << round;
    EXPECT_TRUE(solution.proven_optimal) << "round " << round;
  }
}

TEST(IntervalPackingPropertyTest, LargeRandomSetIsValid) {
  std::mt19937_64 rng(0x5eed0003);
  std::vector<PackingBuffer> buffers;
  for (uint64_t i = 0; i < 20'000; ++i) {
    const uint64_t lower = rng() % 40'000;
    buffers.push_back(
        buf(i, lower, lower + 1 + rng() % 50, 1 + rng() % (1 << 16), uint64_t{1} << (rng() % 6)));
  }
  const PackingSolution solution = pack_ok(buffers);
  auto verified = verify_packing(buffers, solution.offsets);
  ASSERT_TRUE(verified) << verified.error().to_string();
  auto greedy = pack_greedy_by_size(buffers);
  ASSERT_TRUE(greedy);
  EXPECT_LE(solution.peak, greedy->peak);
}

// ---- the MiniMalloc instances ---------------------------------------------

TEST(IntervalPackingBenchTest, MinimallocInstancesPackValidly) {
  const std::filesystem::path dir = FERRITE_SOURCE_DIR "/../shared/bench/minimalloc";
  if (!std::filesystem::exists(dir / "A.1048576.csv")) GTEST_SKIP() << dir << " is not available";
  for (const char* name : {"A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K"}) {
    auto instance = read_minimalloc_csv(dir / (std::string(name) + ".1048576.csv"));
    ASSERT_TRUE(instance) << instance.error().to_string();
    // A low effort keeps the test fast; the benchmark measures the default.
    auto solution = pack_intervals(instance->buffers, {.effort = 2'000'000});
    ASSERT_TRUE(solution) << name;
    auto verified = verify_packing(instance->buffers, solution->offsets);
    ASSERT_TRUE(verified) << name << ": " << verified.error().to_string();
    auto greedy = pack_greedy_by_size(instance->buffers);
    ASSERT_TRUE(greedy);
    EXPECT_LE(solution->peak, greedy->peak) << name;
    EXPECT_GE(solution->peak, solution->load) << name;
  }
}

}  // namespace interval_packing_test
}  // namespace ferrite
