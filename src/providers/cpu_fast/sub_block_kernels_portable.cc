// The portable definition of the sub-block products (f32_kernels.h,
// "Sub-block formats"). Built with -ffp-contract=off like f32_kernels_portable.
#include <algorithm>
#include <cmath>

#include "sub_block_kernels.h"

namespace ferrite::fast {

std::optional<SubBlocks> sub_blocks_of(const GgmlBlockFormat& format) {
  switch (format.ggml_type) {
    case 3: return SubBlocks::kQ4_1;
    case 6: return SubBlocks::kQ5_0;
    case 7: return SubBlocks::kQ5_1;
    case 12: return SubBlocks::kQ4_K;
    case 13: return SubBlocks::kQ5_K;
    case 14: return SubBlocks::kQ6_K;
    default: return std::nullopt;
  }
}

const GgmlBlockFormat& sub_block_format(SubBlocks kind) {
  switch (kind) {
    case SubBlocks::kQ4_1: return kGgmlQ4_1;
    case SubBlocks::kQ5_0: return kGgmlQ5_0;
    case SubBlocks::kQ5_1: return kGgmlQ5_1;
    case SubBlocks::kQ4_K: return kGgmlQ4_K;
    case SubBlocks::kQ5_K: return kGgmlQ5_K;
    case SubBlocks::kQ6_K: break;
  }
  return kGgmlQ6_K;
}

void quantize_sub_block_activations(const float* x, uint64_t token_begin, uint64_t token_end,
                                    const SubBlockActivations& out) {
  const uint64_t in = out.in();
  for (uint64_t t = token_begin; t < token_end; ++t) {
    int8_t* q = out.q(t);
    float* scale = out.scale(t);
    int16_t* sums = out.sums(t);
    for (uint64_t b = 0; b < in / 32; ++b) {
      scale[b] = quantize_activation_block(x + t * in + 32 * b, q + 32 * b);
      for (uint64_t h = 0; h < 2; ++h) {
        int32_t s = 0;
        for (uint64_t i = 0; i < 16; ++i) s += q[32 * b + 16 * h + i];
        sums[2 * b + h] = static_cast<int16_t>(s);
      }
    }
    int8_t* transposed = out.transposed(t);
    for (uint64_t g = 0; g < in / 256; ++g) {
      for (uint64_t k = 0; k < 8; ++k) {
        for (uint64_t j = 0; j < 8; ++j) {
          std::copy_n(q + 256 * g + 32 * j + 4 * k, 4, transposed + 256 * g + 32 * k + 4 * j);
        }
      }
    }
  }
}

namespace {

float f16(const std::byte* p) { return ggml_block_scale(p); }

}  // namespace

void accumulate_sub_blocks(SubBlocks kind, const std::byte* row, uint64_t first, uint64_t count,
                           const SubBlockActivations& x, uint64_t t, float* acc) {
  const GgmlBlockFormat& format = sub_block_format(kind);
  const uint64_t per_block = format.values_per_block / 32;
  uint8_t u[32];
  for (uint64_t a = first; a < first + count; ++a) {
    const std::byte* b = row + (a / per_block) * format.bytes_per_block;
    const uint64_t sub = a % per_block;  // sub-block within its block
    ggml_block_unsigned(format, b, sub, u);
    const int8_t* q = x.q(t) + 32 * a;
    const int32_t s_lo = x.sums(t)[2 * a], s_hi = x.sums(t)[2 * a + 1];
    int32_t dot_lo = 0, dot_hi = 0;
    for (int k = 0; k < 16; ++k) dot_lo += int32_t{u[k]} * q[k];
    for (int k = 16; k < 32; ++k) dot_hi += int32_t{u[k]} * q[k];
    int32_t p = 0, n = 0;
    float d = 0, m = 0;
    bool has_min = false;
    switch (kind) {
      case SubBlocks::kQ4_1:
      case SubBlocks::kQ5_1:
        p = dot_lo + dot_hi;
        n = s_lo + s_hi;
        d = f16(b);
        m = f16(b + 2);
        has_min = true;
        break;
      case SubBlocks::kQ5_0:
        p = dot_lo + dot_hi - 16 * (s_lo + s_hi);
        d = f16(b);
        break;
      case SubBlocks::kQ4_K:
      case SubBlocks::kQ5_K: {
        uint8_t sc, mn;
        ggml_k_scale_min(b + 4, static_cast<int>(sub), &sc, &mn);
        p = sc * (dot_lo + dot_hi);
        n = mn * (s_lo + s_hi);
        d = f16(b);
        m = -f16(b + 2);
        has_min = true;
        break;
      }
      case SubBlocks::kQ6_K: {
        const int32_t sc_lo = static_cast<int8_t>(b[192 + 2 * sub]);
        const int32_t sc_hi = static_cast<int8_t>(b[192 + 2 * sub + 1]);
        p = sc_lo * dot_lo + sc_hi * dot_hi - 32 * (sc_lo * s_lo + sc_hi * s_hi);
        d = f16(b + 208);
        break;
      }
    }
    const float da = x.scale(t)[a];
    float& lane = acc[a % 8];
    lane = std::fma(static_cast<float>(p), d * da, lane);
    if (has_min) lane = std::fma(static_cast<float>(n), m * da, lane);
  }
}

void matmul_sub_block_rows_portable(SubBlocks kind, const std::byte* w,
                                    const SubBlockActivations& x, float* y, uint64_t out,
                                    uint64_t tokens, uint64_t row_begin, uint64_t row_end) {
  const GgmlBlockFormat& format = sub_block_format(kind);
  const uint64_t subs = x.in() / 32;
  const uint64_t row_bytes = x.in() / format.values_per_block * format.bytes_per_block;
  for (uint64_t o = row_begin; o < row_end; ++o) {
    for (uint64_t t = 0; t < tokens; ++t) {
      float acc[8] = {};
      accumulate_sub_blocks(kind, w + o * row_bytes, 0, subs, x, t, acc);
      y[t * out + o] = reduce_sub_block_lanes(acc);
    }
  }
}

void matmul_sub_block_rows(Isa isa, SubBlocks kind, const std::byte* w,
                           const SubBlockActivations& x, float* y, uint64_t out, uint64_t tokens,
                           uint64_t row_begin, uint64_t row_end) {
  // AVX-512 with VNNI: its own kernel (it transposes each group of weights
  // once per row: with 1 token that costs what it saves — Q4_K measured
  // 43-71 ps per weight for both kernels in alternating runs — and with 16
  // tokens it measured 1.4x (Q4_K) to 1.7x (Q6_K) faster); otherwise the
  // AVX2 code. The same bits by contract.
  if (isa == Isa::kAvx512 && block_vnni_supported()) {
    return matmul_sub_block_rows_vnni(kind, w, x, y, out, tokens, row_begin, row_end);
  }
  if (isa != Isa::kPortable) {
    return matmul_sub_block_rows_avx2(kind, w, x, y, out, tokens, row_begin, row_end);
  }
  matmul_sub_block_rows_portable(kind, w, x, y, out, tokens, row_begin, row_end);
}

}  // namespace ferrite::fast
