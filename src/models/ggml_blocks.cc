#include "ferrite/models/ggml_blocks.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

namespace ferrite {

uint16_t f32_to_f16_bits(float value) {
  uint32_t x;
  std::memcpy(&x, &value, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (abs < 0x38800000u) {  // a half subnormal (or zero): round mantissa >> shift
    if (abs < 0x33000000u) return static_cast<uint16_t>(sign);  // below half the smallest
    const uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - (abs >> 23);  // 14..24
    const uint32_t half = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1), mid = 1u << (shift - 1);
    return static_cast<uint16_t>(sign | (half + ((rest > mid || (rest == mid && (half & 1u))) ? 1u : 0u)));
  }
  const uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);  // nearest even on bit 13
  return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
}

namespace {

uint8_t byte_at(const std::byte* p, uint64_t i) { return static_cast<uint8_t>(p[i]); }
float f16_at(const std::byte* p, uint64_t i) { return f16_bits_to_f32(ggml_block_scale_bits(p + i)); }

// Byte offsets of the fields of the 32-value formats: scale d, min m (Q4_1 /
// Q5_1), high bits qh (Q5_*), nibbles qs.
struct SmallLayout {
  int m, qh, qs;
};
SmallLayout small_layout(uint32_t type) {
  switch (type) {
    case 3: return {2, -1, 4};   // Q4_1
    case 6: return {-1, 2, 6};   // Q5_0
    case 7: return {2, 4, 8};    // Q5_1
    default: return {-1, -1, 2};  // Q4_0
  }
}

}  // namespace

void ggml_block_unsigned(const GgmlBlockFormat& format, const std::byte* block, uint64_t sub,
                         uint8_t* u) {
  switch (format.ggml_type) {
    case 8:  // Q8_0
      for (int i = 0; i < 32; ++i) u[i] = byte_at(block, 2 + i) ^ 0x80;
      return;
    case 12:  // Q4_K
    case 13: {  // Q5_K
      const bool q5 = format.ggml_type == 13;
      const std::byte* qs = block + (q5 ? 48 : 16) + 32 * (sub / 2);
      const int shift = sub % 2 == 0 ? 0 : 4;
      for (int l = 0; l < 32; ++l) {
        u[l] = static_cast<uint8_t>((byte_at(qs, l) >> shift) & 15);
        if (q5) u[l] = static_cast<uint8_t>(u[l] | (((byte_at(block, 16 + l) >> sub) & 1) << 4));
      }
      return;
    }
    case 14: {  // Q6_K
      const uint64_t h = sub / 4, v0 = 32 * (sub % 4);
      const int nibble_shift = v0 >= 64 ? 4 : 0, high_shift = static_cast<int>(2 * (sub % 4));
      for (uint64_t l = 0; l < 32; ++l) {
        const uint64_t v = v0 + l;
        const int low = (byte_at(block, 64 * h + v % 64) >> nibble_shift) & 15;
        const int high = (byte_at(block, 128 + 32 * h + l) >> high_shift) & 3;
        u[l] = static_cast<uint8_t>(low | (high << 4));
      }
      return;
    }
    default: {  // Q4_0, Q4_1, Q5_0, Q5_1
      const SmallLayout layout = small_layout(format.ggml_type);
      uint32_t qh = 0;
      if (layout.qh >= 0) {
        for (int k = 0; k < 4; ++k) qh |= uint32_t{byte_at(block, layout.qh + k)} << (8 * k);
      }
      for (int i = 0; i < 16; ++i) {
        const uint8_t byte = byte_at(block, layout.qs + i);
        u[i] = static_cast<uint8_t>((byte & 15) | (((qh >> i) & 1) << 4));
        u[i + 16] = static_cast<uint8_t>((byte >> 4) | (((qh >> (i + 16)) & 1) << 4));
      }
      return;
    }
  }
}

void dequantize_ggml_block_other(const GgmlBlockFormat& format, const std::byte* block,
                                 float* out) {
  uint8_t u[32];
  const uint32_t type = format.ggml_type;
  for (uint64_t sub = 0; sub < format.values_per_block / 32; ++sub) {
    ggml_block_unsigned(format, block, sub, u);
    float* y = out + 32 * sub;
    if (type == kGgmlQ4_K.ggml_type || type == kGgmlQ5_K.ggml_type) {
      uint8_t sc, mn;
      ggml_k_scale_min(block + 4, static_cast<int>(sub), &sc, &mn);
      const float d = f16_at(block, 0) * sc, m = f16_at(block, 2) * mn;
      for (int i = 0; i < 32; ++i) y[i] = d * static_cast<float>(u[i]) - m;
    } else if (type == kGgmlQ6_K.ggml_type) {
      const float d = f16_at(block, 208);
      for (int i = 0; i < 32; ++i) {
        const auto sc = static_cast<int8_t>(block[192 + 2 * sub + i / 16]);
        y[i] = d * static_cast<float>(sc) * static_cast<float>(int{u[i]} - 32);
      }
    } else if (type == kGgmlQ5_0.ggml_type || type == kGgmlQ4_0.ggml_type ||
               type == kGgmlQ8_0.ggml_type) {
      const int offset = type == kGgmlQ5_0.ggml_type ? 16 : type == kGgmlQ4_0.ggml_type ? 8 : 128;
      const float d = f16_at(block, 0);
      for (int i = 0; i < 32; ++i) y[i] = static_cast<float>(int{u[i]} - offset) * d;
    } else {  // Q4_1, Q5_1
      const float d = f16_at(block, 0), m = f16_at(block, 2);
      for (int i = 0; i < 32; ++i) y[i] = static_cast<float>(u[i]) * d + m;
    }
  }
}

