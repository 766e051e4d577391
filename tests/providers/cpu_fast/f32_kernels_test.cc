// The int8 activation contract of cpu.fast's block-quantized products
// (src/providers/cpu_fast/f32_kernels.h): the quantizer's values, and the
// products of every instruction set against the contract written out here.
#include "providers/cpu_fast/f32_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "ferrite/models/ggml_blocks.h"
#include "ferrite/models/half_float.h"

namespace ferrite::fast {
namespace f32_kernels_test {

// Quantized activations over memory this helper owns (the kernels use the
// node's planned scratch instead).
struct OwnedActivations {
  std::vector<ActivationPair> pairs;
  QuantizedActivations q;
  OwnedActivations(uint64_t capacity, uint64_t in, Blocks blocks)
      : pairs(std::max<uint64_t>(1, capacity * QuantizedActivations::pairs_for(in))),
        q(pairs.data(), in, blocks) {}
};

// asum_j of a block, from the stored correction -k * asum_j.
int32_t asum(const ActivationPair& pair, int half, int j, int32_t k) {
  EXPECT_EQ(pair.correction[8 * half + j] % k, 0);
  return -pair.correction[8 * half + j] / k;
}

void expect_scale(const ActivationPair& pair, int half, float d) {
  for (int l = 0; l < 8; ++l) {
    if (std::isnan(d)) {
      EXPECT_TRUE(std::isnan(pair.scale[8 * half + l]));
    } else {
      EXPECT_EQ(pair.scale[8 * half + l], d) << "lane " << l;
    }
  }
}

void check_quantizer(Blocks blocks) {
  SCOPED_TRACE(blocks == Blocks::kQ8_0 ? "Q8_0" : "Q4_0");
  const int32_t k = blocks == Blocks::kQ8_0 ? 128 : 8;
  EXPECT_EQ(unsigned_offset(blocks), k);
  // in = 96: three blocks, padded to two pairs; two tokens.
  OwnedActivations owned(2, 96, blocks);
  QuantizedActivations& q = owned.q;
  ASSERT_EQ(q.pairs(), 2u);
  std::vector<float> x(2 * 96, 0.0f);
  // Token 0, block 0: amax 127, so inv = 1 and q = nearbyint(x).
  const float halves[8] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 126.5f, -127.0f};
  for (int i = 0; i < 8; ++i) x[i] = halves[i];
  x[8] = 127.0f;
  x[9] = 3.49f;
  x[10] = -100.51f;
  // Token 0, block 1: all zero. Block 2: amax 2.54.
  for (int i = 0; i < 32; ++i) x[64 + i] = 2.54f * static_cast<float>(i - 16) / 16.0f;
  // Token 1, block 0: a NaN; block 1: an infinity; block 2: tiny values
  // (127 / amax overflows to infinity: nonzero values clamp to ±127, zeros stay 0).
  x[96 + 3] = std::numeric_limits<float>::quiet_NaN();
  x[96 + 32 + 7] = -std::numeric_limits<float>::infinity();
  x[96 + 64] = 1e-38f;
  x[96 + 65] = -2e-39f;
  quantize_activations(x.data(), 0, 1, q);
  quantize_activations(x.data(), 1, 2, q);  // tokens may be quantized in any split

