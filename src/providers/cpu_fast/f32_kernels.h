// f32_kernels.h — the vector kernels of `cpu.fast`, one definition of the
// arithmetic, three instruction sets.
//
// Contract: every dot product of n floats is defined as
//   1. 16 lanes; lane l accumulates a[i]*b[i] for i ≡ l (mod 16), in
//      increasing i, each step one fused multiply-add (rounded once), the
//      input zero-padded to a multiple of 16;
//   2. the lanes summed by the fixed tree 16→8 (l + l+8), 8→4 (l + l+4),
//      4→2 (l + l+2), 2→1.
// AVX-512, AVX2+FMA and the portable path (std::fma) implement exactly this,
// so they return the same bits, and so do 1 or N threads (threads split
// output rows, never a sum) and one prefill step or many decode steps (every
// row of a matrix product is the same dot product whatever the tile).
// Pointers need no alignment. `matmul_rows` writes y[t*out + o] =
// dot(x + t*in, w + o*in, in) for t < tokens and o in [row_begin, row_end).
//
// Block-quantized rows (ggml Q8_0 / Q4_0, models/ggml_blocks.h; `in` a
// multiple of 32): the weights are never expanded to f32 in memory, and the
// activations are quantized to int8 per block of 32, so a block's products
// are exact integer sums (AVX-512 VNNI `vpdpbusd`). For each token row x:
//   1. Activation quantization, per block b of 32 values (quantize_activations,
//      ONE portable function used by every instruction set): amax = max |x_i|
//      (exact); d_a = f16(amax / 127.0f), the f32 quotient rounded to the
//      nearest f16 (ties to even; overflow to infinity when amax / 127 >
//      65504, a subnormal or 0 when it is below 2^-14), as llama.cpp stores
//      its Q8_0 activation scales; if amax == 0 every q_i = 0, else
//      inv = 127.0f / amax (NOT 1 / d_a: llama.cpp's x86 code uses this too)
//      and q_i = nearbyint(x_i * inv) (f32 multiply, round
//      half to even) clamped to [-127, 127], where 0 * inv counts as 0 (inv is
//      infinite when amax < 127 / FLT_MAX). A block holding a NaN or an
//      infinity gets d_a = NaN and q = 0, so its outputs are NaN. Stored per
//      block: q, d_a, and the partial sums asum_j = sum_{k<4} q[4j+k]
//      (j = 0..7), as the correction -k * asum_j (k: unsigned_offset).
//   2. Integer part: p_j = sum_{k<4} w[4j+k] * q[4j+k] (exact int32; w the
//      weight's integers: Q8_0 the int8, Q4_0 nibble - 8), j = 0..7.
//   3. Float part: s_b = d_w[b] * d_a[b] (one f32 multiply; d_w the f16 scale,
//      converted exactly); lane L = (b mod 2) * 8 + j; acc[L] =
//      fma(float(p_j), s_b, acc[L]) for blocks in increasing b, acc from +0.
//   4. y = the 16 -> 8 -> 4 -> 2 -> 1 reduction tree above.
// One zmm holds two blocks (lanes 0-7 block b, 8-15 block b+1). The portable
// code is the definition; AVX-512 with VNNI+BW computes exactly this with
// `vpdpbusd` (unsigned bytes x signed bytes: the weights offset by k, the
// accumulator starting at the correction; an odd last block alone, its upper
// lanes zero, adding fma(0, 0, acc) = acc), whether it reads the blocks as
// stored (up to 4 tokens) or unpacks a block of rows once for many tokens
// (prefill). AVX2 and AVX-512 without VNNI run the portable code. So the bits
// agree as for f32: every instruction set, thread count, tile, prefill or
// token by token. The products differ from exact dequantized weights x f32
// activations (cpu.reference) by the activation rounding: at most
// sum_b (sum_{i in b} |w_i|) * (e_b / 2 + 127 |d_a[b] - e_b|) per output,
// e_b = amax_b / 127 unrounded (the rounding of x to q, then of the scale to
// f16), plus f32 rounding.
//
// Sub-block formats (ggml Q4_1, Q5_0, Q5_1: blocks of 32; Q4_K, Q5_K, Q6_K:
// super-blocks of 256 = 8 sub-blocks of 32; sub_block_kernels.h): weights
// read as stored; for each token row x:
//   1. Activations: per 32 values q and d_a exactly as step 1 above
//      (quantize_activation_block), plus the int16 sums s_lo, s_hi of q over
//      each half of 16 values.
//   2. Integer part, per sub-block a of 32 values of a weight row (u: its
//      unsigned integers, ggml_block_unsigned; dot_lo / dot_hi = sum u*q over
//      the halves), exact int32:
//        Q4_1, Q5_1: P = dot_lo + dot_hi,        N = s_lo + s_hi
//        Q5_0:       P = dot_lo + dot_hi - 16 (s_lo + s_hi)
//        Q4_K, Q5_K: P = sc_j (dot_lo + dot_hi), N = mn_j (s_lo + s_hi)
//        Q6_K:       P = sc_lo dot_lo + sc_hi dot_hi - 32 (sc_lo s_lo + sc_hi s_hi)
//      (sc/mn: the 6-bit K scale and min of sub-block j; Q6_K's int8 scales
//      of the two halves).
//   3. Float part: lane L = a mod 8; acc[L] = fma(float(P), D * d_a[a],
//      acc[L]); then, for the formats with a min, acc[L] = fma(float(N), M *
//      d_a[a], acc[L]), where D is the block's f16 d and M its f16 m (Q4_1,
//      Q5_1) or -dmin (Q4_K, Q5_K); each product D * d_a one f32 multiply;
//      float(P) rounds to nearest (|P| can pass 2^24 for the K formats);
//      sub-blocks in increasing a, acc from +0.
//   4. y = acc reduced by the tree 8 -> 4 (l + l+4) -> 2 (l + l+2) -> 1.
// The portable code (sub_block_kernels_portable.cc) is the definition; AVX2
// computes exactly this (maddubs of u x q: pairs at most 2 * 63 * 127, never
// saturating; madd by Q6_K's int16 half scales, else by 1; Q4_K / Q5_K's
// 6-bit scales multiply the exact int32 sub-block sums; the last group of fewer than 8
// blocks of a row by the portable code); AVX-512 with VNNI runs `vpdpbusd`
// on the same unsigned integers transposed so that each 32-bit lane holds
// one sub-block (its activations stored transposed too: SubBlockActivations::
// transposed), the same exact int32 and the same float code; AVX-512
// without VNNI runs the AVX2 code. So the bits agree for every instruction
// set, thread count and token count.
// Against exact dequantized weights x f32 activations the difference is the
// activation rounding bound above (sum_a (sum_{i in a} |w_i|) d_a[a] / 2)
// plus f32 rounding, which for the formats with a min scales with |d u| +
// |min| rather than |w| (the two parts are summed separately).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ferrite::fast {

