// ferrite/core/disjoint_indices.h — union-find over the indices [0, n).
//
// Contract: `DisjointIndices classes(n)` starts with every index in a class
// of its own; `join(a, b)` merges two classes, and `root(x)` names x's class
// by its SMALLEST index, so the representative never depends on the order
// of the joins — a caller that numbers its items in a fixed order (program
// order, id order) gets representatives in that order. Path halving keeps
// each call near O(1) amortized. Indices must be below n (an invariant: the
// caller numbered them).
//
// Example:
//   DisjointIndices classes(4);
//   classes.join(3, 1);
//   classes.root(3);  // 1
//   classes.root(2);  // 2
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <numeric>
#include <vector>

namespace ferrite {

class DisjointIndices {
 public:
  explicit DisjointIndices(size_t n) : parent_(n) {
    std::iota(parent_.begin(), parent_.end(), size_t{0});
  }

  size_t root(size_t x) {
    assert(x < parent_.size());
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }

  void join(size_t a, size_t b) {
    a = root(a);
    b = root(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }

 private:
  std::vector<size_t> parent_;
};

}  // namespace ferrite
