// ferrite/format/tensor_arg.h — tensors written on the command line.
//
// Contract: `parse_value_tensor_arg` reads `VALUE=DTYPE[d0,d1,...]` with an
// optional layout suffix:
//   x=f32[]                         scalar, contiguous
//   value.tokens=u32[32]            contiguous
//   x=f32[4,8]@strided[64,4]        byte strides, one per axis
//   x=f32[3,5]@blocked[4,4|1,0]     block extents | axis order
// Blocked padding is computed: Exact when every extent divides its block,
// else ZeroFill with the padded extents in axis order. No whitespace; numbers
// are plain decimal u64. The result is validated (ResolvedTensorSpec rules).
// Errors are kInvalidArgument, quote the whole argument and point at the
// offending part with its 1-based column, e.g.
//   tensor argument `x=f32[4,a]`: dimension 1 `a` is not an unsigned integer (column 9)
// `format_value_tensor_arg` writes the same text (padding left implicit), so
// parse(format(v, t)) == (v, t) for every valid t whose blocked padding is the
// computed one.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto arg, parse_value_tensor_arg("value.tokens=u32[32]"));
//   options.insert_tensor_spec(arg.first, arg.second);
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "ferrite/core/identity.h"
#include "ferrite/core/tensor_spec.h"

namespace ferrite {

Result<std::pair<ProgramValueId, ProgramTensorSpec>> parse_value_tensor_arg(std::string_view text);
std::string format_value_tensor_arg(const ProgramValueId& value, const ProgramTensorSpec& tensor);

}  // namespace ferrite
