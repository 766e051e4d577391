// The AVX-512 implementation of f32_kernels.h: one zmm register is the 16
// lanes; tiles of up to 4 weight rows x 4 tokens keep 16 accumulators live.
#if defined(__x86_64__)
// GCC 12's AVX-512 headers pass an undefined vector to the builtins of
// casts and extracts, which -Wuninitialized reports at every use (GCC PR 105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include <algorithm>

#include "f32_kernels.h"

#define FERRITE_AVX512 __attribute__((target("avx512f,avx512dq,avx512vl,avx2,fma")))

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
constexpr int kRows = 4, kTokens = 4;
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
  // A block of weight rows stays in cache while every token passes over it.
  for (uint64_t o = row_begin; o < row_end; o += kRows) {
    const uint64_t rows = std::min<uint64_t>(kRows, row_end - o);
    for (uint64_t t = 0; t < tokens; t += kTokens) {
      const uint64_t n = std::min<uint64_t>(kTokens, tokens - t);
      kTiles[rows - 1][n - 1](w + o * in, x + t * in, y + t * out + o, in, out);
    }
  }
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
}  // namespace ferrite::fast
#endif