  const ActivationPair* t0 = q.token(0);
  const int8_t expected[11] = {0, 2, 2, 0, -2, -2, 126, -127, 127, 3, -101};
  for (int i = 0; i < 11; ++i) EXPECT_EQ(t0[0].q[i], expected[i]) << "value " << i;
  for (int i = 11; i < 32; ++i) EXPECT_EQ(t0[0].q[i], 0) << "value " << i;
  expect_scale(t0[0], 0, 1.0f);
  EXPECT_EQ(asum(t0[0], 0, 0, k), 0 + 2 + 2 + 0);
  EXPECT_EQ(asum(t0[0], 0, 1, k), -2 - 2 + 126 - 127);
  EXPECT_EQ(asum(t0[0], 0, 2, k), 127 + 3 - 101);
  EXPECT_EQ(asum(t0[0], 0, 3, k), 0);
  // The zero block: q = 0, d_a = 0, sums 0.
  for (int i = 32; i < 64; ++i) EXPECT_EQ(t0[0].q[i], 0);
  expect_scale(t0[0], 1, 0.0f);
  for (int j = 0; j < 8; ++j) EXPECT_EQ(asum(t0[0], 1, j, k), 0);
  // Block 2: the contract's float math.
  const float amax = 2.54f * 16.0f / 16.0f, inv = 127.0f / amax;
  for (int i = 0; i < 32; ++i) {
    const float v = std::nearbyint(x[64 + i] * inv);
    EXPECT_EQ(t0[1].q[i], static_cast<int8_t>(std::fmax(-127.0f, std::fmin(127.0f, v)))) << i;
  }
  // The scale is amax / 127 rounded to f16 (2.54 / 127 = 0.02 is not an f16).
  const float stored = f16_bits_to_f32(f32_to_f16_bits(amax / 127.0f));
  EXPECT_NE(stored, amax / 127.0f);
  expect_scale(t0[1], 0, stored);
  for (int j = 0; j < 8; ++j) {
    EXPECT_EQ(asum(t0[1], 0, j, k), t0[1].q[4 * j] + t0[1].q[4 * j + 1] + t0[1].q[4 * j + 2] +
                                     t0[1].q[4 * j + 3]);
  }
  // The padding block of the odd count: zero.
  for (int i = 32; i < 64; ++i) EXPECT_EQ(t0[1].q[i], 0);
  expect_scale(t0[1], 1, 0.0f);
  for (int j = 0; j < 8; ++j) EXPECT_EQ(asum(t0[1], 1, j, k), 0);

