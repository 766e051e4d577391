#include "ferrite/memory/activation_liveness.h"

#include <algorithm>

#include <fmt/format.h>

#include "ferrite/core/disjoint_indices.h"

namespace ferrite {
Result<std::vector<ActivationLiveBuffer>> activation_live_buffers(
    const ModelProgram& program,
    const std::vector<std::pair<ProgramValueId, ProgramValueId>>& must_alias,
    const std::set<ProgramValueId>& retained) {
  const auto& nodes = program.nodes();
  const uint64_t end = nodes.size();
  struct Span {
    uint64_t lower = UINT64_MAX;
    uint64_t last = 0;
    bool touched = false;
    bool pinned_start = false;
    bool pinned_end = false;
    bool activation = true;
  };
  // One span per program value, at its rank in id order
  // (ModelProgram::values_in_id_order): walking them in index order walks
  // the values in id order, with no sort.
  const auto& ids = program.values_in_id_order();
  std::vector<Span> spans(ids.size());
  auto span_of = [&](const ProgramValueId& id) -> Span* {
    const ModelProgram::ValueInfo* info = program.find_value(id);
    return info == nullptr ? nullptr : &spans[info->rank];
  };
  // `info` is find_value(id)'s answer (given: the node walk below has it).
  auto touch_info = [&](const ProgramValueId& id, const ModelProgram::ValueInfo* info,
                        uint64_t position) -> Result<Span*> {
    if (info == nullptr) {  // create refuses such a program
      return make_error(ErrorCode::kInvalidExecutionPlan, "value `{}` is not in the program",
                        id.str());
    }
    Span& s = spans[info->rank];
    if (!s.touched) {
      s.touched = true;
      s.activation =
          info->kind == ProgramValueKind::kInput || info->kind == ProgramValueKind::kNodeOutput;
    }
    s.lower = std::min(s.lower, position);
    s.last = std::max(s.last, position);
    return &s;
  };
  auto touch = [&](const ProgramValueId& id, uint64_t position) -> Result<Span*> {
    return touch_info(id, program.find_value(id), position);
  };
  for (const auto& input : program.inputs()) {
    FERRITE_ASSIGN_OR_RETURN(Span * s, touch(input, 0));
    s->pinned_start = true;
  }
  // Each node's values by position (ModelProgram::node_value_infos: its
  // inputs, then its outputs), not a look-up per binding.
  for (uint64_t i = 0; i < end; ++i) {
    size_t slot = 0;
    for (const auto* list : {&nodes[i]->inputs, &nodes[i]->outputs}) {
      for (const auto& v : *list) {
        FERRITE_RETURN_IF_ERROR(touch_info(v, program.find_value_at(i, slot++, v), i));
      }
    }
  }
  for (const auto& output : program.outputs()) {
    Span* s = span_of(output);
    if (s == nullptr || !s->touched) {
      return make_error(ErrorCode::kInvalidExecutionPlan, "program output `{}` is never produced",
                        output.str());
    }
    s->pinned_end = true;
  }
  for (const auto& value : retained) {
    if (Span* s = span_of(value); s != nullptr && s->touched) s->pinned_end = true;
  }

  // Alias classes by union-find over ranks; a class's root is its smallest
  // rank, i.e. its smallest id.
  DisjointIndices classes(spans.size());
  for (const auto& [output, input] : must_alias) {
    const ModelProgram::ValueInfo* out_info = program.find_value(output);
    const ModelProgram::ValueInfo* in_info = program.find_value(input);
    if (out_info == nullptr || in_info == nullptr || !spans[out_info->rank].touched ||
        !spans[in_info->rank].touched) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "must-alias edge `{}` → `{}` names an unknown value", output.str(),
                        input.str());
    }
    classes.join(out_info->rank, in_info->rank);
  }
  // One buffer per class, at its root's rank; filled in id order, so
  // members stay sorted and buffers come out by representative id.
  struct Building {
    ActivationLiveBuffer buffer;
    bool started = false;
    bool activation = true;  // every member is an input or a node output
  };
  std::vector<Building> buffers(spans.size());
  for (size_t i = 0; i < spans.size(); ++i) {
    const Span& span = spans[i];
    if (!span.touched) continue;
    Building& c = buffers[classes.root(i)];
    const uint64_t lower = span.pinned_start ? 0 : span.lower;
    const uint64_t upper = span.pinned_end ? end : span.last + 1;
    if (!c.started) {
      c.buffer.lower = lower;
      c.buffer.upper = upper;
      c.started = true;
    } else {
      c.buffer.lower = std::min(c.buffer.lower, lower);
      c.buffer.upper = std::max(c.buffer.upper, upper);
    }
    c.buffer.values.push_back(ids[i]);
    c.buffer.ranks.push_back(static_cast<uint32_t>(i));
    c.activation = c.activation && span.activation;
  }
  std::vector<ActivationLiveBuffer> out;
  for (Building& c : buffers) {
    if (!c.started || !c.activation) continue;
    if (c.buffer.upper <= c.buffer.lower) c.buffer.upper = c.buffer.lower + 1;
    out.push_back(std::move(c.buffer));
  }
  return out;
}

}  // namespace ferrite
