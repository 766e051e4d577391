#include "f32_kernels.h"

#include "ferrite/core/enum_names.h"

namespace ferrite::fast {

constexpr EnumNames<Isa, 3> kIsaNames{
    "instruction set",
    {{{Isa::kPortable, "portable"}, {Isa::kAvx2, "avx2"}, {Isa::kAvx512, "avx512"}}}};
FERRITE_ENUM_NAME_FUNCTION(kIsaNames, Isa::kAvx512, isa_name)

std::optional<Isa> parse_isa(std::string_view name) { return kIsaNames.find(name); }

bool isa_supported(Isa isa) {
#if defined(__x86_64__) || defined(__i386__)
  switch (isa) {
    case Isa::kPortable: return true;
    case Isa::kAvx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Isa::kAvx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512vl") && isa_supported(Isa::kAvx2);
      // (F16C, used for block scales, predates AVX2 on every x86 CPU with AVX-512.)
  }
  return false;
#else
  return isa == Isa::kPortable;
#endif
}

Isa best_isa() {
  if (isa_supported(Isa::kAvx512)) return Isa::kAvx512;
  if (isa_supported(Isa::kAvx2)) return Isa::kAvx2;
  return Isa::kPortable;
}

float dot(Isa isa, const float* a, const float* b, uint64_t n) {
  switch (isa) {
    case Isa::kAvx512: return dot_avx512(a, b, n);
    case Isa::kAvx2: return dot_avx2(a, b, n);
    case Isa::kPortable: break;
  }
  return dot_portable(a, b, n);
}

void matmul_rows(Isa isa, const float* w, const float* x, float* y, uint64_t in, uint64_t out,
                 uint64_t tokens, uint64_t row_begin, uint64_t row_end) {
  switch (isa) {
    case Isa::kAvx512: return matmul_rows_avx512(w, x, y, in, out, tokens, row_begin, row_end);
    case Isa::kAvx2: return matmul_rows_avx2(w, x, y, in, out, tokens, row_begin, row_end);
    case Isa::kPortable: break;
  }
  matmul_rows_portable(w, x, y, in, out, tokens, row_begin, row_end);
}

void axpy(Isa isa, float s, const float* x, float* y, uint64_t n) {
  switch (isa) {
    case Isa::kAvx512: return axpy_avx512(s, x, y, n);
    case Isa::kAvx2: return axpy_avx2(s, x, y, n);
    case Isa::kPortable: break;
  }
  axpy_portable(s, x, y, n);
}

bool block_vnni_supported() {
#if defined(__x86_64__)
  static const bool supported = isa_supported(Isa::kAvx512) &&
                                __builtin_cpu_supports("avx512bw") &&
                                __builtin_cpu_supports("avx512vnni");
  return supported;
#else
  return false;
#endif
}

void matmul_block_rows(Isa isa, Blocks blocks, const std::byte* w, const QuantizedActivations& x,
                       float* y, uint64_t out, uint64_t tokens, uint64_t row_begin,
                       uint64_t row_end, std::byte* unpack) {
  // AVX-512 without VNNI, AVX2 and portable: the portable definition (the
  // same bits by contract).
  if (isa == Isa::kAvx512 && block_vnni_supported()) {
    return matmul_block_rows_avx512(blocks, w, x, y, out, tokens, row_begin, row_end, unpack);
  }
  matmul_block_rows_portable(blocks, w, x, y, out, tokens, row_begin, row_end);
}

}  // namespace ferrite::fast
