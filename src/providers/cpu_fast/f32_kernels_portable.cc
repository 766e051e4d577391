// The portable definition of f32_kernels.h: 16 lanes in plain arrays.
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "f32_kernels.h"
#include "ferrite/models/ggml_blocks.h"
#include "ferrite/models/half_float.h"

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

namespace {

// Step 1 of the contract for one block: writes q[0..31], returns d_a.
// Written so the compiler vectorizes it (plain SSE2 on x86-64).
float quantize_block(const float* x, int8_t* q) {
  // amax from the bits: |x| read as an integer orders like the float, and
  // every NaN and infinity lies above FLT_MAX.
  int32_t top = 0;
  for (int i = 0; i < 32; ++i) {
    const int32_t bits = std::bit_cast<int32_t>(x[i]) & 0x7fffffff;
    top = bits > top ? bits : top;
  }
  if (top > std::bit_cast<int32_t>(std::numeric_limits<float>::max()) || top == 0) {
    std::fill_n(q, 32, int8_t{0});
    return top == 0 ? 0.0f : std::numeric_limits<float>::quiet_NaN();
  }
  const float amax = std::bit_cast<float>(top), inv = 127.0f / amax;
  // Round half to even: for |v| <= 2^22, adding and subtracting 1.5 * 2^23
  // leaves the nearest integer (ties to even) in the default rounding mode
  // (x * inv stays a rounded f32 product: this file is built with
  // -ffp-contract=off).
  constexpr float kRound = 12582912.0f;
  if (inv <= std::numeric_limits<float>::max()) {
    // |x_i| <= amax, so |x_i * inv| <= 127 (+ a rounding): never clamped.
    for (int i = 0; i < 32; ++i) {
      const float v = x[i] * inv;
      q[i] = static_cast<int8_t>(static_cast<int32_t>((v + kRound) - kRound));
    }
  } else {
    // amax < 127 / FLT_MAX: inv is infinite; every nonzero value clamps.
    for (int i = 0; i < 32; ++i) q[i] = x[i] == 0.0f ? 0 : x[i] > 0.0f ? 127 : -127;
  }
  // The scale is stored as f16, as llama.cpp's Q8_0 activation blocks store
  // it (so a Q8_0 model gives llama.cpp's products up to summation order).
  return f16_bits_to_f32(f32_to_f16_bits(amax / 127.0f));
}

}  // namespace

float quantize_activation_block(const float* x, int8_t* q) { return quantize_block(x, q); }

void quantize_activations(const float* x, uint64_t token_begin, uint64_t token_end,
                          QuantizedActivations& out) {
  const uint64_t in = out.in(), blocks = in / kBlockValues;
  const int32_t k = unsigned_offset(out.blocks());
  for (uint64_t t = token_begin; t < token_end; ++t) {
    ActivationPair* pairs = out.token(t);
    for (uint64_t b = 0; b < 2 * out.pairs(); ++b) {
      ActivationPair& pair = pairs[b / 2];
      const uint64_t half = b % 2;
      int8_t* q = pair.q + 32 * half;
      float scale = 0.0f;
      if (b < blocks) {
        scale = quantize_block(x + t * in + b * kBlockValues, q);
      } else {
        std::fill_n(q, 32, int8_t{0});
      }
      std::fill_n(pair.scale + 8 * half, 8, scale);
      for (int j = 0; j < 8; ++j) {
        const int32_t asum = q[4 * j] + q[4 * j + 1] + q[4 * j + 2] + q[4 * j + 3];
        pair.correction[8 * half + j] = -k * asum;
      }
    }
  }
}

void matmul_block_rows_portable(Blocks blocks, const std::byte* w, const QuantizedActivations& x,
                                float* y, uint64_t out, uint64_t tokens, uint64_t row_begin,
                                uint64_t row_end) {
  const uint64_t per_row = x.in() / kBlockValues, bytes = block_bytes(blocks);
  const GgmlBlockFormat& format = blocks == Blocks::kQ8_0 ? kGgmlQ8_0 : kGgmlQ4_0;
  constexpr uint64_t kTokens = 4;  // tokens per pass over a row's blocks
  int8_t wq[32];
  for (uint64_t o = row_begin; o < row_end; ++o) {
    for (uint64_t t0 = 0; t0 < tokens; t0 += kTokens) {
      const uint64_t n = std::min(kTokens, tokens - t0);
      float acc[kTokens][kLanes] = {};
      const std::byte* block = w + o * per_row * bytes;
      for (uint64_t b = 0; b < per_row; ++b, block += bytes) {
        const float dw = ggml_block_scale(block);
        ggml_block_integers(format, block, wq);
        const uint64_t half = b % 2;
        for (uint64_t t = 0; t < n; ++t) {
          const ActivationPair& pair = x.token(t0 + t)[b / 2];
          const int8_t* q = pair.q + 32 * half;
          const float s = dw * pair.scale[8 * half];
          for (uint64_t j = 0; j < 8; ++j) {
            int32_t p = 0;
            for (uint64_t k = 4 * j; k < 4 * j + 4; ++k) p += int32_t{wq[k]} * int32_t{q[k]};
            float& lane = acc[t][8 * half + j];
            lane = std::fma(static_cast<float>(p), s, lane);
          }
        }
      }
      for (uint64_t t = 0; t < n; ++t) y[(t0 + t) * out + o] = reduce_lanes(acc[t]);
    }
  }
}

}  // namespace ferrite::fast