enum class Isa : uint8_t { kPortable, kAvx2, kAvx512 };

std::string_view isa_name(Isa isa);  // "portable", "avx2", "avx512"
std::optional<Isa> parse_isa(std::string_view name);
// The widest instruction set this CPU runs.
Isa best_isa();
bool isa_supported(Isa isa);

float dot(Isa isa, const float* a, const float* b, uint64_t n);
void matmul_rows(Isa isa, const float* w, const float* x, float* y, uint64_t in, uint64_t out,
                 uint64_t tokens, uint64_t row_begin, uint64_t row_end);
// y[i] += s * x[i] for i < n (one fused multiply-add per element).
void axpy(Isa isa, float s, const float* x, float* y, uint64_t n);

enum class Blocks : uint8_t { kQ8_0, kQ4_0 };
inline constexpr uint64_t kBlockValues = 32;
inline uint64_t block_bytes(Blocks b) { return b == Blocks::kQ8_0 ? 34 : 18; }

// Two consecutive quantized activation blocks b, b+1 of one token (b even),
// laid out as the AVX-512 tile loads them: 192 bytes, 64-byte aligned.
struct alignas(64) ActivationPair {
  int8_t q[64];            // block b's 32 values, then block b+1's
  float scale[16];         // d_a[b] in lanes 0-7, d_a[b+1] in lanes 8-15
  int32_t correction[16];  // -k * asum_j of block b (j = 0..7), then of block b+1
};

