#include "ferrite/core/checked_math.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

namespace ferrite {
namespace checked_math_test {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
constexpr uint64_t k2p32 = uint64_t{1} << 32;
constexpr uint64_t k2p63 = uint64_t{1} << 63;

std::optional<uint64_t> product(std::vector<uint64_t> values) { return checked_product(values); }

// ---- add / sub / mul -------------------------------------------------------

TEST(CheckedMathTest, AddBelowAndAtTheLimit) {
  EXPECT_EQ(checked_add(2, 3), 5u);
  EXPECT_EQ(checked_add(0, 0), 0u);
  EXPECT_EQ(checked_add(kMax, 0), kMax);
  EXPECT_EQ(checked_add(kMax - 1, 1), kMax);
  EXPECT_EQ(checked_add(k2p63, k2p63 - 1), kMax);
}

TEST(CheckedMathTest, AddOverflowIsNullopt) {
  EXPECT_EQ(checked_add(kMax, 1), std::nullopt);
  EXPECT_EQ(checked_add(1, kMax), std::nullopt);
  EXPECT_EQ(checked_add(k2p63, k2p63), std::nullopt);
  EXPECT_EQ(checked_add(kMax, kMax), std::nullopt);
}

TEST(CheckedMathTest, SubUnderflowIsNullopt) {
  EXPECT_EQ(checked_sub(5, 3), 2u);
  EXPECT_EQ(checked_sub(5, 5), 0u);
  EXPECT_EQ(checked_sub(kMax, kMax), 0u);
  EXPECT_EQ(checked_sub(0, 1), std::nullopt);
  EXPECT_EQ(checked_sub(3, 5), std::nullopt);
  EXPECT_EQ(checked_sub(kMax - 1, kMax), std::nullopt);
}

TEST(CheckedMathTest, MulBelowAndAtTheLimit) {
  EXPECT_EQ(checked_mul(6, 7), 42u);
  EXPECT_EQ(checked_mul(0, kMax), 0u);
  EXPECT_EQ(checked_mul(kMax, 0), 0u);
  EXPECT_EQ(checked_mul(kMax, 1), kMax);
  EXPECT_EQ(checked_mul(k2p32 - 1, k2p32 + 1), kMax);  // (2^32-1)(2^32+1) = 2^64-1
  EXPECT_EQ(checked_mul(k2p63, 1), k2p63);
}

TEST(CheckedMathTest, MulOverflowIsNullopt) {
  EXPECT_EQ(checked_mul(k2p32, k2p32), std::nullopt);
  EXPECT_EQ(checked_mul(k2p63, 2), std::nullopt);
  EXPECT_EQ(checked_mul(kMax, 2), std::nullopt);
  EXPECT_EQ(checked_mul(k2p32, k2p32 - 1), k2p32 * (k2p32 - 1));  // still fits
  EXPECT_EQ(checked_mul(k2p32 + 1, k2p32), std::nullopt);
}

// ---- product ---------------------------------------------------------------

TEST(CheckedMathTest, ProductOfEmptyIsOne) { EXPECT_EQ(product({}), 1u); }

TEST(CheckedMathTest, ProductMultipliesAllValues) {
  EXPECT_EQ(product({7}), 7u);
  EXPECT_EQ(product({2, 3, 4}), 24u);
  EXPECT_EQ(product({kMax}), kMax);
  EXPECT_EQ(product({k2p32 - 1, k2p32 + 1}), kMax);
  EXPECT_EQ(product({0, kMax, kMax}), 0u);
  EXPECT_EQ(product({2, 2, k2p63 / 4}), k2p63);
}

TEST(CheckedMathTest, ProductOverflowIsNullopt) {
  EXPECT_EQ(product({k2p32, k2p32}), std::nullopt);
  EXPECT_EQ(product({2, k2p63}), std::nullopt);
  EXPECT_EQ(product({kMax, 2}), std::nullopt);
  EXPECT_EQ(product({2, 2, 2, k2p63 / 4}), std::nullopt);
  // Overflow in an intermediate product is reported even if later factors are 1.
  EXPECT_EQ(product({k2p32, k2p32, 1, 1}), std::nullopt);
}

// ---- power of two / align_up ----------------------------------------------

TEST(CheckedMathTest, IsPowerOfTwo) {
  EXPECT_FALSE(is_power_of_two(0));
  EXPECT_TRUE(is_power_of_two(1));
  EXPECT_TRUE(is_power_of_two(2));
  EXPECT_FALSE(is_power_of_two(3));
  EXPECT_TRUE(is_power_of_two(4096));
  EXPECT_FALSE(is_power_of_two(4097));
  EXPECT_FALSE(is_power_of_two(12));
  EXPECT_TRUE(is_power_of_two(k2p63));
  EXPECT_FALSE(is_power_of_two(kMax));
}

TEST(CheckedMathTest, AlignUpRoundsToPowerOfTwo) {
  EXPECT_EQ(checked_align_up(0, 16), 0u);
  EXPECT_EQ(checked_align_up(1, 16), 16u);
  EXPECT_EQ(checked_align_up(15, 16), 16u);
  EXPECT_EQ(checked_align_up(16, 16), 16u);
  EXPECT_EQ(checked_align_up(17, 16), 32u);
  EXPECT_EQ(checked_align_up(5, 1), 5u);
  EXPECT_EQ(checked_align_up(kMax, 1), kMax);
  EXPECT_EQ(checked_align_up(1, k2p63), k2p63);
}

TEST(CheckedMathTest, AlignUpAtTheLimit) {
  const uint64_t last_aligned = kMax - 15;  // 0xffff...fff0
  EXPECT_EQ(checked_align_up(last_aligned, 16), last_aligned);
  EXPECT_EQ(checked_align_up(last_aligned - 15, 16), last_aligned);
  EXPECT_EQ(checked_align_up(last_aligned + 1, 16), std::nullopt);
  EXPECT_EQ(checked_align_up(kMax, 16), std::nullopt);
  EXPECT_EQ(checked_align_up(kMax, 2), std::nullopt);
  EXPECT_EQ(checked_align_up(k2p63, k2p63), k2p63);
  EXPECT_EQ(checked_align_up(k2p63 + 1, k2p63), std::nullopt);
}

TEST(CheckedMathTest, AlignUpRejectsInvalidAlignment) {
  EXPECT_EQ(checked_align_up(8, 0), std::nullopt);
  EXPECT_EQ(checked_align_up(8, 3), std::nullopt);
  EXPECT_EQ(checked_align_up(8, 12), std::nullopt);
  EXPECT_EQ(checked_align_up(0, 24), std::nullopt);
  EXPECT_EQ(checked_align_up(8, kMax), std::nullopt);
}

// ---- round_up --------------------------------------------------------------

TEST(CheckedMathTest, RoundUpToAnyMultiple) {
  EXPECT_EQ(checked_round_up(0, 3), 0u);
  EXPECT_EQ(checked_round_up(1, 3), 3u);
  EXPECT_EQ(checked_round_up(7, 3), 9u);
  EXPECT_EQ(checked_round_up(9, 3), 9u);
  EXPECT_EQ(checked_round_up(3, 4), 4u);
  EXPECT_EQ(checked_round_up(5, 4), 8u);
  EXPECT_EQ(checked_round_up(11, 1), 11u);
  EXPECT_EQ(checked_round_up(kMax, 1), kMax);
  EXPECT_EQ(checked_round_up(1, kMax), kMax);
}

TEST(CheckedMathTest, RoundUpRejectsZeroMultiple) {
  EXPECT_EQ(checked_round_up(0, 0), std::nullopt);
  EXPECT_EQ(checked_round_up(5, 0), std::nullopt);
}

TEST(CheckedMathTest, RoundUpOverflowIsNullopt) {
  // 2^64 - 1 is odd: rounding up to a multiple of 2 needs 2^64.
  EXPECT_EQ(checked_round_up(kMax, 2), std::nullopt);
  EXPECT_EQ(checked_round_up(kMax, 4), std::nullopt);
  EXPECT_EQ(checked_round_up(kMax - 1, 4), std::nullopt);
  EXPECT_EQ(checked_round_up(kMax - 3, 4), kMax - 3);
  EXPECT_EQ(checked_round_up(k2p63 + 1, k2p63), std::nullopt);
  EXPECT_EQ(checked_round_up(k2p63, k2p63), k2p63);
}

}  // namespace checked_math_test
}  // namespace ferrite
