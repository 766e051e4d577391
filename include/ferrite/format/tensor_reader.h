// ferrite/format/tensor_reader.h — readers for tensors, layouts and contracts.
//
// Contract: each reader accepts exactly the shape the matching writer in
// ferrite/core/tensor_json.h produces, so `read(write(x)) == x`:
//   tensor:   {"dimensions":[4,8],"element_type":"f32","layout":LAYOUT}
//   LAYOUT:   "contiguous" | {"strided":[16,4]} |
//             {"blocked":{"block":[4,4],"axis_order":[1,0],"padding":"exact"|{"zero_fill":[8,4]}}}
//   contract: {"dimensions":[DIM...],"element_types":["f32"],"layouts":[LC...],
//              "access":"read"|"write"|"read_write","alias":ALIAS}
//   DIM:      4 | "T" | {"min":1,"max":8}
//   LC:       "contiguous" | {"strided":[16,"s"]} | {"blocked":{"block":[4],"axis_order":[0]}}
//   ALIAS:    "no_alias" | {"may_alias":0} | {"must_alias":0}
// Malformed input (unknown/missing fields, wrong types, unknown wire names,
// duplicate element types) is kSerialization naming the JSON path.
// `read_program_tensor_spec` does not apply the ResolvedTensorSpec rules (the
// program that owns the tensor does, and reports InvalidModelConfig);
// `read_tensor_contract` runs TensorContract::create, whose rejections keep
// their code and get the path as a prefix.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(ProgramTensorSpec t, read_program_tensor_spec(JsonCursor(j, "$.tensor")));
#pragma once

#include "ferrite/core/element_type.h"
#include "ferrite/core/tensor_contract.h"
#include "ferrite/core/tensor_spec.h"
#include "ferrite/core/json_reader.h"

namespace ferrite {

Result<ElementType> read_element_type(const JsonCursor& cursor);
Result<ResolvedTensorLayout> read_tensor_layout(const JsonCursor& cursor);
Result<ProgramTensorSpec> read_program_tensor_spec(const JsonCursor& cursor);
// read_program_tensor_spec + ResolvedTensorSpec::create (rejections keep their code).
Result<ResolvedTensorSpec> read_resolved_tensor_spec(const JsonCursor& cursor);

Result<DimensionConstraint> read_dimension_constraint(const JsonCursor& cursor);
Result<LayoutConstraint> read_layout_constraint(const JsonCursor& cursor);
Result<TensorAccess> read_tensor_access(const JsonCursor& cursor);
Result<AliasPolicy> read_alias_policy(const JsonCursor& cursor);
Result<TensorContract> read_tensor_contract(const JsonCursor& cursor);

}  // namespace ferrite