  const ActivationPair* t1 = q.token(1);
  EXPECT_EQ(t1, t0 + 2);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(t1[0].q[i], 0) << i;  // NaN and infinity blocks
  expect_scale(t1[0], 0, std::numeric_limits<float>::quiet_NaN());
  expect_scale(t1[0], 1, std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(t1[1].q[0], 127);
  EXPECT_EQ(t1[1].q[1], -127);
  for (int i = 2; i < 32; ++i) EXPECT_EQ(t1[1].q[i], 0) << i;
  expect_scale(t1[1], 0, 0.0f);  // 1e-38 / 127 is below the smallest f16: 0
  EXPECT_EQ(asum(t1[1], 0, 0, k), 0);
}

TEST(ActivationQuantizerTest, RoundsHalfToEvenAndStoresScalesAndSums) {
  check_quantizer(Blocks::kQ8_0);
  check_quantizer(Blocks::kQ4_0);
}

TEST(ActivationQuantizerTest, ScratchIsAlignedForTheTile) {
  OwnedActivations owned(3, 160, Blocks::kQ8_0);
  QuantizedActivations& q = owned.q;
  EXPECT_EQ(q.pairs(), 3u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(q.token(0)) % 64, 0u);
  EXPECT_EQ(sizeof(ActivationPair), 192u);
}

// Random ggml blocks of `format` for `rows` rows of `in` values.
std::vector<std::byte> random_blocks(const GgmlBlockFormat& format, uint64_t rows, uint64_t in,
                                     uint32_t& state) {
  auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return state >> 8;
  };
  std::vector<std::byte> out(rows * in / 32 * format.bytes_per_block);
  for (uint64_t b = 0; b < rows * in / 32; ++b) {
    std::byte* block = out.data() + b * format.bytes_per_block;
    const uint16_t scale =
        static_cast<uint16_t>(0x1000 + next() % 0x1800) | (next() % 2 ? 0x8000 : 0);
    block[0] = static_cast<std::byte>(scale & 0xff);
    block[1] = static_cast<std::byte>(scale >> 8);
    for (uint64_t i = 2; i < format.bytes_per_block; ++i) block[i] = static_cast<std::byte>(next());
  }
  return out;
}

// The contract, written out: exact integer sums of 4, one f32 multiply for
// the scale, one fma per lane and block, the fixed reduction tree.
float contract_dot(const GgmlBlockFormat& format, const std::byte* row,
                   const QuantizedActivations& x, uint64_t t) {
  float acc[16] = {};
  int8_t w[32];
  for (uint64_t b = 0; b < x.in() / 32; ++b) {
    const std::byte* block = row + b * format.bytes_per_block;
    ggml_block_integers(format, block, w);
    const ActivationPair& pair = x.token(t)[b / 2];
    const int half = static_cast<int>(b % 2);
    const float s = ggml_block_scale(block) * pair.scale[8 * half];
    for (int j = 0; j < 8; ++j) {
      int32_t p = 0;
      for (int k = 0; k < 4; ++k) p += w[4 * j + k] * pair.q[32 * half + 4 * j + k];
      acc[8 * half + j] = std::fma(static_cast<float>(p), s, acc[8 * half + j]);
    }
  }
  float s8[8], s4[4];
  for (int l = 0; l < 8; ++l) s8[l] = acc[l] + acc[l + 8];
  for (int l = 0; l < 4; ++l) s4[l] = s8[l] + s8[l + 4];
  return (s4[0] + s4[2]) + (s4[1] + s4[3]);
}

// Every instruction set, every tile shape, against the written-out contract,
// bit for bit: odd and even block counts, rows and tokens around the 4 x 4
// tile, row ranges that start mid-matrix.
TEST(BlockProductTest, EveryInstructionSetComputesTheContract) {
  uint32_t state = 12345;
  for (const GgmlBlockFormat* format : {&kGgmlQ8_0, &kGgmlQ4_0}) {
    const Blocks blocks = format == &kGgmlQ8_0 ? Blocks::kQ8_0 : Blocks::kQ4_0;
    for (uint64_t in : {32, 64, 96, 160, 256, 1376}) {
      const uint64_t out = 11, tokens = 6;
      const auto w = random_blocks(*format, out, in, state);
      std::vector<float> x(tokens * in);
      for (float& v : x) {
        state = state * 1664525u + 1013904223u;
        v = static_cast<float>(static_cast<int32_t>(state)) / 2e9f;
      }
      OwnedActivations owned(tokens, in, blocks);
      QuantizedActivations& q = owned.q;
      std::vector<std::byte> unpack_bytes(q.pairs() * kUnpackBytesPerPair + 64);
      std::byte* unpack = unpack_bytes.data() + (64 - reinterpret_cast<uintptr_t>(unpack_bytes.data()) % 64) % 64;
      quantize_activations(x.data(), 0, tokens, q);
      const uint64_t row_bytes = in / 32 * format->bytes_per_block;
      for (Isa isa : {Isa::kPortable, Isa::kAvx2, Isa::kAvx512}) {
        if (!isa_supported(isa)) continue;
        for (uint64_t n = 1; n <= tokens; ++n) {
          std::vector<float> y(n * out, -1.0f);
          matmul_block_rows(isa, blocks, w.data(), q, y.data(), out, n, 1, out, unpack);
          for (uint64_t t = 0; t < n; ++t) {
            EXPECT_EQ(y[t * out], -1.0f);  // row 0 is outside the range
            for (uint64_t o = 1; o < out; ++o) {
              const float expected = contract_dot(*format, w.data() + o * row_bytes, q, t);
              EXPECT_EQ(std::memcmp(&y[t * out + o], &expected, 4), 0)
                  << format->name << " " << isa_name(isa) << " in " << in << " tokens " << n
                  << " row " << o << " token " << t << ": " << y[t * out + o] << " vs " << expected;
            }
          }
        }
      }
    }
  }
}

}  // namespace f32_kernels_test
}  // namespace ferrite::fast
