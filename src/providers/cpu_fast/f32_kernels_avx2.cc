// The AVX2+FMA implementation of f32_kernels.h: the 16 lanes are two ymm
// registers (lanes 0-7 and 8-15); tiles of up to 2 weight rows x 2 tokens.
#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>

#include "f32_kernels.h"
#include "tile_grid.h"

#define FERRITE_AVX2 __attribute__((target("avx2,fma")))

namespace ferrite::fast {
namespace {

struct Lanes16 {
  __m256 lo, hi;
};

FERRITE_AVX2 inline float reduce_lanes(Lanes16 v) {
  const __m256 s8 = _mm256_add_ps(v.lo, v.hi);
  const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
  const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
  return _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
}

// Masks for lanes [0, rem) of the 16, as two halves.
struct TailMask {
  __m256i lo, hi;
};
FERRITE_AVX2 inline TailMask tail_mask(uint64_t rem) {
  const __m256i n = _mm256_set1_epi32(static_cast<int>(rem));
  const __m256i lo_index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i hi_index = _mm256_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15);
  return {_mm256_cmpgt_epi32(n, lo_index), _mm256_cmpgt_epi32(n, hi_index)};
}

template <int R, int T>
FERRITE_AVX2 void tile(const float* w, const float* x, float* y, uint64_t in, uint64_t y_stride) {
  Lanes16 acc[R][T];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) acc[r][t] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
  uint64_t i = 0;
  for (; i + 16 <= in; i += 16) {
    Lanes16 wv[R];
    for (int r = 0; r < R; ++r) {
      // One token: prefetch the next block of rows (see the AVX-512 tile).
      if constexpr (T == 1) _mm_prefetch(reinterpret_cast<const char*>(w + (R + r) * in + i), _MM_HINT_T0);
      wv[r] = {_mm256_loadu_ps(w + r * in + i), _mm256_loadu_ps(w + r * in + i + 8)};
    }
    for (int t = 0; t < T; ++t) {
      const __m256 xlo = _mm256_loadu_ps(x + t * in + i);
      const __m256 xhi = _mm256_loadu_ps(x + t * in + i + 8);
      for (int r = 0; r < R; ++r) {
        acc[r][t].lo = _mm256_fmadd_ps(wv[r].lo, xlo, acc[r][t].lo);
        acc[r][t].hi = _mm256_fmadd_ps(wv[r].hi, xhi, acc[r][t].hi);
      }
    }
  }
  if (i < in) {
    const TailMask m = tail_mask(in - i);
    Lanes16 wv[R];
    for (int r = 0; r < R; ++r) {
      wv[r] = {_mm256_maskload_ps(w + r * in + i, m.lo), _mm256_maskload_ps(w + r * in + i + 8, m.hi)};
    }
    for (int t = 0; t < T; ++t) {
      const __m256 xlo = _mm256_maskload_ps(x + t * in + i, m.lo);
      const __m256 xhi = _mm256_maskload_ps(x + t * in + i + 8, m.hi);
      for (int r = 0; r < R; ++r) {
        acc[r][t].lo = _mm256_fmadd_ps(wv[r].lo, xlo, acc[r][t].lo);
        acc[r][t].hi = _mm256_fmadd_ps(wv[r].hi, xhi, acc[r][t].hi);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) y[t * y_stride + r] = reduce_lanes(acc[r][t]);
}

using TileFn = void (*)(const float*, const float*, float*, uint64_t, uint64_t);
constexpr uint64_t kRows = 2, kTokens = 2;
constexpr TileFn kTiles[kRows][kTokens] = {{tile<1, 1>, tile<1, 2>}, {tile<2, 1>, tile<2, 2>}};

}  // namespace

FERRITE_AVX2 float dot_avx2(const float* a, const float* b, uint64_t n) {
  float y;
  tile<1, 1>(a, b, &y, n, 1);
  return y;
}

FERRITE_AVX2 void matmul_rows_avx2(const float* w, const float* x, float* y, uint64_t in,
                                   uint64_t out, uint64_t tokens, uint64_t row_begin,
                                   uint64_t row_end) {
  tile_grid<kRows, kTokens>(row_begin, row_end, tokens, [&](uint64_t o, uint64_t rows, uint64_t t, uint64_t n) {
    kTiles[rows - 1][n - 1](w + o * in, x + t * in, y + t * out + o, in, out);
  });
}

FERRITE_AVX2 void axpy_avx2(float s, const float* x, float* y, uint64_t n) {
  const __m256 sv = _mm256_set1_ps(s);
  uint64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(sv, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
  }
  for (; i < n; ++i) y[i] = __builtin_fmaf(s, x[i], y[i]);
}

}  // namespace ferrite::fast
#else
#include "f32_kernels.h"
namespace ferrite::fast {
float dot_avx2(const float* a, const float* b, uint64_t n) { return dot_portable(a, b, n); }
void matmul_rows_avx2(const float* w, const float* x, float* y, uint64_t in, uint64_t out,
                      uint64_t tokens, uint64_t row_begin, uint64_t row_end) {
  matmul_rows_portable(w, x, y, in, out, tokens, row_begin, row_end);
}
void axpy_avx2(float s, const float* x, float* y, uint64_t n) { axpy_portable(s, x, y, n); }
}  // namespace ferrite::fast
#endif
