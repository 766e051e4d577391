// The AVX2 implementation of the sub-block products (f32_kernels.h,
// "Sub-block formats"): per group of 8 sub-blocks (a K super-block, or 8
// blocks of 32) the weights are unpacked once into 8 registers of unsigned
// bytes, then for every token `vpmaddubsw` (u x q, pairs: at most
// 2 * 63 * 127, no saturation) and `vpmaddwd` (by Q6_K's int16 half scales,
// else by 1) give the exact int32 partial sums, a `vphaddd` tree the 8
// sub-block sums, one `vpmulld` by Q4_K / Q5_K's 6-bit scales P (exact:
// sc (dot_lo + dot_hi) either way), and one convert and fused multiply-add
// per lane the float part in the contract's order. Up to 4 tokens keep
// their accumulators in registers and each group is unpacked once per row;
// more tokens run in blocks of 16, each block over all rows (its
// activations stay in cache; each group is unpacked once per row and block),
// with the accumulators in a per-call buffer. The float operations per token
// are the same, in the same order, either way. A row's last group of fewer
// than 8 blocks runs the portable definition. The AVX-512 VNNI kernel at the
// end of this file shares the unpacking and the float part.
#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "sub_block_kernels.h"

// F16C (block scales) predates AVX2 on every x86 CPU.
#define FERRITE_AVX2 __attribute__((target("avx2,fma,f16c")))

