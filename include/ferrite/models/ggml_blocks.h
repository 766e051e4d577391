// ferrite/models/ggml_blocks.h — ggml's block-quantized weight formats.
//
// Contract: a block holds `values_per_block` consecutive values of one row
// (32, or 256 for the K formats) in `bytes_per_block` bytes, little-endian,
// f16 scales converted exactly to f32. Per format (u: the stored unsigned
// integer of a value, d/m/dmin: f16):
//   Q8_0 (34 B): d, int8 q[32]; value i = d * q[i].
//   Q4_0 (18 B): d, 16 bytes: low nibbles values 0-15, high nibbles 16-31;
//        value = d * (u - 8).
//   Q4_1 (20 B): d, m, nibbles as Q4_0; value = d * u + m.
//   Q5_0 (22 B): d, uint32 qh, nibbles as Q4_0; bit i of qh is bit 4 of
//        value i's u; value = d * (u - 16).
//   Q5_1 (24 B): d, m, qh, nibbles as Q5_0; value = d * u + m.
//   Q4_K (144 B, 256 values = 8 sub-blocks of 32): d, dmin, 12 bytes of
//        6-bit scales sc[j] and mins mn[j] (ggml_k_scale_min), 128 bytes qs:
//        sub-block 2c takes the low nibbles of qs[32c..32c+31], 2c+1 the high
//        ones; value = (d * sc[j]) * u - dmin * mn[j].
//   Q5_K (176 B): d, dmin, scales[12], qh[32], qs[128]: as Q4_K, plus bit 4
//        of value l of sub-block j from bit j of qh[l]; value as Q4_K.
//   Q6_K (210 B): ql[128], qh[64], int8 scales[16], d; in each half h of
//        128 values, value v (0..127) takes its low 4 bits from ql[64h +
//        v mod 64] (low nibble for v < 64, high nibble above) and its top 2
//        bits from qh[32h + v mod 32] bits 2 * (v / 32); value =
//        (d * scales[(128h + v) / 16]) * (u - 32).
// Exactness of dequantize_ggml_block in f32 (the formula llama.cpp's
// dequantize_row_* evaluates): Q8_0, Q4_0, Q5_0 and Q6_K are exact (an
// 11-bit f16 mantissa times integers of at most 8 + 6 bits: at most 24
// bits). Q4_1 / Q5_1 / Q4_K / Q5_K: the products d * u, d * sc (and dmin *
// mn) are exact (at most 11 + 6 + 5 = 22 bits), so the only rounding is the
// one f32 addition of the min: exact unless the two terms' exponents differ
// by more than the bits left; the result is that sum rounded once (fused or
// not, the same value). In a weight schema such a matrix [rows, cols] is one
// `packed_values` component of block grid [rows, cols / values_per_block]
// with a block_quantized encoding of `format_id`, bound by a
// BlockQuantizedLayout along axis 1; the bytes are GGUF's, copied unchanged
// (exact: the identity materializer).
//
// Example:
//   const GgmlBlockFormat* f = ggml_block_format(kGgmlQ4_KFormatId);
//   std::vector<float> row(f->values_per_block);
//   dequantize_ggml_block(*f, block_bytes, row.data());
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
inline constexpr std::string_view kGgmlQ4_1FormatId = "quantization.ggml_q4_1";
inline constexpr std::string_view kGgmlQ5_0FormatId = "quantization.ggml_q5_0";
inline constexpr std::string_view kGgmlQ5_1FormatId = "quantization.ggml_q5_1";
inline constexpr std::string_view kGgmlQ4_KFormatId = "quantization.ggml_q4_k";
inline constexpr std::string_view kGgmlQ5_KFormatId = "quantization.ggml_q5_k";
inline constexpr std::string_view kGgmlQ6_KFormatId = "quantization.ggml_q6_k";
// The weight-schema format of a Llama family with block-quantized matrices.
inline constexpr std::string_view kGgmlBlocksWeightFormatId = "weight-format.ggml_blocks";

struct GgmlBlockFormat {
  std::string_view name;       // "Q8_0"
  std::string_view format_id;  // kGgmlQ8_0FormatId
  uint32_t ggml_type;          // GGUF tensor type id
  uint64_t values_per_block;   // 32 (256 for the K formats)
  uint64_t bytes_per_block;    // 34
};

inline constexpr GgmlBlockFormat kGgmlQ8_0{"Q8_0", kGgmlQ8_0FormatId, 8, 32, 34};
inline constexpr GgmlBlockFormat kGgmlQ4_0{"Q4_0", kGgmlQ4_0FormatId, 2, 32, 18};
inline constexpr GgmlBlockFormat kGgmlQ4_1{"Q4_1", kGgmlQ4_1FormatId, 3, 32, 20};
inline constexpr GgmlBlockFormat kGgmlQ5_0{"Q5_0", kGgmlQ5_0FormatId, 6, 32, 22};
inline constexpr GgmlBlockFormat kGgmlQ5_1{"Q5_1", kGgmlQ5_1FormatId, 7, 32, 24};
inline constexpr GgmlBlockFormat kGgmlQ4_K{"Q4_K", kGgmlQ4_KFormatId, 12, 256, 144};
inline constexpr GgmlBlockFormat kGgmlQ5_K{"Q5_K", kGgmlQ5_KFormatId, 13, 256, 176};
inline constexpr GgmlBlockFormat kGgmlQ6_K{"Q6_K", kGgmlQ6_KFormatId, 14, 256, 210};

