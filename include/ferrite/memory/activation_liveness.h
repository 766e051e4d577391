// ferrite/memory/activation_liveness.h — when each activation buffer is live.
//
// Contract (issue: activation memory planning, item 1): positions are program
// node indices 0..N-1 in plan order. An activation is a program input or a
// node output that is neither a weight nor a state. Values joined by MustAlias
// edges (an output that must share an input's storage) form one *buffer*; a
// buffer that contains a weight or state value is not an activation buffer
// and is left out. A buffer is live over the half-open interval
// [lower, upper):
//   * lower = 0 if it holds a program input, else the first producer position;
//   * upper = N if it holds a program output or a retained completion value,
//     else 1 + the last position that produces or consumes any member.
// So an output written by node p never shares bytes with an input node p
// reads (both are live at p). Buffers are returned sorted by their
// representative (smallest) value id; every member list is sorted.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto buffers, activation_live_buffers(program, must_alias, retained));
//   buffers[0].values;          // {value.embed}
//   buffers[0].ranks;           // {program.find_value(value.embed)->rank}
//   buffers[0].lower;           // 0
#pragma once

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "ferrite/core/identity.h"
#include "ferrite/program/model_program.h"

namespace ferrite {

struct ActivationLiveBuffer {
  std::vector<ProgramValueId> values;  // sorted; values[0] represents the buffer
  // values[i]'s ModelProgram::ValueInfo::rank in the program it was made
  // from: what a pass over the buffers reads and writes by, with no look-up.
  std::vector<uint32_t> ranks;
  uint64_t lower = 0;
  uint64_t upper = 0;

  friend bool operator==(const ActivationLiveBuffer&, const ActivationLiveBuffer&) = default;
};

// `must_alias` lists (output, input) pairs whose storage must be identical.
Result<std::vector<ActivationLiveBuffer>> activation_live_buffers(
    const ModelProgram& program,
    const std::vector<std::pair<ProgramValueId, ProgramValueId>>& must_alias,
    const std::set<ProgramValueId>& retained);

}  // namespace ferrite
