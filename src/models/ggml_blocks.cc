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
  for (size_t b = 0; b < values.size(); b += format.values_per_block) {
    const float* x = values.data() + b;
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
