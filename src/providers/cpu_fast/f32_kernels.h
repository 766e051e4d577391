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
// multiple of 32): the weights are never expanded to f32 in memory. The dot
// product of a row with x is defined as
//   1. 16 lanes; for block b with scale d and integer values q[0..31] (Q8_0:
//      the int8; Q4_0: nibble - 8), lane l forms p = q[l]*x[32b+l] (rounded),
//      then p = fma(q[l+16], x[32b+l+16], p), then acc[l] = fma(d, p, acc[l]);
//   2. the same reduction tree as above.
// Every instruction set computes exactly this (the AVX2 variant runs the
// portable code for blocks), so the bits agree as for f32.
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
// As matmul_rows, with `w` holding `out` rows of in/32 blocks each.
void matmul_block_rows(Isa isa, Blocks blocks, const std::byte* w, const float* x, float* y,
                       uint64_t in, uint64_t out, uint64_t tokens, uint64_t row_begin,
                       uint64_t row_end);

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
void matmul_block_rows_portable(Blocks blocks, const std::byte* w, const float* x, float* y,
                                uint64_t in, uint64_t out, uint64_t tokens, uint64_t row_begin,
                                uint64_t row_end);
void matmul_block_rows_avx512(Blocks blocks, const std::byte* w, const float* x, float* y,
                              uint64_t in, uint64_t out, uint64_t tokens, uint64_t row_begin,
                              uint64_t row_end);
void axpy_avx2(float s, const float* x, float* y, uint64_t n);
void axpy_avx512(float s, const float* x, float* y, uint64_t n);

}  // namespace ferrite::fast