namespace {

// Appends the f16 bits of `value`; false when they are not finite.
bool put_f16(std::vector<std::byte>& out, size_t at, float value, float* stored) {
  const uint16_t bits = f32_to_f16_bits(value);
  out[at] = static_cast<std::byte>(bits & 0xff);
  out[at + 1] = static_cast<std::byte>(bits >> 8);
  *stored = f16_bits_to_f32(bits);
  return std::isfinite(*stored);
}

int clamp_round(float v, int lo, int hi) {
  const long r = std::lround(v);
  return static_cast<int>(std::clamp<long>(r, lo, hi));
}

// One block of a format other than Q8_0 / Q4_0 into `b` (zeroed,
// bytes_per_block); false when a scale overflows f16.
bool quantize_other_block(const GgmlBlockFormat& format, const float* x, std::byte* b) {
  std::vector<std::byte> tmp(format.bytes_per_block);
  uint8_t u[256] = {};
  const uint32_t type = format.ggml_type;
  bool ok = true;
  if (type == kGgmlQ4_1.ggml_type || type == kGgmlQ5_1.ggml_type) {
    const int nmax = type == kGgmlQ4_1.ggml_type ? 15 : 31;
    const float lo = *std::min_element(x, x + 32), hi = *std::max_element(x, x + 32);
    float d, m;
    ok = put_f16(tmp, 0, (hi - lo) / static_cast<float>(nmax), &d) && put_f16(tmp, 2, lo, &m);
    for (int i = 0; i < 32; ++i) u[i] = d > 0 ? static_cast<uint8_t>(clamp_round((x[i] - m) / d, 0, nmax)) : 0;
  } else if (type == kGgmlQ5_0.ggml_type) {
    float amax = 0, extreme = 0;
    for (int i = 0; i < 32; ++i) {
      if (std::fabs(x[i]) > amax) {
        amax = std::fabs(x[i]);
        extreme = x[i];
      }
    }
    const float d = extreme / -16.0f, inverse = d != 0 ? 1.0f / d : 0.0f;
    float stored;
    ok = put_f16(tmp, 0, d, &stored);
    for (int i = 0; i < 32; ++i) {
      u[i] = static_cast<uint8_t>(std::min(31, static_cast<int>(x[i] * inverse + 16.5f)));
    }
  } else if (type == kGgmlQ4_K.ggml_type || type == kGgmlQ5_K.ggml_type) {
    const int nmax = type == kGgmlQ4_K.ggml_type ? 15 : 31;
    float scale[8], minv[8], top_scale = 0, top_min = 0;
    for (int j = 0; j < 8; ++j) {
      const float lo = std::min(0.0f, *std::min_element(x + 32 * j, x + 32 * j + 32));
      const float hi = *std::max_element(x + 32 * j, x + 32 * j + 32);
      scale[j] = (hi - lo) / static_cast<float>(nmax);
      minv[j] = -lo;
      top_scale = std::max(top_scale, scale[j]);
      top_min = std::max(top_min, minv[j]);
    }
    float d, dmin;
    ok = put_f16(tmp, 0, top_scale / 63.0f, &d) && put_f16(tmp, 2, top_min / 63.0f, &dmin);
    uint8_t sc[8], mn[8];
    for (int j = 0; j < 8; ++j) {
      sc[j] = d > 0 ? static_cast<uint8_t>(clamp_round(scale[j] / d, 0, 63)) : 0;
      mn[j] = dmin > 0 ? static_cast<uint8_t>(clamp_round(minv[j] / dmin, 0, 63)) : 0;
      const float d1 = d * sc[j], m1 = dmin * mn[j];
      for (int l = 0; l < 32; ++l) {
        const int i = 32 * j + l;
        u[i] = d1 > 0 ? static_cast<uint8_t>(clamp_round((x[i] + m1) / d1, 0, nmax)) : 0;
      }
    }
    for (int j = 0; j < 4; ++j) {
      tmp[4 + j] = static_cast<std::byte>((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
      tmp[4 + j + 4] = static_cast<std::byte>((mn[j] & 63) | ((mn[j + 4] >> 4) << 6));
      tmp[4 + j + 8] = static_cast<std::byte>((sc[j + 4] & 15) | ((mn[j + 4] & 15) << 4));
    }
  } else {  // Q6_K
    float scale[16], top = 0;
    for (int g = 0; g < 16; ++g) {
      float amax = 0, extreme = 0;
      for (int i = 16 * g; i < 16 * g + 16; ++i) {
        if (std::fabs(x[i]) > amax) {
          amax = std::fabs(x[i]);
          extreme = x[i];
        }
      }
      scale[g] = extreme / -32.0f;
      top = std::max(top, std::fabs(scale[g]));
    }
    float d;
    ok = put_f16(tmp, 208, top / 127.0f, &d);
    for (int g = 0; g < 16; ++g) {
      const int sc = d > 0 ? clamp_round(scale[g] / d, -127, 127) : 0;
      tmp[192 + g] = static_cast<std::byte>(static_cast<int8_t>(sc));
      const float s = d * static_cast<float>(sc);
      for (int i = 16 * g; i < 16 * g + 16; ++i) {
        u[i] = static_cast<uint8_t>((s != 0 ? clamp_round(x[i] / s, -32, 31) : 0) + 32);
      }
    }
  }
  // Pack the integers.
  auto set = [&](size_t at, int bits) { tmp[at] = static_cast<std::byte>(static_cast<uint8_t>(tmp[at]) | bits); };
  if (format.values_per_block == 32) {
    const SmallLayout layout = small_layout(type);
    for (int i = 0; i < 16; ++i) {
      set(layout.qs + i, (u[i] & 15) | ((u[i + 16] & 15) << 4));
      if (layout.qh >= 0) {
        set(layout.qh + i / 8, ((u[i] >> 4) & 1) << (i % 8));
        set(layout.qh + 2 + i / 8, ((u[i + 16] >> 4) & 1) << (i % 8));
      }
    }
  } else if (type == kGgmlQ6_K.ggml_type) {
    for (int h = 0; h < 2; ++h) {
      for (int v = 0; v < 128; ++v) {
        const int value = u[128 * h + v];
        set(64 * h + v % 64, (value & 15) << (v >= 64 ? 4 : 0));
        set(128 + 32 * h + v % 32, (value >> 4) << (2 * (v / 32)));
      }
    }
  } else {
    const bool q5 = type == kGgmlQ5_K.ggml_type;
    for (int j = 0; j < 8; ++j) {
      for (int l = 0; l < 32; ++l) {
        const int value = u[32 * j + l];
        set((q5 ? 48 : 16) + 32 * (j / 2) + l, (value & 15) << (j % 2 == 0 ? 0 : 4));
        if (q5) set(16 + l, ((value >> 4) & 1) << j);
      }
    }
  }
  std::copy(tmp.begin(), tmp.end(), b);
  return ok;
}

}  // namespace

Result<std::vector<std::byte>> quantize_ggml_blocks(const GgmlBlockFormat& format,
                                                    std::span<const float> values) {
  if (values.size() % format.values_per_block != 0) {
    return make_error(ErrorCode::kInvalidArgument, "{} values are not whole {} blocks of {}",
                      values.size(), format.name, format.values_per_block);
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) {
      return make_error(ErrorCode::kInvalidArgument,
                        "value {} is not finite ({}); {} blocks need finite values", i, values[i],
                        format.name);
    }
  }
  std::vector<std::byte> out;
  out.reserve(values.size() / format.values_per_block * format.bytes_per_block);
  const bool other = format.ggml_type != kGgmlQ8_0.ggml_type &&
                     format.ggml_type != kGgmlQ4_0.ggml_type;
  for (size_t b = 0; b < values.size(); b += format.values_per_block) {
    const float* x = values.data() + b;
    if (other) {
      const size_t at = out.size();
      out.resize(at + format.bytes_per_block);
      if (!quantize_other_block(format, x, out.data() + at)) {
        return make_error(ErrorCode::kInvalidArgument,
                          "a {} scale of the block at value {} overflows f16", format.name, b);
      }
      continue;
    }
    float amax = 0, extreme = 0;
    for (size_t i = 0; i < 32; ++i) {
      if (std::fabs(x[i]) > amax) {
        amax = std::fabs(x[i]);
        extreme = x[i];
      }
    }
    const bool q8 = format.ggml_type == kGgmlQ8_0.ggml_type;
    const float d = q8 ? amax / 127.0f : extreme / -8.0f;
    const float inverse = d != 0 ? 1.0f / d : 0.0f;
    const uint16_t scale = f32_to_f16_bits(d);
    out.push_back(static_cast<std::byte>(scale & 0xff));
    out.push_back(static_cast<std::byte>(scale >> 8));
    if (q8) {
      for (size_t i = 0; i < 32; ++i) {
        out.push_back(static_cast<std::byte>(static_cast<int8_t>(std::lround(x[i] * inverse))));
      }
    } else {
      auto q = [&](size_t i) {
        return static_cast<uint8_t>(std::min(15, static_cast<int>(x[i] * inverse + 8.5f)));
      };
      for (size_t i = 0; i < 16; ++i) out.push_back(static_cast<std::byte>(q(i) | (q(i + 16) << 4)));
    }
  }
  return out;
}

}  // namespace ferrite
