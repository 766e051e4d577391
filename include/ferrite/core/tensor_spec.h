// ferrite/core/tensor_spec.h — concrete tensors: dimensions, dtype, layout.
//
// Contract: a `ResolvedTensorSpec` is valid by construction (spec §2.3):
//   * every dimension > 0 (rank 0 is a scalar);
//   * Strided: one byte stride per axis, each > 0;
//   * Blocked: one block extent per axis, each > 0, `axis_order` a permutation
//     of 0..rank; padding Exact requires every extent divisible by its block;
//     ZeroFill lists the padded extents in physical (axis_order) order and at
//     least one axis must actually be padded;
//   * the byte size (and, for strided tensors, the byte span) fits in u64.
// `minimum_storage_bytes()` is then infallible:
//   Contiguous: elem × Π dims;  Blocked: elem × Π stored dims;
//   Strided: elem + Σ (dim[a]-1) × stride[a]  (first byte to end of last element).
//
// Example:
//   auto t = ResolvedTensorSpec::create({3, 5}, ElementType::kF32,
//       BlockedLayout{{4, 4}, {1, 0}, BlockedPaddingZeroFill{{8, 4}}});
//   t->minimum_storage_bytes();  // 128
#pragma once

#include <compare>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ferrite/core/element_type.h"
#include "ferrite/core/status.h"

namespace ferrite {

struct BlockedPaddingExact {
  friend auto operator<=>(const BlockedPaddingExact&, const BlockedPaddingExact&) = default;
};
struct BlockedPaddingZeroFill {
  std::vector<uint64_t> physical_dimensions;  // stored extents, in axis_order order
  friend auto operator<=>(const BlockedPaddingZeroFill&, const BlockedPaddingZeroFill&) = default;
};
using BlockedTensorPadding = std::variant<BlockedPaddingExact, BlockedPaddingZeroFill>;

struct ContiguousLayout {
  friend auto operator<=>(const ContiguousLayout&, const ContiguousLayout&) = default;
};
struct StridedLayout {
  std::vector<uint64_t> byte_strides;  // one per axis, in bytes
  friend auto operator<=>(const StridedLayout&, const StridedLayout&) = default;
};
struct BlockedLayout {
  std::vector<uint64_t> block;       // tile extent per logical axis
  std::vector<uint32_t> axis_order;  // axis_order[i] = logical axis stored at physical position i
  BlockedTensorPadding padding;
  friend auto operator<=>(const BlockedLayout&, const BlockedLayout&) = default;
};
using ResolvedTensorLayout = std::variant<ContiguousLayout, StridedLayout, BlockedLayout>;
// True when `order` holds each axis 0..rank-1 exactly once (a BlockedLayout's axis_order).
bool is_axis_permutation(const std::vector<uint32_t>& order, size_t rank);

// Seed-style debug rendering, e.g. "Strided { byte_strides: [16] }".
std::string describe_layout(const ResolvedTensorLayout& layout);
// Short human rendering, e.g. "contiguous", "strided[16,4]", "blocked[4,4|1,0] zero-fill[8,4]".
std::string layout_short_name(const ResolvedTensorLayout& layout);

class ResolvedTensorSpec {
 public:
  static Result<ResolvedTensorSpec> create(std::vector<uint64_t> dimensions,
                                           ElementType element_type,
                                           ResolvedTensorLayout layout);

  // Immutable, so copies share one state (a reference count, no allocation:
  // a compile copies each value's tensor into every binding of it, round
  // after round). A move takes the state, not even a reference count: each
  // binding is moved through a Result and into its node's vector, and
  // those moves, when they copied, were about two fifths of a compile's
  // reference-counting cycles (docs/performance.md, step 27). Hazard: a
  // moved-from tensor holds no state and may only be destroyed or assigned
  // to (clang-tidy's bugprone-use-after-move finds a use).
  ResolvedTensorSpec(const ResolvedTensorSpec&) = default;
  ResolvedTensorSpec& operator=(const ResolvedTensorSpec&) = default;
  ResolvedTensorSpec(ResolvedTensorSpec&&) noexcept = default;
  ResolvedTensorSpec& operator=(ResolvedTensorSpec&&) noexcept = default;

  const std::vector<uint64_t>& dimensions() const { return state_->dimensions; }
  ElementType element_type() const { return state_->element_type; }
  const ResolvedTensorLayout& layout() const { return state_->layout; }
  size_t rank() const { return state_->dimensions.size(); }
  uint64_t minimum_storage_bytes() const { return state_->minimum_storage_bytes; }
  bool is_contiguous() const { return std::holds_alternative<ContiguousLayout>(state_->layout); }

  // "f32[3,5] blocked[4,4|1,0] zero-fill[8,4]" — readable, stable.
  std::string to_string() const;

  friend bool operator==(const ResolvedTensorSpec& a, const ResolvedTensorSpec& b) {
    return a.state_ == b.state_ ||
           (a.state_->dimensions == b.state_->dimensions &&
            a.state_->element_type == b.state_->element_type && a.state_->layout == b.state_->layout);
  }

 private:
  struct State {
    std::vector<uint64_t> dimensions;
    ElementType element_type;
    ResolvedTensorLayout layout;
    uint64_t minimum_storage_bytes;
  };
  explicit ResolvedTensorSpec(std::shared_ptr<const State> state) : state_(std::move(state)) {}

  std::shared_ptr<const State> state_;  // never null but when moved from
};

// A tensor as written in a program (weights, states) or in compile options.
// Plain data; `validate`/`resolve` apply the ResolvedTensorSpec rules.
struct ProgramTensorSpec {
  std::vector<uint64_t> dimensions;
  ElementType element_type = ElementType::kF32;
  ResolvedTensorLayout layout = ContiguousLayout{};

  // Error "`{field}` is invalid: {inner reason}".
  Result<void> validate(std::string_view field) const;
  Result<ResolvedTensorSpec> resolve() const;
  // Dense byte length Π dims × elem size (ignores layout, as the seed does).
  Result<uint64_t> byte_len() const;

  friend bool operator==(const ProgramTensorSpec&, const ProgramTensorSpec&) = default;
};

// True when `spec.resolve()` would give a tensor equal to `tensor` (same
// dimensions, element type and layout; `tensor` being valid, so would the
// spec be): the check without building a tensor.
inline bool resolves_to(const ProgramTensorSpec& spec, const ResolvedTensorSpec& tensor) {
  return spec.element_type == tensor.element_type() && spec.dimensions == tensor.dimensions() &&
         spec.layout == tensor.layout();
}

}  // namespace ferrite
