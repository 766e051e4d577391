// ferrite/program/weight_layout.h — how a logical weight maps onto components.
//
// Contract (spec §3.4): a `PhysicalWeightLayout` is a tree whose leaves bind
// stored components (WeightComponentSpec ids) to a logical tensor:
//   * DenseLayout{component_id}: one Values component holds the tensor;
//   * QuantizedLayout{packed_values, scales, zero_points?, group_axis}: group
//     quantization along `group_axis`;
//   * BlockQuantizedLayout{blocks, block_axis}: block quantization along
//     `block_axis`;
//   * CompositeLayout{parts}: each part is a sub-tree covering the box
//     [logical_offsets, logical_offsets + extents) of the tensor; the parts
//     tile the tensor exactly.
// Only this subset of the reference tree is modelled. Not modelled yet: stored
// bindings with strided/tiled storage and padding, axis reshape/permutation,
// indexed (gather) layouts and expert stacks.
// Hard limits (checked by WeightSchema::validate, as errors): depth ≤ 16 (the
// root is depth 1) and ≤ 4096 nodes per tree (every layout node counts once).
// Trees are plain values: copyable (deep copy), comparable with ==.
//
// Example:
//   PhysicalWeightLayout split = CompositeLayout{{
//       CompositePart{DenseLayout{WeightId::literal("weight.wq.0")}, {0, 0}, {32, 64}},
//       CompositePart{DenseLayout{WeightId::literal("weight.wq.1")}, {32, 0}, {32, 64}}}};
//   component_ids_of(split);  // {weight.wq.0, weight.wq.1}
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "ferrite/core/identity.h"

namespace ferrite {

inline constexpr size_t kMaxWeightLayoutDepth = 16;
inline constexpr size_t kMaxWeightLayoutNodes = 4096;

// A heap-allocated value with value semantics: copying deep-copies, == compares
// the pointees. Used for recursion through a variant. A moved-from Box is
// empty; it may only be assigned to or destroyed.
template <class T>
class Box {
 public:
  template <class U = T>
    requires(!std::same_as<std::remove_cvref_t<U>, Box>) && std::constructible_from<T, U&&>
  Box(U&& value)  // NOLINT(google-explicit-constructor): implicit like the value it boxes
      : ptr_(std::make_unique<T>(std::forward<U>(value))) {}
  Box(const Box& other) : ptr_(other.ptr_ ? std::make_unique<T>(*other.ptr_) : nullptr) {}
  Box(Box&&) noexcept = default;
  Box& operator=(const Box& other) {
    if (this != &other) ptr_ = other.ptr_ ? std::make_unique<T>(*other.ptr_) : nullptr;
    return *this;
  }
  Box& operator=(Box&&) noexcept = default;
  ~Box() = default;

  T& operator*() { return *ptr_; }
  const T& operator*() const { return *ptr_; }
  T* operator->() { return ptr_.get(); }
  const T* operator->() const { return ptr_.get(); }

  friend bool operator==(const Box& a, const Box& b) {
    if (!a.ptr_ || !b.ptr_) return a.ptr_ == b.ptr_;
    return *a.ptr_ == *b.ptr_;
  }

 private:
  std::unique_ptr<T> ptr_;
};

struct PhysicalWeightLayout;

struct DenseLayout {
  WeightId component_id;
  friend bool operator==(const DenseLayout&, const DenseLayout&) = default;
};

struct QuantizedLayout {
  WeightId packed_values;
  WeightId scales;
  std::optional<WeightId> zero_points;
  uint32_t group_axis = 0;
  friend bool operator==(const QuantizedLayout&, const QuantizedLayout&) = default;
};

struct BlockQuantizedLayout {
  WeightId blocks;
  uint32_t block_axis = 0;
  friend bool operator==(const BlockQuantizedLayout&, const BlockQuantizedLayout&) = default;
};

struct CompositePart {
  Box<PhysicalWeightLayout> layout;
  std::vector<uint64_t> logical_offsets;  // one per logical axis
  std::vector<uint64_t> extents;          // one per logical axis, each > 0
  friend bool operator==(const CompositePart&, const CompositePart&) = default;
};

struct CompositeLayout {
  std::vector<CompositePart> parts;
  friend bool operator==(const CompositeLayout&, const CompositeLayout&) = default;
};

struct PhysicalWeightLayout {
  using Node = std::variant<DenseLayout, QuantizedLayout, BlockQuantizedLayout, CompositeLayout>;
  Node node;

  PhysicalWeightLayout(DenseLayout layout) : node(std::move(layout)) {}           // NOLINT
  PhysicalWeightLayout(QuantizedLayout layout) : node(std::move(layout)) {}       // NOLINT
  PhysicalWeightLayout(BlockQuantizedLayout layout) : node(std::move(layout)) {}  // NOLINT
  PhysicalWeightLayout(CompositeLayout layout) : node(std::move(layout)) {}       // NOLINT

  friend bool operator==(const PhysicalWeightLayout&, const PhysicalWeightLayout&) = default;
};

// Wire kind of a node: "dense", "quantized", "block_quantized", "composite".
std::string_view physical_layout_kind(const PhysicalWeightLayout& layout);

// Every component id the tree references (iterative; no depth limit applies).
std::set<WeightId> component_ids_of(const PhysicalWeightLayout& layout);

// Sorts composite parts by (logical_offsets, extents), recursively.
void normalize_physical_layout(PhysicalWeightLayout& layout);

}  // namespace ferrite
