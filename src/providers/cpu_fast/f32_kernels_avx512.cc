// The AVX-512 implementation of f32_kernels.h: one zmm register is the 16
// lanes; tiles of up to 4 weight rows x 4 tokens keep 16 accumulators live.
// Block-quantized rows use AVX-512 VNNI (+BW), checked at run time.
#if defined(__x86_64__)
// GCC 12's AVX-512 headers pass an undefined vector to the builtins of
// casts and extracts, which -Wuninitialized reports at every use (GCC PR 105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <vector>

#include "f32_kernels.h"
#include "ferrite/models/ggml_blocks.h"
#include "tile_grid.h"

#define FERRITE_AVX512 __attribute__((target("avx512f,avx512dq,avx512vl,avx2,fma,f16c")))

namespace ferrite::fast {
namespace {

FERRITE_AVX512 inline float reduce_lanes(__m512 v) {
  const __m256 lo = _mm512_castps512_ps256(v);
  const __m256 hi = _mm512_castps512_ps256(_mm512_shuffle_f32x4(v, v, 0xEE));
  const __m256 s8 = _mm256_add_ps(lo, hi);
  const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
  const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
  return _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
}

// y[t*y_stride + r] = dot(w + r*in, x + t*in) for r < R, t < T.
template <int R, int T>
FERRITE_AVX512 void tile(const float* w, const float* x, float* y, uint64_t in,
                         uint64_t y_stride) {
  __m512 acc[R][T];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) acc[r][t] = _mm512_setzero_ps();
  uint64_t i = 0;
  for (; i + 16 <= in; i += 16) {
    __m512 wv[R];
    for (int r = 0; r < R; ++r) {
      // One token: the product streams weights from memory. Prefetching the
      // next block of rows keeps more cache-line requests in flight than the
      // hardware prefetcher does on its own (a hint: never faults, and a
      // block past the matrix's end is harmless).
      if constexpr (T == 1) _mm_prefetch(reinterpret_cast<const char*>(w + (R + r) * in + i), _MM_HINT_T0);
      wv[r] = _mm512_loadu_ps(w + r * in + i);
    }
    for (int t = 0; t < T; ++t) {
      const __m512 xv = _mm512_loadu_ps(x + t * in + i);
      for (int r = 0; r < R; ++r) acc[r][t] = _mm512_fmadd_ps(wv[r], xv, acc[r][t]);
    }
  }
  if (i < in) {
    const __mmask16 mask = static_cast<__mmask16>((1u << (in - i)) - 1);
    __m512 wv[R];
    for (int r = 0; r < R; ++r) wv[r] = _mm512_maskz_loadu_ps(mask, w + r * in + i);
    for (int t = 0; t < T; ++t) {
      const __m512 xv = _mm512_maskz_loadu_ps(mask, x + t * in + i);
      for (int r = 0; r < R; ++r) acc[r][t] = _mm512_fmadd_ps(wv[r], xv, acc[r][t]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) y[t * y_stride + r] = reduce_lanes(acc[r][t]);
}

using TileFn = void (*)(const float*, const float*, float*, uint64_t, uint64_t);
constexpr uint64_t kRows = 4, kTokens = 4;
constexpr TileFn kTiles[kRows][kTokens] = {
    {tile<1, 1>, tile<1, 2>, tile<1, 3>, tile<1, 4>},
    {tile<2, 1>, tile<2, 2>, tile<2, 3>, tile<2, 4>},
    {tile<3, 1>, tile<3, 2>, tile<3, 3>, tile<3, 4>},
    {tile<4, 1>, tile<4, 2>, tile<4, 3>, tile<4, 4>}};

}  // namespace

FERRITE_AVX512 float dot_avx512(const float* a, const float* b, uint64_t n) {
  float y;
  tile<1, 1>(a, b, &y, n, 1);
  return y;
}

FERRITE_AVX512 void matmul_rows_avx512(const float* w, const float* x, float* y, uint64_t in,
                                       uint64_t out, uint64_t tokens, uint64_t row_begin,
                                       uint64_t row_end) {
  tile_grid<kRows, kTokens>(row_begin, row_end, tokens, [&](uint64_t o, uint64_t rows, uint64_t t, uint64_t n) {
    kTiles[rows - 1][n - 1](w + o * in, x + t * in, y + t * out + o, in, out);
  });
}

FERRITE_AVX512 void axpy_avx512(float s, const float* x, float* y, uint64_t n) {
  const __m512 sv = _mm512_set1_ps(s);
  uint64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    _mm512_storeu_ps(y + i, _mm512_fmadd_ps(sv, _mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i)));
  }
  if (i < n) {
    const __mmask16 mask = static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 r = _mm512_fmadd_ps(sv, _mm512_maskz_loadu_ps(mask, x + i),
                                     _mm512_maskz_loadu_ps(mask, y + i));
    _mm512_mask_storeu_ps(y + i, mask, r);
  }
}


