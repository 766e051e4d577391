// The AVX-512 implementation of f32_kernels.h: one zmm register is the 16
// lanes; tiles of up to 4 weight rows x 4 tokens keep 16 accumulators live.
#if defined(__x86_64__)
// GCC 12's AVX-512 headers pass an undefined vector to the builtins of
// casts and extracts, which -Wuninitialized reports at every use (GCC PR 105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <algorithm>

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


namespace {

// A block's 32 integer values as two vectors of floats (values 0-15, 16-31).
template <Blocks B>
FERRITE_AVX512 inline void load_block(const std::byte* block, __m512& lo, __m512& hi) {
  const __m128i* bytes = reinterpret_cast<const __m128i*>(block + 2);
  if constexpr (B == Blocks::kQ8_0) {
    lo = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(bytes)));
    hi = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(bytes + 1)));
  } else {
    const __m512i packed = _mm512_cvtepu8_epi32(_mm_loadu_si128(bytes));
    const __m512i eight = _mm512_set1_epi32(8);
    lo = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_and_si512(packed, _mm512_set1_epi32(0x0F)), eight));
    hi = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_srli_epi32(packed, 4), eight));
  }
}

FERRITE_AVX512 inline __m512 block_scale(const std::byte* block) {
  return _mm512_set1_ps(_cvtsh_ss(ggml_block_scale_bits(block)));  // exact, like ggml_block_scale
}

// y[t*y_stride + r] for R rows (each `row_bytes` apart) x T tokens.
template <Blocks B, int R, int T>
FERRITE_AVX512 void block_tile(const std::byte* w, uint64_t row_bytes, const float* x, float* y,
                               uint64_t in, uint64_t y_stride) {
  constexpr uint64_t kBytes = B == Blocks::kQ8_0 ? 34 : 18;
  __m512 acc[R][T];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) acc[r][t] = _mm512_setzero_ps();
  const uint64_t per_row = in / kBlockValues;
  for (uint64_t b = 0; b < per_row; ++b) {
    __m512 lo[R], hi[R], d[R];
    for (int r = 0; r < R; ++r) {
      const std::byte* block = w + r * row_bytes + b * kBytes;
      if constexpr (T == 1) _mm_prefetch(reinterpret_cast<const char*>(block + R * row_bytes), _MM_HINT_T0);
      load_block<B>(block, lo[r], hi[r]);
      d[r] = block_scale(block);
    }
    for (int t = 0; t < T; ++t) {
      const __m512 xlo = _mm512_loadu_ps(x + t * in + b * kBlockValues);
      const __m512 xhi = _mm512_loadu_ps(x + t * in + b * kBlockValues + 16);
      for (int r = 0; r < R; ++r) {
        const __m512 p = _mm512_fmadd_ps(hi[r], xhi, _mm512_mul_ps(lo[r], xlo));
        acc[r][t] = _mm512_fmadd_ps(d[r], p, acc[r][t]);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) y[t * y_stride + r] = reduce_lanes(acc[r][t]);
}

using BlockTileFn = void (*)(const std::byte*, uint64_t, const float*, float*, uint64_t, uint64_t);
template <Blocks B>
constexpr BlockTileFn kBlockTiles[kRows][kTokens] = {
    {block_tile<B, 1, 1>, block_tile<B, 1, 2>, block_tile<B, 1, 3>, block_tile<B, 1, 4>},
    {block_tile<B, 2, 1>, block_tile<B, 2, 2>, block_tile<B, 2, 3>, block_tile<B, 2, 4>},
    {block_tile<B, 3, 1>, block_tile<B, 3, 2>, block_tile<B, 3, 3>, block_tile<B, 3, 4>},
    {block_tile<B, 4, 1>, block_tile<B, 4, 2>, block_tile<B, 4, 3>, block_tile<B, 4, 4>}};

}  // namespace

FERRITE_AVX512 void matmul_block_rows_avx512(Blocks blocks, const std::byte* w, const float* x,
                                             float* y, uint64_t in, uint64_t out, uint64_t tokens,
                                             uint64_t row_begin, uint64_t row_end) {
  const uint64_t row_bytes = in / kBlockValues * block_bytes(blocks);
  const auto& tiles = blocks == Blocks::kQ8_0 ? kBlockTiles<Blocks::kQ8_0> : kBlockTiles<Blocks::kQ4_0>;
  tile_grid<kRows, kTokens>(row_begin, row_end, tokens, [&](uint64_t o, uint64_t rows, uint64_t t, uint64_t n) {
    tiles[rows - 1][n - 1](w + o * row_bytes, row_bytes, x + t * in, y + t * out + o, in, out);
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
void matmul_block_rows_avx512(Blocks blocks, const std::byte* w, const float* x, float* y,
                              uint64_t in, uint64_t out, uint64_t tokens, uint64_t row_begin,
                              uint64_t row_end) {
  matmul_block_rows_portable(blocks, w, x, y, in, out, tokens, row_begin, row_end);
}
}  // namespace ferrite::fast
#endif
