// ferrite/models/ggml_blocks.h — ggml's block-quantized weight formats.
//
// Contract: a Q8_0 block is 34 bytes holding 32 consecutive values of one
// row: a little-endian f16 scale d, then 32 int8 q; value i = d * q[i]. A
// Q4_0 block is 18 bytes: the f16 scale d, then 16 bytes whose low nibbles
// are values 0-15 and high nibbles values 16-31, each q in 0..15 meaning
// d * (q - 8). Both products are exact in f32 (an 11-bit mantissa times at
// most 8 bits). In a weight schema such a matrix [rows, cols] is one
// `packed_values` component of block grid [rows, cols / 32] with a
// block_quantized encoding of `format_id`, bound by a BlockQuantizedLayout
// along axis 1; the bytes are GGUF's, copied unchanged (exact: the identity
// materializer).
//
// Example:
//   const GgmlBlockFormat* f = ggml_block_format(kGgmlQ8_0FormatId);
//   float row[32];
//   dequantize_ggml_block(*f, block_bytes, row);
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "ferrite/core/status.h"
#include "ferrite/models/half_float.h"

namespace ferrite {

inline constexpr std::string_view kGgmlQ8_0FormatId = "quantization.ggml_q8_0";
inline constexpr std::string_view kGgmlQ4_0FormatId = "quantization.ggml_q4_0";
// The weight-schema format of a Llama family with block-quantized matrices.
inline constexpr std::string_view kGgmlBlocksWeightFormatId = "weight-format.ggml_blocks";

struct GgmlBlockFormat {
  std::string_view name;       // "Q8_0"
  std::string_view format_id;  // kGgmlQ8_0FormatId
  uint32_t ggml_type;          // GGUF tensor type id
  uint64_t values_per_block;   // 32
  uint64_t bytes_per_block;    // 34
};

inline constexpr GgmlBlockFormat kGgmlQ8_0{"Q8_0", kGgmlQ8_0FormatId, 8, 32, 34};
inline constexpr GgmlBlockFormat kGgmlQ4_0{"Q4_0", kGgmlQ4_0FormatId, 2, 32, 18};

// By quantization format id or GGUF type id; nullptr when unknown.
inline const GgmlBlockFormat* ggml_block_format(std::string_view format_id) {
  if (format_id == kGgmlQ8_0.format_id) return &kGgmlQ8_0;
  if (format_id == kGgmlQ4_0.format_id) return &kGgmlQ4_0;
  return nullptr;
}
inline const GgmlBlockFormat* ggml_block_format_of_type(uint32_t ggml_type) {
  if (ggml_type == kGgmlQ8_0.ggml_type) return &kGgmlQ8_0;
  if (ggml_type == kGgmlQ4_0.ggml_type) return &kGgmlQ4_0;
  return nullptr;
}

inline uint16_t ggml_block_scale_bits(const std::byte* block) {
  return static_cast<uint16_t>(static_cast<uint16_t>(block[0]) |
                               (static_cast<uint16_t>(block[1]) << 8));
}

inline float ggml_block_scale(const std::byte* block) {
  return f16_bits_to_f32(ggml_block_scale_bits(block));
}

// The 32 integer values of one block (Q8_0: the int8; Q4_0: nibble - 8).
inline void ggml_block_integers(const GgmlBlockFormat& format, const std::byte* block, int8_t* q) {
  if (format.ggml_type == kGgmlQ8_0.ggml_type) {
    for (int i = 0; i < 32; ++i) q[i] = static_cast<int8_t>(block[2 + i]);
  } else {
    for (int i = 0; i < 16; ++i) {
      const auto byte = static_cast<uint8_t>(block[2 + i]);
      q[i] = static_cast<int8_t>((byte & 0x0F) - 8);
      q[i + 16] = static_cast<int8_t>((byte >> 4) - 8);
    }
  }
}

// The same values as floats (exact).
inline void ggml_block_integers(const GgmlBlockFormat& format, const std::byte* block, float* q) {
  int8_t values[32];
  ggml_block_integers(format, block, values);
  for (int i = 0; i < 32; ++i) q[i] = static_cast<float>(values[i]);
}

// The 32 values of one block, exactly: scale times integer.
inline void dequantize_ggml_block(const GgmlBlockFormat& format, const std::byte* block,
                                  float* out) {
  const float d = ggml_block_scale(block);
  ggml_block_integers(format, block, out);
  for (int i = 0; i < 32; ++i) out[i] *= d;
}

// Encodes f32 values (a multiple of 32, all finite; else InvalidArgument) as
// ggml does: Q8_0 d = max|x| / 127, q = round(x / d) (half away from zero);
// Q4_0 d = x_m / -8 for the x_m of largest magnitude, q = min(15,
// trunc(x / d + 8.5)). The scale is stored as f16 (f32_to_f16_bits), the
// integers computed with the f32 d, so a block's error is measured, not
// bounded by construction.
Result<std::vector<std::byte>> quantize_ggml_blocks(const GgmlBlockFormat& format,
                                                    std::span<const float> values);

// IEEE binary16 bits of `value`, rounded to nearest even (NaN stays NaN,
// overflow becomes infinity).
uint16_t f32_to_f16_bits(float value);

}  // namespace ferrite