// ---- block-quantized rows: AVX-512 VNNI ----------------------------------
//
// One zmm holds two blocks (f32_kernels.h): 64 weight bytes made unsigned,
// times the token's 64 activation bytes, `vpdpbusd` into the correction
// -k * asum_j (k = 128 for Q8_0, whose bytes get +128 by xor 0x80; k = 8 for
// Q4_0, whose nibbles are w + 8), gives the exact p_j; then one convert, one
// multiply (d_w * d_a) and one FMA per (row, token).

#define FERRITE_VNNI \
  __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,avx512vnni,avx2,fma,f16c")))

namespace {

// Blocks b and b+1 (`second` bytes apart): d_w[b] in lanes 0-7, d_w[b+1] in
// 8-15 (F16C conversion is exact, like ggml_block_scale).
FERRITE_VNNI inline __m512 scale_pair(const std::byte* block, const std::byte* second) {
  const auto first_bits = static_cast<short>(ggml_block_scale_bits(block));
  const auto second_bits = static_cast<short>(ggml_block_scale_bits(second));
  const __m256i both = _mm256_mask_set1_epi16(_mm256_set1_epi16(first_bits), 0xFF00, second_bits);
  return _mm512_cvtph_ps(both);
}
// One block: d_w in lanes 0-7, zero in 8-15.
FERRITE_VNNI inline __m512 scale_single(const std::byte* block) {
  const auto bits = static_cast<short>(ggml_block_scale_bits(block));
  return _mm512_cvtph_ps(_mm256_maskz_set1_epi16(0x00FF, bits));
}

// The unsigned weight bytes of blocks b and b+1 (`second` bytes apart), in
// the activations' order: block b's values 0-31, then block b+1's.
template <Blocks B>
FERRITE_VNNI inline __m512i weights_pair(const std::byte* block, const std::byte* second) {
  if constexpr (B == Blocks::kQ8_0) {
    const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 2));
    const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(second + 2));
    return _mm512_xor_si512(_mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1),
                            _mm512_set1_epi8(static_cast<char>(0x80)));
  } else {
    // [b bytes, b bytes, b+1 bytes, b+1 bytes] -> low nibbles of the 1st and
    // 3rd 128-bit lanes, high nibbles of the 2nd and 4th.
    const __m128i first_bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 2));
    const __m128i second_bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(second + 2));
    const __m512i v = _mm512_mask_broadcast_i32x4(_mm512_broadcast_i32x4(first_bytes), 0xFF00,
                                                  second_bytes);
    const __m512i shifts = _mm512_set_epi64(0x0004000400040004, 0x0004000400040004, 0, 0,
                                            0x0004000400040004, 0x0004000400040004, 0, 0);
    return _mm512_and_si512(_mm512_srlv_epi16(v, shifts), _mm512_set1_epi8(0x0F));
  }
}
// One block in the lower half; the upper half is zero (and meets zero
// activations, so its products are zero whatever the bytes).
template <Blocks B>
FERRITE_VNNI inline __m512i weights_single(const std::byte* block) {
  if constexpr (B == Blocks::kQ8_0) {
    const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 2));
    return _mm512_xor_si512(_mm512_zextsi256_si512(lo),
                            _mm512_set1_epi8(static_cast<char>(0x80)));
  } else {
    const __m512i v = _mm512_maskz_broadcast_i32x4(
        0x00FF, _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 2)));
    const __m512i shifts =
        _mm512_set_epi64(0, 0, 0, 0, 0x0004000400040004, 0x0004000400040004, 0, 0);
    return _mm512_and_si512(_mm512_srlv_epi16(v, shifts), _mm512_set1_epi8(0x0F));
  }
}

// acc[r][t] += one step (two blocks, or one with a zero upper half) of R
// rows (unsigned weight bytes wv, scales dw) x T tokens (each `x_stride`
// pairs apart): per (row, token) a copy of the token's correction, vpdpbusd,
// convert, d_w * d_a, FMA.
template <int R, int T>
FERRITE_VNNI inline void vnni_step(__m512 (&acc)[R][T], const __m512i (&wv)[R],
                                   const __m512 (&dw)[R], const ActivationPair* x,
                                   uint64_t x_stride) {
  for (int t = 0; t < T; ++t) {
    const ActivationPair& a = x[t * x_stride];
    const __m512i q = _mm512_load_si512(a.q);
    const __m512 da = _mm512_load_ps(a.scale);
    const __m512i corr = _mm512_load_si512(a.correction);
    for (int r = 0; r < R; ++r) {
      const __m512i p = _mm512_dpbusd_epi32(corr, wv[r], q);
      acc[r][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), _mm512_mul_ps(dw[r], da), acc[r][t]);
    }
  }
}