// The weights' offset k that makes their integers unsigned for vpdpbusd:
// Q8_0 bytes xor 0x80 are w + 128, Q4_0 nibbles are w + 8.
inline int32_t unsigned_offset(Blocks b) { return b == Blocks::kQ8_0 ? 128 : 8; }

// The quantized activations of up to `capacity` tokens of width `in` (a
// multiple of 32), for a product with `blocks` weights, in memory the caller
// owns (the node's planned scratch; `bytes(capacity, in)` of it, 64-byte
// aligned): token t's blocks are pairs [t * pairs, (t + 1) * pairs); an odd
// block count ends in a zero block (q = 0, d_a = 0, correction 0).
// quantize_activations writes every byte a product then reads, so the
// memory needs no initial contents.
class QuantizedActivations {
 public:
  QuantizedActivations(ActivationPair* data, uint64_t in, Blocks blocks)
      : in_(in), blocks_(blocks), pairs_(pairs_for(in)), data_(data) {}
  static uint64_t pairs_for(uint64_t in) { return (in / kBlockValues + 1) / 2; }
  uint64_t in() const { return in_; }
  Blocks blocks() const { return blocks_; }
  uint64_t pairs() const { return pairs_; }  // per token: ceil(in / 64)
  const ActivationPair* token(uint64_t t) const { return data_ + t * pairs_; }
  ActivationPair* token(uint64_t t) { return data_ + t * pairs_; }

 private:
  uint64_t in_;
  Blocks blocks_;
  uint64_t pairs_;
  ActivationPair* data_;
};

// A prefill product on AVX-512 VNNI unpacks a block of 4 weight rows once
// for many tokens into caller-owned memory: `kUnpackBytesPerPair` bytes per
// activation pair of the row (64-byte aligned). The portable path needs none.
inline constexpr uint64_t kUnpackBytesPerPair = 512;

// Step 1 of the contract for token rows [token_begin, token_end) of x (each
// `out.in()` floats; token_end <= the capacity). Tokens are independent, so
// threads may split them.
void quantize_activations(const float* x, uint64_t token_begin, uint64_t token_end,
                          QuantizedActivations& out);
// Step 1 for one block of 32 values: writes q[0..31], returns d_a.
float quantize_activation_block(const float* x, int8_t* q);

// As matmul_rows, with `w` holding `out` rows of in/32 blocks each and the
// activations quantized by quantize_activations (x.in() == in). `unpack`:
// x.pairs() * kUnpackBytesPerPair bytes this call may overwrite (no two
// concurrent calls share it).
void matmul_block_rows(Isa isa, Blocks blocks, const std::byte* w, const QuantizedActivations& x,
                       float* y, uint64_t out, uint64_t tokens, uint64_t row_begin,
                       uint64_t row_end, std::byte* unpack);

// Per-ISA entry points (defined in f32_kernels_<isa>.cc).
float dot_portable(const float* a, const float* b, uint64_t n);
float dot_avx2(const float* a, const float* b, uint64_t n);
float dot_avx512(const float* a, const float* b, uint64_t n);
void matmul_rows_portable(const float* w, const float* x, float* y, uint64_t in, uint64_t out,
                          uint64_t tokens, uint64_t row_begin, uint64_t row_end);
void matmul_rows_avx2(const float* w, const float* x, float* y, uint64_t in, uint64_t out,
                      uint64_t tokens, uint64_t row_begin, uint64_t row_end);
void matmul_rows_avx512(const float* w, const float* x, float* y, uint64_t in, uint64_t out,
                        uint64_t tokens, uint64_t row_begin, uint64_t row_end);
void axpy_portable(float s, const float* x, float* y, uint64_t n);
void matmul_block_rows_portable(Blocks blocks, const std::byte* w, const QuantizedActivations& x,
                                float* y, uint64_t out, uint64_t tokens, uint64_t row_begin,
                                uint64_t row_end);
// AVX-512 VNNI; callers check block_vnni_supported() first.
bool block_vnni_supported();
void matmul_block_rows_avx512(Blocks blocks, const std::byte* w, const QuantizedActivations& x,
                              float* y, uint64_t out, uint64_t tokens, uint64_t row_begin,
                              uint64_t row_end, std::byte* unpack);
void axpy_avx2(float s, const float* x, float* y, uint64_t n);
void axpy_avx512(float s, const float* x, float* y, uint64_t n);

}  // namespace ferrite::fast
