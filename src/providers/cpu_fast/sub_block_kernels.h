// sub_block_kernels.h — cpu.fast's products on the ggml formats with
// sub-block scales or mins: Q4_1, Q5_0, Q5_1 (blocks of 32) and Q4_K, Q5_K,
// Q6_K (super-blocks of 256 = 8 sub-blocks of 32). The numerics contract is
// stated in f32_kernels.h ("Sub-block formats"); the portable code here is
// its definition, the AVX2 code computes the same bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "f32_kernels.h"
#include "ferrite/models/ggml_blocks.h"

namespace ferrite::fast {

enum class SubBlocks : uint8_t { kQ4_1, kQ5_0, kQ5_1, kQ4_K, kQ5_K, kQ6_K };

// The sub-block kind of a ggml format; nullopt for Q8_0 / Q4_0 (the pair
// contract of f32_kernels.h) and unknown formats.
std::optional<SubBlocks> sub_blocks_of(const GgmlBlockFormat& format);
const GgmlBlockFormat& sub_block_format(SubBlocks kind);

// Quantized activations of up to `capacity` tokens of width `in` (a
// multiple of 32) in caller-owned memory (token_bytes(in) per token, 64-byte
// aligned): per token the int8 q[in], then the f32 d_a of each 32 values,
// then the int16 sum of q over each 16 values.
class SubBlockActivations {
 public:
  SubBlockActivations(std::byte* data, uint64_t in) : in_(in), stride_(token_bytes(in)), data_(data) {}
  // q, d_a, the 16-sums, then `transposed` (in bytes). Fits in the
  // activation part of the linear scratch (3 bytes per value, f32_kernels.h's
  // ActivationPair), so plans do not change.
  static uint64_t token_bytes(uint64_t in) { return (2 * in + in / 8 + in / 8 + 63) / 64 * 64; }
  uint64_t in() const { return in_; }
  int8_t* q(uint64_t t) const { return reinterpret_cast<int8_t*>(data_ + t * stride_); }
  float* scale(uint64_t t) const {
    return reinterpret_cast<float*>(data_ + t * stride_ + in_);
  }
  int16_t* sums(uint64_t t) const {
    return reinterpret_cast<int16_t*>(data_ + t * stride_ + in_ + in_ / 8);
  }
  // q of every whole group of 256 values with its 4-byte words transposed
  // (the AVX-512 VNNI kernel's operand: one 32-bit lane per sub-block): for
  // group g, word k (0-7) of sub-block j (0-7), i.e. q[256g + 32j + 4k ..
  // + 3], sits at byte 256g + 32k + 4j. Values past the last whole group
  // are not copied.
  int8_t* transposed(uint64_t t) const {
    return reinterpret_cast<int8_t*>(data_ + t * stride_ + in_ + in_ / 4);
  }

 private:
  uint64_t in_, stride_;
  std::byte* data_;
};

// Step 1 for token rows [token_begin, token_end) of x.
void quantize_sub_block_activations(const float* x, uint64_t token_begin, uint64_t token_end,
                                    const SubBlockActivations& out);

// y[t * out + o] for t < tokens, o in [row_begin, row_end); `w` holds `out`
// rows of in / values_per_block blocks.
void matmul_sub_block_rows(Isa isa, SubBlocks kind, const std::byte* w,
                           const SubBlockActivations& x, float* y, uint64_t out, uint64_t tokens,
                           uint64_t row_begin, uint64_t row_end);
void matmul_sub_block_rows_portable(SubBlocks kind, const std::byte* w,
                                    const SubBlockActivations& x, float* y, uint64_t out,
                                    uint64_t tokens, uint64_t row_begin, uint64_t row_end);
void matmul_sub_block_rows_avx2(SubBlocks kind, const std::byte* w, const SubBlockActivations& x,
                                float* y, uint64_t out, uint64_t tokens, uint64_t row_begin,
                                uint64_t row_end);
// AVX-512 VNNI (+BW, VL); callers check block_vnni_supported() first.
void matmul_sub_block_rows_vnni(SubBlocks kind, const std::byte* w, const SubBlockActivations& x,
                                float* y, uint64_t out, uint64_t tokens, uint64_t row_begin,
                                uint64_t row_end);

// Steps 2-3 for the sub-blocks [first, first + count) of the row starting
// at `row` (lane a mod 8 of acc for sub-block a), token t: the portable
// definition, also used by the AVX2 code for the tail of a row.
void accumulate_sub_blocks(SubBlocks kind, const std::byte* row, uint64_t first, uint64_t count,
                           const SubBlockActivations& x, uint64_t t, float* acc);

// Step 4: the 8 -> 4 -> 2 -> 1 tree.
inline float reduce_sub_block_lanes(const float* acc) {
  float s4[4], s2[2];
  for (int l = 0; l < 4; ++l) s4[l] = acc[l] + acc[l + 4];
  for (int l = 0; l < 2; ++l) s2[l] = s4[l] + s4[l + 2];
  return s2[0] + s2[1];
}

}  // namespace ferrite::fast