namespace ferrite::fast {
namespace {

struct Group {
  __m256i u[8];        // unsigned integers of the 8 sub-blocks
  __m256i scale16[8];  // Q6_K: per sub-block, the int16 multipliers of the maddubs pairs
  __m256i scale32;     // Q4_K, Q5_K: the 6-bit scale of each sub-block, as int32
  __m256i lo32, hi32;  // Q6_K: each sub-block's int8 scales of values 0-15 and 16-31, as int32
  __m256i sums16;      // int16 multipliers of the activation 16-sums (offset or min)
  __m256 d, m;         // per lane: the float scale D and min scale M
};

FERRITE_AVX2 inline __m256i low_nibbles(__m256i v) {
  return _mm256_and_si256(v, _mm256_set1_epi8(0x0F));
}
FERRITE_AVX2 inline __m256i high_nibbles(__m256i v) {
  return _mm256_and_si256(_mm256_srli_epi16(v, 4), _mm256_set1_epi8(0x0F));
}
// 16 bytes of nibbles -> 32 unsigned values (low nibbles 0-15, high 16-31).
FERRITE_AVX2 inline __m256i nibbles32(const std::byte* p) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i mask = _mm_set1_epi8(0x0F);
  return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(v, 4), mask), _mm_and_si128(v, mask));
}
// Bit i of qh -> 0x10 in byte i.
FERRITE_AVX2 inline __m256i high_bits32(uint32_t qh) {
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(static_cast<int>(qh)),
      _mm256_setr_epi64x(0x0000000000000000, 0x0101010101010101, 0x0202020202020202,
                         0x0303030303030303));
  const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ULL));
  const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
  return _mm256_and_si256(set, _mm256_set1_epi8(0x10));
}
FERRITE_AVX2 inline __m256i load32(const std::byte* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}
// 4 little-endian bytes (this file is x86 only): one unaligned load.
inline uint32_t u32_at(const std::byte* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
FERRITE_AVX2 inline __m256 broadcast_f16(uint16_t bits) {
  return _mm256_set1_ps(_cvtsh_ss(bits));
}

// The 8 six-bit scales and mins of a K super-block (`scales`: its 12 bytes),
// one byte each, sub-block j in byte j: ggml_k_scale_min for all j at once
// (j < 4: sc = q[j] & 63, mn = q[j+4] & 63; j >= 4: sc = (q[j+4] & 15) |
// (q[j-4] >> 6) << 4, mn = (q[j+4] >> 4) | (q[j] >> 6) << 4).
struct KScales {
  uint64_t sc, mn;
};
inline KScales k_scales(const std::byte* scales) {
  const uint32_t q0 = u32_at(scales), q1 = u32_at(scales + 4), q2 = u32_at(scales + 8);
  const uint32_t sc_lo = q0 & 0x3F3F3F3Fu, mn_lo = q1 & 0x3F3F3F3Fu;
  const uint32_t sc_hi = (q2 & 0x0F0F0F0Fu) | (((q0 >> 6) & 0x03030303u) << 4);
  const uint32_t mn_hi = ((q2 >> 4) & 0x0F0F0F0Fu) | (((q1 >> 6) & 0x03030303u) << 4);
  return {sc_lo | uint64_t{sc_hi} << 32, mn_lo | uint64_t{mn_hi} << 32};
}

// Unpacks the group of 8 sub-blocks starting at block `g` (K formats) or
// at blocks [8g, 8g + 8) (32-value formats) of a row.
template <SubBlocks kKind>
FERRITE_AVX2 void unpack(const std::byte* row, uint64_t g, Group& out) {
  if constexpr (kKind == SubBlocks::kQ4_1 || kKind == SubBlocks::kQ5_0 ||
                kKind == SubBlocks::kQ5_1) {
    alignas(16) uint16_t d[8], m[8];  // f16 bits
    const GgmlBlockFormat& f = sub_block_format(kKind);
    for (int s = 0; s < 8; ++s) {
      const std::byte* b = row + (8 * g + s) * f.bytes_per_block;
      d[s] = ggml_block_scale_bits(b);
      if constexpr (kKind == SubBlocks::kQ4_1) {
        m[s] = ggml_block_scale_bits(b + 2);
        out.u[s] = nibbles32(b + 4);
      } else if constexpr (kKind == SubBlocks::kQ5_0) {
        m[s] = 0;
        out.u[s] = _mm256_or_si256(nibbles32(b + 6), high_bits32(u32_at(b + 2)));
      } else {
        m[s] = ggml_block_scale_bits(b + 2);
        out.u[s] = _mm256_or_si256(nibbles32(b + 8), high_bits32(u32_at(b + 4)));
      }
    }
    // Q5_0: P -= 16 * (s_lo + s_hi); Q4_1 / Q5_1: N = s_lo + s_hi.
    out.sums16 = _mm256_set1_epi16(kKind == SubBlocks::kQ5_0 ? -16 : 1);
    out.d = _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(d)));
    out.m = _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(m)));
  } else if constexpr (kKind == SubBlocks::kQ4_K || kKind == SubBlocks::kQ5_K) {
    constexpr bool q5 = kKind == SubBlocks::kQ5_K;
    const std::byte* b = row + g * (q5 ? 176 : 144);
    const std::byte* qs = b + (q5 ? 48 : 16);
    for (int c = 0; c < 4; ++c) {
      const __m256i bytes = load32(qs + 32 * c);
      out.u[2 * c] = low_nibbles(bytes);
      out.u[2 * c + 1] = high_nibbles(bytes);
    }
    if constexpr (q5) {
      const __m256i qh = load32(b + 16);
      for (int s = 0; s < 8; ++s) {
        const __m256i bit = _mm256_set1_epi8(static_cast<char>(1 << s));
        const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(qh, bit), bit);
        out.u[s] = _mm256_or_si256(out.u[s], _mm256_and_si256(set, _mm256_set1_epi8(0x10)));
      }
    }
    const KScales k = k_scales(b + 4);
    out.scale32 = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(k.sc)));
    // The mins, each twice (the two 16-sums of its sub-block): N = mn (s_lo + s_hi).
    const __m128i mn = _mm_cvtsi64_si128(static_cast<long long>(k.mn));
    out.sums16 = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(mn, mn));
    out.d = broadcast_f16(ggml_block_scale_bits(b));
    // M = -dmin: the f16 sign bit flipped (exact).
    out.m = broadcast_f16(static_cast<uint16_t>(ggml_block_scale_bits(b + 2) ^ 0x8000u));
  } else {  // Q6_K
    const std::byte* b = row + g * 210;
    // The 16 int8 scales as int16, then each duplicated into a 32-bit lane:
    // pairs[0] holds scales 0-3 and 8-11, pairs[1] 4-7 and 12-15.
    const __m256i scales =
        _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 192)));
    const __m256i pairs[2] = {_mm256_unpacklo_epi16(scales, scales),
                              _mm256_unpackhi_epi16(scales, scales)};
    for (int s = 0; s < 8; ++s) {
      const int h = s / 4, k = s % 4;
      const __m256i ql = load32(b + 64 * h + 32 * (k % 2));
      const __m256i low = k < 2 ? low_nibbles(ql) : high_nibbles(ql);
      const __m256i qh = load32(b + 128 + 32 * h);
      const __m256i high = _mm256_slli_epi16(
          _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * k)), _mm256_set1_epi8(3)), 4);
      out.u[s] = _mm256_or_si256(low, high);
      // Lower 128 bits: the pairs of values 0-15 (scale 2s), upper: 16-31
      // (scale 2s + 1); scale i sits in pairs[(i / 4) % 2], lane 4 (i / 8) + i % 4.
      const int i = 2 * s, lane = 4 * (i / 8) + i % 4;
      out.scale16[s] = _mm256_permutevar8x32_epi32(
          pairs[(i / 4) % 2], _mm256_setr_epi32(lane, lane, lane, lane, lane + 1, lane + 1,
                                                lane + 1, lane + 1));
    }
    // The same as int32 per sub-block (for the VNNI kernel): int16 scale 2j
    // is the low half of 32-bit lane j, 2j + 1 the high half.
    out.lo32 = _mm256_srai_epi32(_mm256_slli_epi32(scales, 16), 16);
    out.hi32 = _mm256_srai_epi32(scales, 16);
    // -32 * (sc_lo * s_lo + sc_hi * s_hi), added to P.
    out.sums16 = _mm256_mullo_epi16(scales, _mm256_set1_epi16(-32));
    out.d = broadcast_f16(ggml_block_scale_bits(b + 208));
    out.m = _mm256_setzero_ps();
  }
}

