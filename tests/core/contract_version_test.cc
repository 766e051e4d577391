#include "ferrite/core/contract_version.h"

#include <compare>
#include <cstdint>

#include <gtest/gtest.h>

namespace ferrite {
namespace contract_version_test {

TEST(ContractVersionTest, SatisfiesSameMajorWithEqualOrHigherMinor) {
  const ContractVersion available{1, 2};
  EXPECT_TRUE(available.satisfies({1, 0}));
  EXPECT_TRUE(available.satisfies({1, 1}));
  EXPECT_TRUE(available.satisfies({1, 2}));
  EXPECT_FALSE(available.satisfies({1, 3}));
}

TEST(ContractVersionTest, DoesNotSatisfyAnotherMajor) {
  const ContractVersion available{2, 5};
  EXPECT_FALSE(available.satisfies({1, 0}));  // a newer major is not backwards compatible
  EXPECT_FALSE(available.satisfies({3, 0}));
  EXPECT_FALSE(available.satisfies({1, 5}));
  EXPECT_FALSE(ContractVersion({1, 9}).satisfies({2, 0}));
}

TEST(ContractVersionTest, SatisfiesAtMinorBoundaries) {
  EXPECT_TRUE(ContractVersion({1, UINT16_MAX}).satisfies({1, UINT16_MAX}));
  EXPECT_FALSE(ContractVersion({1, UINT16_MAX - 1}).satisfies({1, UINT16_MAX}));
  EXPECT_TRUE(ContractVersion({UINT16_MAX, 0}).satisfies({UINT16_MAX, 0}));
}

TEST(ContractVersionTest, MajorZeroIsUnstable) {
  EXPECT_FALSE(ContractVersion({0, 0}).is_stable());
  EXPECT_FALSE(ContractVersion({0, 7}).is_stable());
  EXPECT_FALSE(ContractVersion{}.is_stable());
  EXPECT_TRUE(ContractVersion({1, 0}).is_stable());
  EXPECT_TRUE(ContractVersion({UINT16_MAX, 0}).is_stable());
}

TEST(ContractVersionTest, DefaultIsZeroZero) {
  const ContractVersion v;
  EXPECT_EQ(v.major, 0);
  EXPECT_EQ(v.minor, 0);
}

TEST(ContractVersionTest, ToStringIsMajorDotMinor) {
  EXPECT_EQ(ContractVersion({1, 2}).to_string(), "1.2");
  EXPECT_EQ(ContractVersion({0, 0}).to_string(), "0.0");
  EXPECT_EQ(ContractVersion({65535, 10}).to_string(), "65535.10");
}

TEST(ContractVersionTest, OrdersByMajorThenMinor) {
  EXPECT_LT(ContractVersion({1, 9}), ContractVersion({2, 0}));
  EXPECT_LT(ContractVersion({1, 2}), ContractVersion({1, 3}));
  EXPECT_EQ(ContractVersion({1, 2}), ContractVersion({1, 2}));
  EXPECT_NE(ContractVersion({1, 2}), ContractVersion({2, 1}));
  EXPECT_EQ(ContractVersion({3, 0}) <=> ContractVersion({2, 9}), std::strong_ordering::greater);
}

}  // namespace contract_version_test
}  // namespace ferrite
