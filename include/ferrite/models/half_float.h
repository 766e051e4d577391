// ferrite/models/half_float.h — exact F16 / BF16 to F32 conversion.
//
// Contract: both conversions are exact bit manipulations (every F16 and BF16
// value is representable in F32). Signed zeros, subnormals (F16 subnormals
// become normal F32 values), infinities and NaNs (payload and quiet bit kept,
// shifted into place) are handled. The bulk forms read little-endian 2-byte
// values from unaligned bytes and require `out.size() * 2 == in.size()`; they
// return false (writing nothing) otherwise.
//
// Example:
//   float one = f16_bits_to_f32(0x3C00);          // 1.0f
//   float big = bf16_bits_to_f32(0x4780);         // 65536.0f
//   std::vector<float> row(n);
//   convert_f16_to_f32(tensor_bytes, row);        // tensor_bytes.size() == 2n
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>

namespace ferrite {

constexpr float f16_bits_to_f32(uint16_t half) {
  const uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
  const uint32_t exponent = (half >> 10) & 0x1Fu;
  uint32_t mantissa = half & 0x3FFu;
  uint32_t bits = 0;
  if (exponent == 0x1Fu) {
    bits = sign | 0x7F800000u | (mantissa << 13);  // inf / NaN (payload kept)
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);  // 127 - 15 = 112
  } else if (mantissa == 0) {
    bits = sign;  // signed zero
  } else {
    // Subnormal: value = mantissa * 2^-24. Shift the leading one up to the
    // implicit-bit position (bit 10); each shift lowers the exponent by one.
    uint32_t shifts = 0;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      ++shifts;
    }
    mantissa &= 0x3FFu;
    bits = sign | ((113u - shifts) << 23) | (mantissa << 13);
  }
  return std::bit_cast<float>(bits);
}

constexpr float bf16_bits_to_f32(uint16_t bf16) {
  return std::bit_cast<float>(static_cast<uint32_t>(bf16) << 16);
}

namespace half_float_detail {
template <float (*Convert)(uint16_t)>
bool convert(std::span<const std::byte> in, std::span<float> out) {
  if (in.size() / 2 != out.size() || in.size() % 2 != 0) return false;
  for (size_t i = 0; i < out.size(); ++i) {
    const auto lo = static_cast<uint16_t>(in[2 * i]);
    const auto hi = static_cast<uint16_t>(in[2 * i + 1]);
    out[i] = Convert(static_cast<uint16_t>(lo | (hi << 8)));
  }
  return true;
}
}  // namespace half_float_detail

// Little-endian F16 bytes → F32. False (nothing written) on a size mismatch.
inline bool convert_f16_to_f32(std::span<const std::byte> in, std::span<float> out) {
  return half_float_detail::convert<f16_bits_to_f32>(in, out);
}
// Little-endian BF16 bytes → F32. False (nothing written) on a size mismatch.
inline bool convert_bf16_to_f32(std::span<const std::byte> in, std::span<float> out) {
  return half_float_detail::convert<bf16_bits_to_f32>(in, out);
}

}  // namespace ferrite