// The 8 lane sums of 8 vectors of int32: [sum(v0), ..., sum(v7)].
FERRITE_AVX2 inline __m256i sum8(const __m256i* v) {
  const __m256i h01 = _mm256_hadd_epi32(v[0], v[1]), h23 = _mm256_hadd_epi32(v[2], v[3]);
  const __m256i h45 = _mm256_hadd_epi32(v[4], v[5]), h67 = _mm256_hadd_epi32(v[6], v[7]);
  const __m256i a = _mm256_hadd_epi32(h01, h23), b = _mm256_hadd_epi32(h45, h67);
  return _mm256_add_epi32(_mm256_permute2x128_si256(a, b, 0x20),
                          _mm256_permute2x128_si256(a, b, 0x31));
}

FERRITE_AVX2 inline float reduce8(__m256 acc) {
  const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
  const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
  return _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
}

// Step 3 of group g for token t, given the exact int32 sums of its 8
// sub-blocks in `p` (Q6_K: already scaled by its half scales; Q4_K / Q5_K:
// not yet scaled, done here): acc + the group's float part. Shared by the
// AVX2 and VNNI kernels, so their float arithmetic is one code. (The two
// row drivers, rows() and rows_vnni(), have the same loop shape but must
// stay separate functions: a function's target attribute decides what the
// compiler may emit, and AVX2 machines must not run EVEX code.)
template <SubBlocks kKind>
FERRITE_AVX2 inline __m256 float_part(const Group& group, const SubBlockActivations& x,
                                      uint64_t g, uint64_t t, __m256i p, __m256 acc) {
  constexpr bool kMin = kKind == SubBlocks::kQ4_1 || kKind == SubBlocks::kQ5_1 ||
                        kKind == SubBlocks::kQ4_K || kKind == SubBlocks::kQ5_K;
  constexpr bool kOffset = kKind == SubBlocks::kQ5_0 || kKind == SubBlocks::kQ6_K;
  constexpr bool kScale32 = kKind == SubBlocks::kQ4_K || kKind == SubBlocks::kQ5_K;
  if constexpr (kScale32) p = _mm256_mullo_epi32(p, group.scale32);
  const __m256i sums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.sums(t) + 16 * g));
  const __m256i extra = _mm256_madd_epi16(sums, group.sums16);
  const __m256 da = _mm256_loadu_ps(x.scale(t) + 8 * g);
  if constexpr (kOffset) p = _mm256_add_epi32(p, extra);
  acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_mul_ps(group.d, da), acc);
  if constexpr (kMin) {
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(extra), _mm256_mul_ps(group.m, da), acc);
  }
  return acc;
}