template <int R, int T>
FERRITE_VNNI inline void store_tile(const __m512 (&acc)[R][T], float* y, uint64_t y_stride) {
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) y[t * y_stride + r] = reduce_lanes(acc[r][t]);
}

// y[t*y_stride + r] for R rows (each `row_bytes` apart) x T tokens over
// `blocks` blocks, reading the blocks as stored (few tokens: decode).
template <Blocks B, int R, int T>
FERRITE_VNNI void vnni_tile(const std::byte* w, uint64_t row_bytes, const ActivationPair* x,
                            uint64_t x_stride, uint64_t blocks, float* y, uint64_t y_stride) {
  constexpr uint64_t kBytes = B == Blocks::kQ8_0 ? 34 : 18;
  __m512 acc[R][T];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) acc[r][t] = _mm512_setzero_ps();
  uint64_t b = 0;
  for (; b + 2 <= blocks; b += 2, ++x) {
    __m512i wv[R];
    __m512 dw[R];
    for (int r = 0; r < R; ++r) {
      const std::byte* block = w + r * row_bytes + b * kBytes;
      {
        // A few tokens stream the weights: prefetch the next block of rows
        // (see the f32 tile); a step spans up to two cache lines. (Batched
        // decode steps of several sequences take this path too.)
        const char* ahead = reinterpret_cast<const char*>(block + R * row_bytes);
        _mm_prefetch(ahead, _MM_HINT_T0);
        if constexpr (2 * kBytes > 64) _mm_prefetch(ahead + 2 * kBytes - 1, _MM_HINT_T0);
      }
      wv[r] = weights_pair<B>(block, block + kBytes);
      dw[r] = scale_pair(block, block + kBytes);
    }
    vnni_step<R, T>(acc, wv, dw, x, x_stride);
  }
  if (b < blocks) {  // an odd last block: never read past it
    __m512i wv[R];
    __m512 dw[R];
    for (int r = 0; r < R; ++r) {
      const std::byte* block = w + r * row_bytes + b * kBytes;
      wv[r] = weights_single<B>(block);
      dw[r] = scale_single(block);
    }
    vnni_step<R, T>(acc, wv, dw, x, x_stride);
  }
  store_tile(acc, y, y_stride);
}

// Many tokens (prefill): a block of rows is unpacked once into what the tile
// loads (unsigned bytes, expanded scales; an odd last block as a pair with
// a zero upper half), so the per-row work is done once per row block
// instead of once per 4 tokens. Same arithmetic, same bits.
struct alignas(64) PackedStep {
  __m512i w;
  __m512 d;
};

template <Blocks B, int R>
FERRITE_VNNI void pack_rows(const std::byte* w, uint64_t row_bytes, uint64_t blocks,
                            PackedStep* out) {
  constexpr uint64_t kBytes = B == Blocks::kQ8_0 ? 34 : 18;
  for (uint64_t b = 0; b < blocks; b += 2) {
    for (int r = 0; r < R; ++r) {
      const std::byte* block = w + r * row_bytes + b * kBytes;
      // Packing streams the weights: prefetch the next block of rows.
      const char* ahead = reinterpret_cast<const char*>(block + R * row_bytes);
      _mm_prefetch(ahead, _MM_HINT_T0);
      if constexpr (2 * kBytes > 64) _mm_prefetch(ahead + 2 * kBytes - 1, _MM_HINT_T0);
      PackedStep& step = *out++;
      if (b + 1 < blocks) {
        step.w = weights_pair<B>(block, block + kBytes);
        step.d = scale_pair(block, block + kBytes);
      } else {
        step.w = weights_single<B>(block);
        step.d = scale_single(block);
      }
    }
  }
}

template <int R, int T>
FERRITE_VNNI void packed_tile(const PackedStep* w, uint64_t steps, const ActivationPair* x,
                              uint64_t x_stride, float* y, uint64_t y_stride) {
  __m512 acc[R][T];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) acc[r][t] = _mm512_setzero_ps();
  for (uint64_t s = 0; s < steps; ++s, ++x, w += R) {
    __m512i wv[R];
    __m512 dw[R];
    for (int r = 0; r < R; ++r) {
      wv[r] = _mm512_load_si512(&w[r].w);
      dw[r] = _mm512_load_ps(reinterpret_cast<const float*>(&w[r].d));
    }
    vnni_step<R, T>(acc, wv, dw, x, x_stride);
  }
  store_tile(acc, y, y_stride);
}

using VnniTileFn = void (*)(const std::byte*, uint64_t, const ActivationPair*, uint64_t, uint64_t,
                            float*, uint64_t);