// Every format Ferrite reads, in GGUF type order.
inline constexpr const GgmlBlockFormat* kGgmlBlockFormats[] = {
    &kGgmlQ4_0, &kGgmlQ4_1, &kGgmlQ5_0, &kGgmlQ5_1, &kGgmlQ8_0, &kGgmlQ4_K, &kGgmlQ5_K, &kGgmlQ6_K};

// By quantization format id or GGUF type id; nullptr when unknown.
inline const GgmlBlockFormat* ggml_block_format(std::string_view format_id) {
  for (const GgmlBlockFormat* f : kGgmlBlockFormats) {
    if (f->format_id == format_id) return f;
  }
  return nullptr;
}
inline const GgmlBlockFormat* ggml_block_format_of_type(uint32_t ggml_type) {
  for (const GgmlBlockFormat* f : kGgmlBlockFormats) {
    if (f->ggml_type == ggml_type) return f;
  }
  return nullptr;
}

// The 6-bit scale and min of sub-block j (0..7) of a Q4_K / Q5_K block, from
// its 12 scale bytes: j < 4: sc = s[j] & 63, mn = s[j + 4] & 63; else sc =
// (s[j + 4] & 15) | (s[j - 4] >> 6) << 4, mn = (s[j + 4] >> 4) | (s[j] >> 6) << 4.
inline void ggml_k_scale_min(const std::byte* scales, int j, uint8_t* sc, uint8_t* mn) {
  const auto s = [&](int i) { return static_cast<uint8_t>(scales[i]); };
  if (j < 4) {
    *sc = s(j) & 63;
    *mn = s(j + 4) & 63;
  } else {
    *sc = static_cast<uint8_t>((s(j + 4) & 15) | ((s(j - 4) >> 6) << 4));
    *mn = static_cast<uint8_t>((s(j + 4) >> 4) | ((s(j) >> 6) << 4));
  }
}

// The unsigned integers u of sub-block `sub` (32 values, 0..values/32 - 1)
// of one block, in value order: Q4_0/Q4_1/Q4_K 0..15, Q5_* 0..31, Q6_K
// 0..63, Q8_0 the int8 bytes xor 0x80 (q + 128).
void ggml_block_unsigned(const GgmlBlockFormat& format, const std::byte* block, uint64_t sub,
                         uint8_t* u);

inline uint16_t ggml_block_scale_bits(const std::byte* block) {
  return static_cast<uint16_t>(static_cast<uint16_t>(block[0]) |
                               (static_cast<uint16_t>(block[1]) << 8));
}

inline float ggml_block_scale(const std::byte* block) {
  return f16_bits_to_f32(ggml_block_scale_bits(block));
}

// The 32 integer values of one Q8_0 / Q4_0 block (Q8_0: the int8; Q4_0:
// nibble - 8).
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

// The same values as floats (exact). Q8_0 / Q4_0 only.
inline void ggml_block_integers(const GgmlBlockFormat& format, const std::byte* block, float* q) {
  int8_t values[32];
  ggml_block_integers(format, block, values);
  for (int i = 0; i < 32; ++i) q[i] = static_cast<float>(values[i]);
}

// The values_per_block values of one block of another format (below).
void dequantize_ggml_block_other(const GgmlBlockFormat& format, const std::byte* block,
                                 float* out);

// The values_per_block values of one block, as the contract states (exact
// for Q8_0 / Q4_0: scale times integer).
inline void dequantize_ggml_block(const GgmlBlockFormat& format, const std::byte* block,
                                  float* out) {
  if (format.ggml_type != kGgmlQ8_0.ggml_type && format.ggml_type != kGgmlQ4_0.ggml_type) {
    return dequantize_ggml_block_other(format, block, out);
  }
  const float d = ggml_block_scale(block);
  ggml_block_integers(format, block, out);
  for (int i = 0; i < 32; ++i) out[i] *= d;
}

// Encodes f32 values (a multiple of values_per_block, all finite; else
// InvalidArgument) as ggml does: Q8_0 d = max|x| / 127, q = round(x / d) (half
// away from zero); Q4_0 d = x_m / -8 for the x_m of largest magnitude, q =
// min(15, trunc(x / d + 8.5)). The scale is stored as f16 (f32_to_f16_bits),
// the integers computed with the f32 d, so a block's error is measured, not
// bounded by construction. The other formats (for tests and the synthetic
// models; simpler than ggml's search for the best scales): Q5_0 as Q4_0 with
// -16 and 31; Q4_1 / Q5_1 d = (max - min) / (2^bits - 1), m = min; Q4_K /
// Q5_K per sub-block min(0, min) and range / (2^bits - 1), the 6-bit
// sc / mn rounded against d = max scale / 63 and dmin = max -min / 63;
// Q6_K per 16 values extreme / -32, int8 scales against d = max |scale| /
// 127; the integers are rounded against the stored (f16) scales and
// clamped. InvalidArgument also when a scale overflows f16.
Result<std::vector<std::byte>> quantize_ggml_blocks(const GgmlBlockFormat& format,
                                                    std::span<const float> values);

// IEEE binary16 bits of `value`, rounded to nearest even (NaN stays NaN,
// overflow becomes infinity).
uint16_t f32_to_f16_bits(float value);

}  // namespace ferrite