// Steps 2-3 of group g for token t: acc + the group's 8 sub-blocks.
template <SubBlocks kKind>
FERRITE_AVX2 inline __m256 accumulate(const Group& group, const SubBlockActivations& x,
                                      uint64_t g, uint64_t t, __m256 acc) {
  const int8_t* q = x.q(t) + 256 * g;
  const __m256i ones16 = _mm256_set1_epi16(1);
  __m256i v[8];
  for (int s = 0; s < 8; ++s) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + 32 * s));
    const __m256i pairs = _mm256_maddubs_epi16(group.u[s], a);
    v[s] = _mm256_madd_epi16(pairs, kKind == SubBlocks::kQ6_K ? group.scale16[s] : ones16);
  }
  return float_part<kKind>(group, x, g, t, sum8(v), acc);
}

// y[t * out + o] of one row o from its 8-lane accumulator: the tail of
// fewer than 8 blocks by the portable definition, then the tree.
template <SubBlocks kKind>
FERRITE_AVX2 void finish(const std::byte* row, const SubBlockActivations& x, uint64_t t,
                         __m256 acc, float* y, uint64_t out, uint64_t o) {
  const uint64_t subs = x.in() / 32, groups = subs / 8;
  if (8 * groups < subs) {  // a tail of fewer than 8 blocks of 32
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, acc);
    accumulate_sub_blocks(kKind, row, 8 * groups, subs - 8 * groups, x, t, lanes);
    acc = _mm256_load_ps(lanes);
  }
  y[t * out + o] = reduce8(acc);
}

// Up to this many tokens keep their accumulators in registers; more run in
// blocks of kTokenBlock tokens (16 tokens' activations of a 4096-wide row:
// 64 KiB in q, and one group's 4 KiB, stay in cache while the rows stream).
constexpr uint64_t kRegisterTokens = 4;
constexpr uint64_t kTokenBlock = 16;

template <SubBlocks kKind>
FERRITE_AVX2 void rows(const std::byte* w, const SubBlockActivations& x, float* y, uint64_t out,
                       uint64_t tokens, uint64_t row_begin, uint64_t row_end) {
  const GgmlBlockFormat& format = sub_block_format(kKind);
  const uint64_t groups = x.in() / 256;
  const uint64_t row_bytes = x.in() / format.values_per_block * format.bytes_per_block;
  Group group;
  if (tokens <= kRegisterTokens) {
    for (uint64_t o = row_begin; o < row_end; ++o) {
      const std::byte* row = w + o * row_bytes;
      __m256 acc[kRegisterTokens];
      for (auto& a : acc) a = _mm256_setzero_ps();
      for (uint64_t g = 0; g < groups; ++g) {
        unpack<kKind>(row, g, group);
        for (uint64_t t = 0; t < tokens; ++t) acc[t] = accumulate<kKind>(group, x, g, t, acc[t]);
      }
      for (uint64_t t = 0; t < tokens; ++t) finish<kKind>(row, x, t, acc[t], y, out, o);
    }
    return;
  }
  // Blocks of kTokenBlock tokens, each over all rows, so that block's
  // activations stay in the first-level cache while the rows stream by.
  std::vector<float> acc(8 * std::min(tokens, kTokenBlock));  // token t0 + i's lanes at 8i
  for (uint64_t t0 = 0; t0 < tokens; t0 += kTokenBlock) {
    const uint64_t n = std::min(kTokenBlock, tokens - t0);
    for (uint64_t o = row_begin; o < row_end; ++o) {
      const std::byte* row = w + o * row_bytes;
      for (uint64_t i = 0; i < n; ++i) _mm256_storeu_ps(&acc[8 * i], _mm256_setzero_ps());
      for (uint64_t g = 0; g < groups; ++g) {
        unpack<kKind>(row, g, group);
        for (uint64_t i = 0; i < n; ++i) {
          float* lanes = &acc[8 * i];
          _mm256_storeu_ps(lanes, accumulate<kKind>(group, x, g, t0 + i, _mm256_loadu_ps(lanes)));
        }
      }
      for (uint64_t i = 0; i < n; ++i) {
        finish<kKind>(row, x, t0 + i, _mm256_loadu_ps(&acc[8 * i]), y, out, o);
      }
    }
  }
}

// ---- AVX-512 VNNI: one 32-bit lane per sub-block ----
// The group's unsigned integers are transposed once per row into 8 vectors
// W[k] whose lane j holds bytes 4k..4k+3 of sub-block j, and the token's
// activations are stored transposed the same way (SubBlockActivations::
// transposed), so `vpdpbusd` over k = 0..7 leaves each sub-block's exact
// dot product in its own lane: no horizontal sums. (Q6_K: k < 4 are the
// values 0-15 and k >= 4 the values 16-31, accumulated apart and scaled by
// their int8 scales.) The integers are the same exact int32 as above, and
// the float part is the same code, so the bits are the same.
#define FERRITE_VNNI \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))

