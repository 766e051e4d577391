// The portable definition of f32_kernels.h: 16 lanes in plain arrays.
#include <algorithm>
#include <cmath>

#include "f32_kernels.h"
#include "ferrite/models/ggml_blocks.h"

namespace ferrite::fast {
namespace {

constexpr uint64_t kLanes = 16;

float reduce_lanes(const float* acc) {
  float s8[8], s4[4], s2[2];
  for (int l = 0; l < 8; ++l) s8[l] = acc[l] + acc[l + 8];
  for (int l = 0; l < 4; ++l) s4[l] = s8[l] + s8[l + 4];
  for (int l = 0; l < 2; ++l) s2[l] = s4[l] + s4[l + 2];
  return s2[0] + s2[1];
}

void accumulate(float* acc, const float* a, const float* b) {
  for (uint64_t l = 0; l < kLanes; ++l) acc[l] = std::fma(a[l], b[l], acc[l]);
}

}  // namespace

float dot_portable(const float* a, const float* b, uint64_t n) {
  float acc[kLanes] = {};
  uint64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) accumulate(acc, a + i, b + i);
  if (i < n) {
    float pa[kLanes] = {}, pb[kLanes] = {};
    std::copy(a + i, a + n, pa);
    std::copy(b + i, b + n, pb);
    accumulate(acc, pa, pb);
  }
  return reduce_lanes(acc);
}

void matmul_rows_portable(const float* w, const float* x, float* y, uint64_t in, uint64_t out,
                          uint64_t tokens, uint64_t row_begin, uint64_t row_end) {
  for (uint64_t o = row_begin; o < row_end; ++o) {
    for (uint64_t t = 0; t < tokens; ++t) y[t * out + o] = dot_portable(x + t * in, w + o * in, in);
  }
}

void axpy_portable(float s, const float* x, float* y, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) y[i] = std::fma(s, x[i], y[i]);
}

void matmul_block_rows_portable(Blocks blocks, const std::byte* w, const float* x, float* y,
                                uint64_t in, uint64_t out, uint64_t tokens, uint64_t row_begin,
                                uint64_t row_end) {
  const uint64_t per_row = in / kBlockValues, bytes = block_bytes(blocks);
  const GgmlBlockFormat& format = blocks == Blocks::kQ8_0 ? kGgmlQ8_0 : kGgmlQ4_0;
  float q[32];
  for (uint64_t o = row_begin; o < row_end; ++o) {
    for (uint64_t t = 0; t < tokens; ++t) {
      float acc[kLanes] = {};
      const float* xt = x + t * in;
      const std::byte* block = w + o * per_row * bytes;
      for (uint64_t b = 0; b < per_row; ++b, block += bytes) {
        const float d = ggml_block_scale(block);
        ggml_block_integers(format, block, q);
        const float* xb = xt + b * kBlockValues;
        for (uint64_t l = 0; l < kLanes; ++l) {
          float p = q[l] * xb[l];
          p = std::fma(q[l + 16], xb[l + 16], p);
          acc[l] = std::fma(d, p, acc[l]);
        }
      }
      y[t * out + o] = reduce_lanes(acc);
    }
  }
}

}  // namespace ferrite::fast
