// ferrite/program/weight_reference.h — a program's use of one logical weight.
//
// Contract: `WeightReference` binds the logical weight `weight_id` of the
// family's weight schema to the SSA value `value_id`, with the tensor the
// program sees. The weight schema checks (validate_program_references) that
// the dimensions and element type equal its logical tensor; layouts are not
// compared there.
//
// Example:
//   WeightReference{WeightId::literal("weight.wq"), ProgramValueId::literal("value.wq"),
//                   ProgramTensorSpec{{64, 64}, ElementType::kF32, ContiguousLayout{}}};
#pragma once

#include "ferrite/core/identity.h"
#include "ferrite/core/tensor_spec.h"

namespace ferrite {

struct WeightReference {
  WeightId weight_id;
  ProgramValueId value_id;
  ProgramTensorSpec tensor;

  friend bool operator==(const WeightReference&, const WeightReference&) = default;
};

}  // namespace ferrite