// In place: v[k] lane j <- v[j] lane k (an 8 x 8 transpose of 32-bit words).
FERRITE_VNNI inline void transpose8x8(__m256i* v) {
  __m256i t[8], r[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_epi32(v[2 * i], v[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_epi32(v[2 * i], v[2 * i + 1]);
  }
  for (int h = 0; h < 2; ++h) {  // rows 0-3, then 4-7
    const __m256i* a = t + 4 * h;
    r[4 * h + 0] = _mm256_unpacklo_epi64(a[0], a[2]);
    r[4 * h + 1] = _mm256_unpackhi_epi64(a[0], a[2]);
    r[4 * h + 2] = _mm256_unpacklo_epi64(a[1], a[3]);
    r[4 * h + 3] = _mm256_unpackhi_epi64(a[1], a[3]);
  }
  for (int k = 0; k < 4; ++k) {
    v[k] = _mm256_permute2x128_si256(r[k], r[4 + k], 0x20);
    v[k + 4] = _mm256_permute2x128_si256(r[k], r[4 + k], 0x31);
  }
}

template <SubBlocks kKind>
FERRITE_VNNI inline __m256 accumulate_vnni(const Group& group, const __m256i* w,
                                           const SubBlockActivations& x, uint64_t g, uint64_t t,
                                           __m256 acc) {
  const auto* q = reinterpret_cast<const __m256i*>(x.transposed(t) + 256 * g);
  __m256i p;
  if constexpr (kKind == SubBlocks::kQ6_K) {
    __m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
    for (int k = 0; k < 4; ++k) lo = _mm256_dpbusd_epi32(lo, w[k], _mm256_loadu_si256(q + k));
    for (int k = 4; k < 8; ++k) hi = _mm256_dpbusd_epi32(hi, w[k], _mm256_loadu_si256(q + k));
    p = _mm256_add_epi32(_mm256_mullo_epi32(lo, group.lo32), _mm256_mullo_epi32(hi, group.hi32));
  } else {
    p = _mm256_setzero_si256();
    for (int k = 0; k < 8; ++k) p = _mm256_dpbusd_epi32(p, w[k], _mm256_loadu_si256(q + k));
  }
  return float_part<kKind>(group, x, g, t, p, acc);
}

// Unpacks group g of a row and transposes it: words[k] lane j = bytes
// 4k..4k+3 of sub-block j.
template <SubBlocks kKind>
FERRITE_VNNI inline void unpack_transposed(const std::byte* row, uint64_t g, Group& group,
                                           __m256i* words) {
  unpack<kKind>(row, g, group);
  for (int s = 0; s < 8; ++s) words[s] = group.u[s];
  transpose8x8(words);
}

template <SubBlocks kKind>
FERRITE_VNNI void rows_vnni(const std::byte* w, const SubBlockActivations& x, float* y,
                            uint64_t out, uint64_t tokens, uint64_t row_begin, uint64_t row_end) {
  const GgmlBlockFormat& format = sub_block_format(kKind);
  const uint64_t groups = x.in() / 256;
  const uint64_t row_bytes = x.in() / format.values_per_block * format.bytes_per_block;
  Group group;
  __m256i words[8];
  if (tokens <= kRegisterTokens) {
    for (uint64_t o = row_begin; o < row_end; ++o) {
      const std::byte* row = w + o * row_bytes;
      __m256 acc[kRegisterTokens];
      for (auto& a : acc) a = _mm256_setzero_ps();
      for (uint64_t g = 0; g < groups; ++g) {
        unpack_transposed<kKind>(row, g, group, words);
        for (uint64_t t = 0; t < tokens; ++t) {
          acc[t] = accumulate_vnni<kKind>(group, words, x, g, t, acc[t]);
        }
      }
      for (uint64_t t = 0; t < tokens; ++t) finish<kKind>(row, x, t, acc[t], y, out, o);
    }
    return;
  }
  // As in rows(): blocks of kTokenBlock tokens, each over all rows.
  std::vector<float> acc(8 * std::min(tokens, kTokenBlock));  // token t0 + i's lanes at 8i
  for (uint64_t t0 = 0; t0 < tokens; t0 += kTokenBlock) {
    const uint64_t n = std::min(kTokenBlock, tokens - t0);
    for (uint64_t o = row_begin; o < row_end; ++o) {
      const std::byte* row = w + o * row_bytes;
      for (uint64_t i = 0; i < n; ++i) _mm256_storeu_ps(&acc[8 * i], _mm256_setzero_ps());
      for (uint64_t g = 0; g < groups; ++g) {
        unpack_transposed<kKind>(row, g, group, words);
        for (uint64_t i = 0; i < n; ++i) {
          float* lanes = &acc[8 * i];
          _mm256_storeu_ps(lanes, accumulate_vnni<kKind>(group, words, x, g, t0 + i,
                                                         _mm256_loadu_ps(lanes)));
        }
      }
      for (uint64_t i = 0; i < n; ++i) {
        finish<kKind>(row, x, t0 + i, _mm256_loadu_ps(&acc[8 * i]), y, out, o);
      }
    }
  }
}

}  // namespace

FERRITE_AVX2 void matmul_sub_block_rows_avx2(SubBlocks kind, const std::byte* w,
                                             const SubBlockActivations& x, float* y, uint64_t out,
                                             uint64_t tokens, uint64_t row_begin,
                                             uint64_t row_end) {
  switch (kind) {
    case SubBlocks::kQ4_1: return rows<SubBlocks::kQ4_1>(w, x, y, out, tokens, row_begin, row_end);
    case SubBlocks::kQ5_0: return rows<SubBlocks::kQ5_0>(w, x, y, out, tokens, row_begin, row_end);
    case SubBlocks::kQ5_1: return rows<SubBlocks::kQ5_1>(w, x, y, out, tokens, row_begin, row_end);
    case SubBlocks::kQ4_K: return rows<SubBlocks::kQ4_K>(w, x, y, out, tokens, row_begin, row_end);
    case SubBlocks::kQ5_K: return rows<SubBlocks::kQ5_K>(w, x, y, out, tokens, row_begin, row_end);
    case SubBlocks::kQ6_K: return rows<SubBlocks::kQ6_K>(w, x, y, out, tokens, row_begin, row_end);
  }
}

FERRITE_VNNI void matmul_sub_block_rows_vnni(SubBlocks kind, const std::byte* w,
                                             const SubBlockActivations& x, float* y, uint64_t out,
                                             uint64_t tokens, uint64_t row_begin,
                                             uint64_t row_end) {
  switch (kind) {
    case SubBlocks::kQ4_1: return rows_vnni<SubBlocks::kQ4_1>(w, x, y, out, tokens, row_begin, row_end);
    case SubBlocks::kQ5_0: return rows_vnni<SubBlocks::kQ5_0>(w, x, y, out, tokens, row_begin, row_end);
    case SubBlocks::kQ5_1: return rows_vnni<SubBlocks::kQ5_1>(w, x, y, out, tokens, row_begin, row_end);
    case SubBlocks::kQ4_K: return rows_vnni<SubBlocks::kQ4_K>(w, x, y, out, tokens, row_begin, row_end);
    case SubBlocks::kQ5_K: return rows_vnni<SubBlocks::kQ5_K>(w, x, y, out, tokens, row_begin, row_end);
    case SubBlocks::kQ6_K: return rows_vnni<SubBlocks::kQ6_K>(w, x, y, out, tokens, row_begin, row_end);
  }
}

}  // namespace ferrite::fast
#else
#include "sub_block_kernels.h"
namespace ferrite::fast {
void matmul_sub_block_rows_avx2(SubBlocks kind, const std::byte* w, const SubBlockActivations& x,
                                float* y, uint64_t out, uint64_t tokens, uint64_t row_begin,
                                uint64_t row_end) {
  matmul_sub_block_rows_portable(kind, w, x, y, out, tokens, row_begin, row_end);
}
void matmul_sub_block_rows_vnni(SubBlocks kind, const std::byte* w, const SubBlockActivations& x,
                                float* y, uint64_t out, uint64_t tokens, uint64_t row_begin,
                                uint64_t row_end) {
  matmul_sub_block_rows_portable(kind, w, x, y, out, tokens, row_begin, row_end);
}
}  // namespace ferrite::fast
#endif
