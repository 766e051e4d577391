// The ggml block formats of models/ggml_blocks.h: hand-built blocks of every
// format read back value by value (each field exercised: scales and mins,
// the high bits of Q5, the 6-bit packed K scales, the Q6_K layout), with
// the expected values written from ggml's own loop structure
// (dequantize_row_*) rather than from the header's per-sub-block form; and
// the test quantizers' round trip error on random rows.
#include "ferrite/models/ggml_blocks.h"

#include <cmath>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

namespace ferrite {
namespace ggml_blocks_test {

struct Block {
  std::vector<std::byte> bytes;
  void f16(size_t at, float v) {
    const uint16_t bits = f32_to_f16_bits(v);
    bytes[at] = static_cast<std::byte>(bits & 0xff);
    bytes[at + 1] = static_cast<std::byte>(bits >> 8);
  }
  uint8_t at(size_t i) const { return static_cast<uint8_t>(bytes[i]); }
  void set(size_t i, uint32_t v) { bytes[i] = static_cast<std::byte>(v & 0xff); }
};

Block make(const GgmlBlockFormat& f, uint32_t seed) {
  Block b{std::vector<std::byte>(f.bytes_per_block)};
  uint32_t s = seed;
  for (auto& byte : b.bytes) {
    s = s * 1664525u + 1013904223u;
    byte = static_cast<std::byte>(s >> 24);
  }
  return b;
}

std::vector<float> dequantized(const GgmlBlockFormat& f, const Block& b) {
  std::vector<float> out(f.values_per_block);
  dequantize_ggml_block(f, b.bytes.data(), out.data());
  return out;
}

TEST(GgmlBlocksTest, FormatsAreFoundByIdAndType) {
  for (const GgmlBlockFormat* f : kGgmlBlockFormats) {
    EXPECT_EQ(ggml_block_format(f->format_id), f);
    EXPECT_EQ(ggml_block_format_of_type(f->ggml_type), f);
  }
  EXPECT_EQ(ggml_block_format_of_type(10), nullptr);  // Q2_K: not read
  EXPECT_EQ(ggml_block_format_of_type(16), nullptr);  // IQ2_XXS
  EXPECT_EQ(ggml_block_format("quantization.ggml_q3_k"), nullptr);
  EXPECT_EQ(kGgmlQ4_K.values_per_block, 256u);
  EXPECT_EQ(kGgmlQ6_K.bytes_per_block, 210u);
}

TEST(GgmlBlocksTest, Q4_1AndQ5_1AddTheirMin) {
  Block b = make(kGgmlQ4_1, 1);
  b.f16(0, 0.5f);
  b.f16(2, -1.25f);
  const auto v = dequantized(kGgmlQ4_1, b);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(v[j], 0.5f * (b.at(4 + j) & 15) - 1.25f) << j;
    EXPECT_EQ(v[j + 16], 0.5f * (b.at(4 + j) >> 4) - 1.25f) << j;
  }
  Block c = make(kGgmlQ5_1, 2);
  c.f16(0, 0.125f);
  c.f16(2, 3.0f);
  const uint32_t qh = c.at(4) | c.at(5) << 8 | c.at(6) << 16 | uint32_t{c.at(7)} << 24;
  ASSERT_NE(qh, 0u);
  const auto w = dequantized(kGgmlQ5_1, c);
  for (int j = 0; j < 16; ++j) {
    const int x0 = (c.at(8 + j) & 15) | (((qh >> j) << 4) & 0x10);
    const int x1 = (c.at(8 + j) >> 4) | ((qh >> (j + 12)) & 0x10);
    EXPECT_EQ(w[j], static_cast<float>(x0) * 0.125f + 3.0f) << j;
    EXPECT_EQ(w[j + 16], static_cast<float>(x1) * 0.125f + 3.0f) << j;
  }
}

TEST(GgmlBlocksTest, Q5_0TakesBitFourFromQh) {
  Block b = make(kGgmlQ5_0, 3);
  b.f16(0, -0.75f);
  b.set(2, 0x0f);
  b.set(3, 0xa5);
  b.set(4, 0x3c);
  b.set(5, 0x81);
  const uint32_t qh = 0x813ca50fu;
  const auto v = dequantized(kGgmlQ5_0, b);
  int high = 0;
  for (int j = 0; j < 16; ++j) {
    const int x0 = ((b.at(6 + j) & 15) | (((qh >> j) << 4) & 0x10)) - 16;
    const int x1 = ((b.at(6 + j) >> 4) | ((qh >> (j + 12)) & 0x10)) - 16;
    high += (x0 >= 0) + (x1 >= 0);
    EXPECT_EQ(v[j], static_cast<float>(x0) * -0.75f) << j;
    EXPECT_EQ(v[j + 16], static_cast<float>(x1) * -0.75f) << j;
  }
  EXPECT_GT(high, 0);
  EXPECT_LT(high, 32);
}

// Packs 6-bit scales and mins as the K formats store them.
void pack_k_scales(Block& b, const int* sc, const int* mn) {
  for (int j = 0; j < 4; ++j) {
    b.set(4 + j, (sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
    b.set(8 + j, (mn[j] & 63) | ((mn[j + 4] >> 4) << 6));
    b.set(12 + j, (sc[j + 4] & 15) | ((mn[j + 4] & 15) << 4));
  }
}

TEST(GgmlBlocksTest, Q4_KAndQ5_KUseEveryPackedScaleAndMin) {
  // Scales and mins above 15 for sub-blocks 4-7 exercise the split high bits.
  const int sc[8] = {1, 17, 33, 63, 20, 47, 63, 35};
  const int mn[8] = {63, 0, 5, 40, 61, 16, 33, 48};
  for (const GgmlBlockFormat* f : {&kGgmlQ4_K, &kGgmlQ5_K}) {
    SCOPED_TRACE(f->name);
    const bool q5 = f == &kGgmlQ5_K;
    Block b = make(*f, 4);
    b.f16(0, 0.0625f);
    b.f16(2, 0.03125f);
    pack_k_scales(b, sc, mn);
    for (int j = 0; j < 8; ++j) {
      uint8_t s, m;
      ggml_k_scale_min(b.bytes.data() + 4, j, &s, &m);
      EXPECT_EQ(s, sc[j]) << j;
      EXPECT_EQ(m, mn[j]) << j;
    }
    const auto v = dequantized(*f, b);
    // ggml's loop: 64 values per step, low nibbles then high nibbles.
    const size_t qs = q5 ? 48 : 16;
    int index = 0;
    for (int step = 0; step < 4; ++step) {
      for (int half = 0; half < 2; ++half) {
        const int j = 2 * step + half;
        const float d1 = 0.0625f * static_cast<float>(sc[j]),
                    m1 = 0.03125f * static_cast<float>(mn[j]);
        for (int l = 0; l < 32; ++l, ++index) {
          const uint8_t byte = b.at(qs + 32 * step + l);
          int u = half == 0 ? (byte & 15) : (byte >> 4);
          if (q5 && (b.at(16 + l) & (1 << j))) u += 16;
          EXPECT_EQ(v[index], d1 * static_cast<float>(u) - m1) << index;
        }
      }
    }
  }
}

TEST(GgmlBlocksTest, Q6_KFollowsGgmlsLayout) {
  Block b = make(kGgmlQ6_K, 5);
  b.f16(208, 0.01f);
  const float d = f16_bits_to_f32(f32_to_f16_bits(0.01f));
  b.set(192, 0x80);  // scale -128
  b.set(193, 127);
  const auto v = dequantized(kGgmlQ6_K, b);
  // ggml's loop: two halves of 128; l < 32 gives values l, l+32, l+64, l+96.
  for (int n = 0; n < 2; ++n) {
    const size_t ql = 64 * n, qh = 128 + 32 * n, sc = 192 + 8 * n;
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      const int q1 = ((b.at(ql + l) & 15) | ((b.at(qh + l) & 3) << 4)) - 32;
      const int q2 = ((b.at(ql + l + 32) & 15) | (((b.at(qh + l) >> 2) & 3) << 4)) - 32;
      const int q3 = ((b.at(ql + l) >> 4) | (((b.at(qh + l) >> 4) & 3) << 4)) - 32;
      const int q4 = ((b.at(ql + l + 32) >> 4) | (((b.at(qh + l) >> 6) & 3) << 4)) - 32;
      const auto s = [&](int k) { return static_cast<float>(static_cast<int8_t>(b.at(sc + is + k))); };
      EXPECT_EQ(v[128 * n + l], d * s(0) * static_cast<float>(q1)) << n << " " << l;
      EXPECT_EQ(v[128 * n + l + 32], d * s(2) * static_cast<float>(q2)) << n << " " << l;
      EXPECT_EQ(v[128 * n + l + 64], d * s(4) * static_cast<float>(q3)) << n << " " << l;
      EXPECT_EQ(v[128 * n + l + 96], d * s(6) * static_cast<float>(q4)) << n << " " << l;
    }
  }
  EXPECT_EQ(v[0], d * -128.0f * static_cast<float>(((b.at(0) & 15) | ((b.at(128) & 3) << 4)) - 32));
}

// Quantize -> dequantize: every block is valid (the values stay within the
// row's range plus one step) and the relative L2 error is within the format's
// expectation for uniform values (measured: see the bounds' comments).
TEST(GgmlBlocksTest, QuantizersRoundTripWithMeasuredError) {
  struct Expect {
    const GgmlBlockFormat* format;
    double max_relative_l2;
  };
  // Uniform values: a 4-bit grid gives about 0.07, 5 bits 0.035, 6 bits 0.02.
  for (const Expect e : {Expect{&kGgmlQ4_1, 0.1}, {&kGgmlQ5_0, 0.06}, {&kGgmlQ5_1, 0.05},
                         {&kGgmlQ4_K, 0.1}, {&kGgmlQ5_K, 0.05}, {&kGgmlQ6_K, 0.03},
                         {&kGgmlQ8_0, 0.01}, {&kGgmlQ4_0, 0.12}}) {
    for (float offset : {0.0f, 0.75f}) {
      SCOPED_TRACE(::testing::Message() << e.format->name << " offset " << offset);
      std::vector<float> values(1024);
      uint32_t s = 7;
      for (float& v : values) {
        s = s * 1664525u + 1013904223u;
        v = (static_cast<float>(s >> 8) / 16777216.0f * 2.0f - 1.0f) * 0.5f + offset;
      }
      auto bytes = quantize_ggml_blocks(*e.format, values);
      ASSERT_TRUE(bytes) << bytes.error().to_string();
      ASSERT_EQ(bytes->size(), values.size() / e.format->values_per_block * e.format->bytes_per_block);
      std::vector<float> back(values.size());
      for (size_t b = 0; b < values.size() / e.format->values_per_block; ++b) {
        dequantize_ggml_block(*e.format, bytes->data() + b * e.format->bytes_per_block,
                              back.data() + b * e.format->values_per_block);
      }
      double err = 0, norm = 0;
      for (size_t i = 0; i < values.size(); ++i) {
        ASSERT_TRUE(std::isfinite(back[i])) << i;
        err += (back[i] - values[i]) * static_cast<double>(back[i] - values[i]);
        norm += values[i] * static_cast<double>(values[i]);
      }
      const double relative = std::sqrt(err / norm);
      EXPECT_LE(relative, e.max_relative_l2);
      EXPECT_GT(relative, 0.0);  // these grids cannot hold random values exactly
    }
  }
}

TEST(GgmlBlocksTest, QuantizersRefuseBadInput) {
  std::vector<float> values(128, 1.0f);
  EXPECT_FALSE(quantize_ggml_blocks(kGgmlQ4_K, values));  // not whole 256-value blocks
  values.resize(256);
  values[3] = std::nanf("");
  EXPECT_FALSE(quantize_ggml_blocks(kGgmlQ6_K, values));
  values[3] = 1e10f;  // a scale above the f16 range
  EXPECT_FALSE(quantize_ggml_blocks(kGgmlQ5_K, values));
  std::vector<float> zeros(256, 0.0f);
  auto bytes = quantize_ggml_blocks(kGgmlQ4_K, zeros);
  ASSERT_TRUE(bytes);
  std::vector<float> back(256, 1.0f);
  dequantize_ggml_block(kGgmlQ4_K, bytes->data(), back.data());
  for (float v : back) EXPECT_EQ(v, 0.0f);
}

}  // namespace ggml_blocks_test
}  // namespace ferrite
