// ferrite/core/tensor_json.h — canonical JSON for tensors and contracts.
//
// Contract: these writers produce the exact shapes the interchange readers in
// ferrite/format accept, and the shapes that fingerprints hash. Shapes:
//   tensor:     {"dimensions":[4,8],"element_type":"f32","layout":LAYOUT}
//   LAYOUT:     "contiguous" | {"strided":[16,4]} |
//               {"blocked":{"block":[4,4],"axis_order":[1,0],"padding":PADDING}}
//   PADDING:    "exact" | {"zero_fill":[8,4]}
//   contract:   {"dimensions":[DIM...],"element_types":["f32"],"layouts":[LC...],
//                "access":"read","alias":ALIAS}
//   DIM:        4 (exact) | "tokens" (symbol) | {"min":1,"max":8} (inclusive range)
//   LC:         "contiguous" | {"strided":[16,"s"]} (number = exact bytes, string = symbol) |
//               {"blocked":{"block":[4],"axis_order":[0]}}
//   ALIAS:      "no_alias" | {"may_alias":0} | {"must_alias":0}
//
// Example:
//   nlohmann::json j = tensor_spec_to_json(*ResolvedTensorSpec::create({4}, ElementType::kF32, {}));
//   // {"dimensions":[4],"element_type":"f32","layout":"contiguous"}
#pragma once

#include <nlohmann/json.hpp>

#include "ferrite/core/tensor_contract.h"
#include "ferrite/core/tensor_spec.h"

namespace ferrite {

nlohmann::json layout_to_json(const ResolvedTensorLayout& layout);
nlohmann::json tensor_spec_to_json(const ResolvedTensorSpec& tensor);
nlohmann::json tensor_spec_to_json(const ProgramTensorSpec& tensor);
nlohmann::json dimension_constraint_to_json(const DimensionConstraint& constraint);
nlohmann::json layout_constraint_to_json(const LayoutConstraint& constraint);
nlohmann::json alias_policy_to_json(const AliasPolicy& alias);
nlohmann::json tensor_contract_to_json(const TensorContract& contract);

}  // namespace ferrite
