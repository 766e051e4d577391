#include "ferrite/models/half_float.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

namespace ferrite {
namespace half_float_test {

uint32_t bits(float value) { return std::bit_cast<uint32_t>(value); }

// An independent reference: the IEEE-754 binary16 value formula.
double f16_reference(uint16_t half) {
  const int sign = (half >> 15) & 1;
  const int exponent = (half >> 10) & 0x1F;
  const int mantissa = half & 0x3FF;
  double magnitude = 0;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<double>(mantissa), -24);
  } else if (exponent == 31) {
    magnitude = mantissa == 0 ? std::numeric_limits<double>::infinity()
                              : std::numeric_limits<double>::quiet_NaN();
  } else {
    magnitude = std::ldexp(static_cast<double>(1024 + mantissa), exponent - 25);
  }
  return sign ? -magnitude : magnitude;
}

TEST(HalfFloatTest, F16KnownBitPatterns) {
  EXPECT_EQ(bits(f16_bits_to_f32(0x3C00)), bits(1.0f));
  EXPECT_EQ(bits(f16_bits_to_f32(0xC000)), bits(-2.0f));
  EXPECT_EQ(bits(f16_bits_to_f32(0x3555)), 0x3EAAA000u);       // 0.333251953125
  EXPECT_EQ(bits(f16_bits_to_f32(0x7BFF)), bits(65504.0f));    // largest finite
  EXPECT_EQ(bits(f16_bits_to_f32(0x0400)), bits(std::ldexp(1.0f, -14)));  // smallest normal
  EXPECT_EQ(bits(f16_bits_to_f32(0x0001)), bits(std::ldexp(1.0f, -24)));  // smallest subnormal
  EXPECT_EQ(bits(f16_bits_to_f32(0x03FF)), bits(std::ldexp(1023.0f, -24)));  // largest subnormal
  EXPECT_EQ(bits(f16_bits_to_f32(0x8001)), bits(-std::ldexp(1.0f, -24)));
  EXPECT_EQ(bits(f16_bits_to_f32(0x0000)), 0x00000000u);
  EXPECT_EQ(bits(f16_bits_to_f32(0x8000)), 0x80000000u);  // -0 keeps its sign
  EXPECT_EQ(bits(f16_bits_to_f32(0x7C00)), 0x7F800000u);  // +inf
  EXPECT_EQ(bits(f16_bits_to_f32(0xFC00)), 0xFF800000u);  // -inf
  EXPECT_EQ(bits(f16_bits_to_f32(0x7E00)), 0x7FC00000u);  // quiet NaN
  EXPECT_EQ(bits(f16_bits_to_f32(0x7C01)), 0x7F802000u);  // signalling NaN, payload kept
  EXPECT_EQ(bits(f16_bits_to_f32(0xFFFF)), 0xFFFFE000u);
  static_assert(f16_bits_to_f32(0x3C00) == 1.0f);  // usable in constant expressions
}

TEST(HalfFloatTest, F16AllValuesMatchReferenceFormula) {
  for (uint32_t i = 0; i <= 0xFFFF; ++i) {
    const auto half = static_cast<uint16_t>(i);
    const float converted = f16_bits_to_f32(half);
    const double expected = f16_reference(half);
    if (std::isnan(expected)) {
      ASSERT_TRUE(std::isnan(converted)) << std::hex << i;
      ASSERT_EQ(bits(converted) & 0x1FFFu, 0u) << std::hex << i;
      ASSERT_EQ((bits(converted) >> 13) & 0x3FFu, i & 0x3FFu) << std::hex << i;
    } else {
      ASSERT_EQ(static_cast<double>(converted), expected) << std::hex << i;
      ASSERT_EQ(std::signbit(converted), (i & 0x8000u) != 0) << std::hex << i;
    }
  }
}

TEST(HalfFloatTest, Bf16KnownBitPatterns) {
  EXPECT_EQ(bits(bf16_bits_to_f32(0x3F80)), bits(1.0f));
  EXPECT_EQ(bits(bf16_bits_to_f32(0xC040)), bits(-3.0f));
  EXPECT_EQ(bits(bf16_bits_to_f32(0x4780)), bits(65536.0f));
  EXPECT_EQ(bits(bf16_bits_to_f32(0x0001)), 0x00010000u);  // subnormal 2^-133
  EXPECT_EQ(static_cast<double>(bf16_bits_to_f32(0x0001)), std::ldexp(1.0, -133));
  EXPECT_EQ(bits(bf16_bits_to_f32(0x8000)), 0x80000000u);
  EXPECT_EQ(bits(bf16_bits_to_f32(0x7F80)), 0x7F800000u);
  EXPECT_EQ(bits(bf16_bits_to_f32(0xFF80)), 0xFF800000u);
  EXPECT_EQ(bits(bf16_bits_to_f32(0x7FC1)), 0x7FC10000u);
  EXPECT_EQ(bits(bf16_bits_to_f32(0x7F7F)), bits(std::numeric_limits<float>::max()) & 0xFFFF0000u);
}

TEST(HalfFloatTest, BulkConversionReadsLittleEndianUnaligned) {
  // One leading byte makes the 2-byte values unaligned.
  const std::vector<std::byte> raw = {std::byte{0xAA}, std::byte{0x00}, std::byte{0x3C},
                                      std::byte{0x00}, std::byte{0xC0}, std::byte{0x01},
                                      std::byte{0x00}};
  std::vector<float> out(3);
  ASSERT_TRUE(convert_f16_to_f32(std::span(raw).subspan(1), out));
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], -2.0f);
  EXPECT_EQ(out[2], std::ldexp(1.0f, -24));

  const std::vector<std::byte> bf = {std::byte{0x80}, std::byte{0x3F}, std::byte{0x40},
                                     std::byte{0xC0}};
  std::vector<float> out2(2);
  ASSERT_TRUE(convert_bf16_to_f32(bf, out2));
  EXPECT_EQ(out2[0], 1.0f);
  EXPECT_EQ(out2[1], -3.0f);
}

TEST(HalfFloatTest, BulkConversionRejectsSizeMismatch) {
  const std::vector<std::byte> raw(5);
  std::vector<float> out(2, 7.0f);
  EXPECT_FALSE(convert_f16_to_f32(raw, out));
  EXPECT_FALSE(convert_bf16_to_f32(std::span(raw).first(4), std::span(out).first(1)));
  EXPECT_EQ(out[0], 7.0f);  // nothing written
}

}  // namespace half_float_test
}  // namespace ferrite
