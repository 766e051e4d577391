// src/program/weight_layout_validation.h — private: the weight-schema rules
// shared by WeightSchema::validate and ResolvedWeightBinding::validate_logical.
//
// Contract: the caller supplies how a failed rule becomes an error (`fail`
// gets a field path and a reason), so the schema reports InvalidModelConfig
// and the binding InvalidExecutionPlan with the same rule text. The rules
// themselves are documented in ferrite/program/weight_schema.h.
//
// Example:
//   LayoutChecker checker{fail, components, bound_by};
//   FERRITE_RETURN_IF_ERROR(checker.check_tree(tensor.id, field, tensor.physical_layout,
//                                              tensor.dimensions, tensor.logical_element_type));
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "ferrite/core/element_type.h"
#include "ferrite/core/identity.h"
#include "ferrite/core/status.h"
#include "ferrite/program/weight_component.h"
#include "ferrite/program/weight_layout.h"

namespace ferrite::weight_internal {

// Turns (field, reason) into the caller's error.
using FailFn = std::function<Error(std::string_view field, std::string_view reason)>;

// Component rules that need no other component: ≥ 1 dimension, none zero,
// encoding parameters, role/encoding compatibility, physical size fits u64.
// `field` is the component's field path, e.g. "weight_schema.components[c]".
Result<void> check_component_shape(const FailFn& fail, const std::string& field,
                                   const WeightComponentSpec& component);

// Depth ≤ kMaxWeightLayoutDepth and ≤ kMaxWeightLayoutNodes nodes, iteratively
// (safe on arbitrarily deep trees).
Result<void> check_layout_limits(const FailFn& fail, const std::string& field,
                                 const PhysicalWeightLayout& layout);

// Validates layout trees against logical tensors; records which tensor bound
// each component so a second binding anywhere is an error.
class LayoutChecker {
 public:
  LayoutChecker(const FailFn& fail, const std::map<WeightId, const WeightComponentSpec*>& components,
                std::map<WeightId, WeightId>& bound_by)
      : fail_(fail), components_(components), bound_by_(bound_by) {}

  // Runs check_layout_limits, then the per-node rules.
  Result<void> check_tree(const WeightId& tensor_id, const std::string& field,
                          const PhysicalWeightLayout& layout, std::span<const uint64_t> dimensions,
                          ElementType logical_element_type);

 private:
  Result<void> check_node(const std::string& field, const PhysicalWeightLayout& layout,
                          std::span<const uint64_t> dimensions, ElementType dtype);
  Result<void> check_dense(const std::string& field, const DenseLayout& layout,
                           std::span<const uint64_t> dimensions, uint64_t count, ElementType dtype);
  Result<void> check_quantized(const std::string& field, const QuantizedLayout& layout,
                               std::span<const uint64_t> dimensions, uint64_t count);
  Result<void> check_block_quantized(const std::string& field, const BlockQuantizedLayout& layout,
                                     std::span<const uint64_t> dimensions, uint64_t count);
  Result<void> check_composite(const std::string& field, const CompositeLayout& layout,
                               std::span<const uint64_t> dimensions, uint64_t count,
                               ElementType dtype);
  // Looks up `id` and binds it to the current tensor.
  Result<const WeightComponentSpec*> bind(const std::string& field, const WeightId& id);

  const FailFn& fail_;
  const std::map<WeightId, const WeightComponentSpec*>& components_;
  std::map<WeightId, WeightId>& bound_by_;
  const WeightId* tensor_id_ = nullptr;
};

}  // namespace ferrite::weight_internal
