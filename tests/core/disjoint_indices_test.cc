// DisjointIndices (core/disjoint_indices.h): classes named by their smallest
// index, whatever the order of the joins.
#include "ferrite/core/disjoint_indices.h"

#include <algorithm>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace ferrite {
namespace {

TEST(DisjointIndicesTest, EveryIndexStartsAlone) {
  DisjointIndices classes(5);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(classes.root(i), i);
}

TEST(DisjointIndicesTest, AClassIsNamedByItsSmallestIndex) {
  DisjointIndices classes(8);
  classes.join(7, 5);
  classes.join(5, 6);
  classes.join(6, 2);
  classes.join(3, 4);
  for (size_t i : {2u, 5u, 6u, 7u}) EXPECT_EQ(classes.root(i), 2u) << i;
  EXPECT_EQ(classes.root(3), 3u);
  EXPECT_EQ(classes.root(4), 3u);
  classes.join(4, 7);  // merging two classes keeps the smaller root
  for (size_t i : {2u, 3u, 4u, 5u, 6u, 7u}) EXPECT_EQ(classes.root(i), 2u) << i;
  EXPECT_EQ(classes.root(0), 0u);
  EXPECT_EQ(classes.root(1), 1u);
}

// The same pairs joined in any order give the same roots: those of a
// reference that relabels whole classes by their minimum.
TEST(DisjointIndicesTest, RootsDoNotDependOnTheOrderOfTheJoins) {
  std::mt19937 random(11);
  for (int run = 0; run < 100; ++run) {
    const size_t n = 1 + random() % 60;
    std::vector<std::pair<size_t, size_t>> pairs;
    for (size_t k = 0; k < n; ++k) pairs.emplace_back(random() % n, random() % n);
    std::vector<size_t> label(n);
    for (size_t i = 0; i < n; ++i) label[i] = i;
    for (const auto& [a, b] : pairs) {
      const size_t from = std::max(label[a], label[b]);
      const size_t to = std::min(label[a], label[b]);
      for (size_t& l : label) {
        if (l == from) l = to;
      }
    }
    std::shuffle(pairs.begin(), pairs.end(), random);
    DisjointIndices classes(n);
    for (const auto& [a, b] : pairs) classes.join(a, b);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(classes.root(i), label[i]) << "run " << run;
  }
}

}  // namespace
}  // namespace ferrite
