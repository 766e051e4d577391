// tests/support/numeric.h — distances between logit vectors.
#pragma once

#include <cmath>
#include <vector>

namespace ferrite {

// Relative L2 distance |a - b| / |b| (a and b the same length; b not zero).
inline double relative_l2(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    const double d = static_cast<double>(a[i]) - b[i];
    diff += d * d;
    norm += static_cast<double>(b[i]) * b[i];
  }
  return std::sqrt(diff / norm);
}

}  // namespace ferrite
