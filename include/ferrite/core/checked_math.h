// ferrite/core/checked_math.h — 64-bit arithmetic that reports overflow.
//
// Contract: every size, offset and product in Ferrite goes through these
// helpers. The `std::optional` forms return nullopt on overflow (or on an
// invalid alignment); callers turn that into an error that names what
// overflowed. Nothing here wraps silently.
//
// Example:
//   auto bytes = checked_product(dims);          // Π dims, or nullopt
//   if (!bytes) {
//     return make_error(ErrorCode::kInvalidExecutionPlan, "tensor `x` byte size overflows u64");
//   }
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace ferrite {

inline std::optional<uint64_t> checked_add(uint64_t a, uint64_t b) {
  uint64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

inline std::optional<uint64_t> checked_sub(uint64_t a, uint64_t b) {
  if (b > a) return std::nullopt;
  return a - b;
}

inline std::optional<uint64_t> checked_mul(uint64_t a, uint64_t b) {
  uint64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// Product of all values (1 for an empty span), or nullopt on overflow.
inline std::optional<uint64_t> checked_product(std::span<const uint64_t> values) {
  uint64_t out = 1;
  for (uint64_t v : values) {
    if (__builtin_mul_overflow(out, v, &out)) return std::nullopt;
  }
  return out;
}

inline bool is_power_of_two(uint64_t value) { return value != 0 && (value & (value - 1)) == 0; }

// Rounds `value` up to a multiple of the power-of-two `alignment`.
// nullopt if the alignment is zero / not a power of two, or on overflow.
inline std::optional<uint64_t> checked_align_up(uint64_t value, uint64_t alignment) {
  if (!is_power_of_two(alignment)) return std::nullopt;
  auto sum = checked_add(value, alignment - 1);
  if (!sum) return std::nullopt;
  return *sum & ~(alignment - 1);
}

// Rounds `value` up to a multiple of any non-zero `multiple`.
inline std::optional<uint64_t> checked_round_up(uint64_t value, uint64_t multiple) {
  if (multiple == 0) return std::nullopt;
  // Divide first so a result that fits never reports overflow.
  const uint64_t quotient = value / multiple + (value % multiple != 0 ? 1 : 0);
  return checked_mul(quotient, multiple);
}

}  // namespace ferrite