template <Blocks B>
constexpr VnniTileFn kVnniTiles[kRows][kTokens] = {
    {vnni_tile<B, 1, 1>, vnni_tile<B, 1, 2>, vnni_tile<B, 1, 3>, vnni_tile<B, 1, 4>},
    {vnni_tile<B, 2, 1>, vnni_tile<B, 2, 2>, vnni_tile<B, 2, 3>, vnni_tile<B, 2, 4>},
    {vnni_tile<B, 3, 1>, vnni_tile<B, 3, 2>, vnni_tile<B, 3, 3>, vnni_tile<B, 3, 4>},
    {vnni_tile<B, 4, 1>, vnni_tile<B, 4, 2>, vnni_tile<B, 4, 3>, vnni_tile<B, 4, 4>}};

using PackFn = void (*)(const std::byte*, uint64_t, uint64_t, PackedStep*);
template <Blocks B>
constexpr PackFn kPack[kRows] = {pack_rows<B, 1>, pack_rows<B, 2>, pack_rows<B, 3>,
                                 pack_rows<B, 4>};

using PackedTileFn = void (*)(const PackedStep*, uint64_t, const ActivationPair*, uint64_t, float*,
                              uint64_t);
constexpr PackedTileFn kPackedTiles[kRows][kTokens] = {
    {packed_tile<1, 1>, packed_tile<1, 2>, packed_tile<1, 3>, packed_tile<1, 4>},
    {packed_tile<2, 1>, packed_tile<2, 2>, packed_tile<2, 3>, packed_tile<2, 4>},
    {packed_tile<3, 1>, packed_tile<3, 2>, packed_tile<3, 3>, packed_tile<3, 4>},
    {packed_tile<4, 1>, packed_tile<4, 2>, packed_tile<4, 3>, packed_tile<4, 4>}};

}  // namespace

FERRITE_VNNI void matmul_block_rows_avx512(Blocks blocks, const std::byte* w,
                                           const QuantizedActivations& x, float* y, uint64_t out,
                                           uint64_t tokens, uint64_t row_begin, uint64_t row_end,
                                           std::byte* unpack) {
  const uint64_t per_row = x.in() / kBlockValues, row_bytes = per_row * block_bytes(blocks);
  const bool q8 = blocks == Blocks::kQ8_0;
  if (tokens <= kTokens) {  // one pass of tiles over the rows: read them as stored
    const auto& tiles = q8 ? kVnniTiles<Blocks::kQ8_0> : kVnniTiles<Blocks::kQ4_0>;
    tile_grid<kRows, kTokens>(row_begin, row_end, tokens, [&](uint64_t o, uint64_t rows, uint64_t t, uint64_t n) {
      tiles[rows - 1][n - 1](w + o * row_bytes, row_bytes, x.token(t), x.pairs(), per_row,
                             y + t * out + o, out);
    });
    return;
  }
  // The caller's unpack memory holds one row block: kRows x 128 bytes per step.
  static_assert(sizeof(PackedStep) * kRows == kUnpackBytesPerPair);
  PackedStep* const packed = reinterpret_cast<PackedStep*>(unpack);
  const uint64_t steps = x.pairs();
  const auto& pack = q8 ? kPack<Blocks::kQ8_0> : kPack<Blocks::kQ4_0>;
  uint64_t packed_row = row_end;  // the row block now in `packed`
  tile_grid<kRows, kTokens>(row_begin, row_end, tokens, [&](uint64_t o, uint64_t rows, uint64_t t, uint64_t n) {
    if (packed_row != o) {
      pack[rows - 1](w + o * row_bytes, row_bytes, per_row, packed);
      packed_row = o;
    }
    kPackedTiles[rows - 1][n - 1](packed, steps, x.token(t), x.pairs(), y + t * out + o, out);
  });
}
}  // namespace ferrite::fast
#else
#include "f32_kernels.h"
namespace ferrite::fast {
float dot_avx512(const float* a, const float* b, uint64_t n) { return dot_portable(a, b, n); }
void matmul_rows_avx512(const float* w, const float* x, float* y, uint64_t in, uint64_t out,
                        uint64_t tokens, uint64_t row_begin, uint64_t row_end) {
  matmul_rows_portable(w, x, y, in, out, tokens, row_begin, row_end);
}
void axpy_avx512(float s, const float* x, float* y, uint64_t n) { axpy_portable(s, x, y, n); }
void matmul_block_rows_avx512(Blocks blocks, const std::byte* w, const QuantizedActivations& x,
                              float* y, uint64_t out, uint64_t tokens, uint64_t row_begin,
                              uint64_t row_end, std::byte*) {
  matmul_block_rows_portable(blocks, w, x, y, out, tokens, row_begin, row_end);
}
}  // namespace ferrite::fast
#endif
