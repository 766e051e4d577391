#include "ferrite/core/in_place_array.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ferrite {
namespace {

// Counts live instances, so that a test sees exactly which elements a
// Building or an array destroyed.
struct Counted {
  static inline int live = 0;
  explicit Counted(int v) : value(v) { ++live; }
  Counted(const Counted& other) : value(other.value) { ++live; }
  Counted(Counted&& other) noexcept : value(other.value) { ++live; }
  ~Counted() { --live; }
  Counted& operator=(const Counted&) = default;
  friend bool operator==(const Counted& a, const Counted& b) { return a.value == b.value; }
  int value;
};

InPlaceArray<Counted> built_backwards(int n) {
  InPlaceArray<Counted>::Building building(static_cast<size_t>(n));
  for (int i = n - 1; i >= 0; --i) building.construct(static_cast<size_t>(i), Counted(i * 2));
  EXPECT_TRUE(building.complete());
  return std::move(building).release();
}

TEST(InPlaceArrayTest, ElementsBuiltOutOfOrderReadInIndexOrder) {
  {
    const InPlaceArray<Counted> array = built_backwards(5);
    ASSERT_EQ(array.size(), 5u);
    EXPECT_FALSE(array.empty());
    for (size_t i = 0; i < array.size(); ++i) EXPECT_EQ(array[i].value, static_cast<int>(i) * 2);
    EXPECT_EQ(array.front().value, 0);
    EXPECT_EQ(array.back().value, 8);
    std::span<const Counted> view = array;
    EXPECT_EQ(view.size(), 5u);
    EXPECT_EQ(view.data(), array.data());
    EXPECT_EQ(Counted::live, 5);
  }
  EXPECT_EQ(Counted::live, 0);
}

TEST(InPlaceArrayTest, CopiesCopyEveryElementAndMovesMoveTheAllocation) {
  {
    InPlaceArray<Counted> a = built_backwards(4);
    InPlaceArray<Counted> b = a;
    EXPECT_EQ(a, b);
    EXPECT_NE(a.data(), b.data());
    EXPECT_EQ(Counted::live, 8);
    const Counted* storage = a.data();
    InPlaceArray<Counted> c = std::move(a);
    EXPECT_EQ(c.data(), storage);
    EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
    b = built_backwards(2);
    EXPECT_EQ(b.size(), 2u);
    EXPECT_FALSE(b == c);
    c = b;
    EXPECT_EQ(c, b);
    EXPECT_EQ(Counted::live, 4);
  }
  EXPECT_EQ(Counted::live, 0);
  InPlaceArray<Counted> empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.begin(), empty.end());
  InPlaceArray<Counted> empty_copy = empty;
  EXPECT_EQ(empty_copy, empty);
}

TEST(InPlaceArrayTest, AnUnreleasedBuildingDestroysExactlyWhatItConstructed) {
  {
    InPlaceArray<Counted>::Building building(10);
    building.construct(7, Counted(7));
    building.construct(2, Counted(2));
    EXPECT_FALSE(building.complete());
    EXPECT_EQ(building.first_missing(), 0u);
    EXPECT_EQ(Counted::live, 2);
  }
  EXPECT_EQ(Counted::live, 0);
  InPlaceArray<Counted>::Building none(0);
  EXPECT_TRUE(none.complete());
  EXPECT_TRUE(std::move(none).release().empty());
}

}  // namespace
}  // namespace ferrite
