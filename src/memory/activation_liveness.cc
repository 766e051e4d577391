#include "ferrite/memory/activation_liveness.h"

#include <algorithm>

#include <fmt/format.h>

#include "ferrite/core/disjoint_indices.h"
#include "ferrite/core/identity_hash_map.h"

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
    bool pinned_start = false;
    bool pinned_end = false;
    bool activation = true;
    const ProgramValueId* id = nullptr;  // the program's own id (first touch)
    size_t rank = 0;                     // position in id order
  };
  // Touched by hashing the id's address; walked below in id order, as an
  // ordered map of ids would be (never in the table's order).
  IdentityHashMap<ProgramValueId, Span> spans;
  spans.reserve(program.inputs().size() + 2 * end);
  auto touch = [&](const ProgramValueId& id, uint64_t position) -> Span& {
    Span& s = spans[id];
    if (s.id == nullptr) s.id = &id;
    s.lower = std::min(s.lower, position);
    s.last = std::max(s.last, position);
    return s;
  };
  for (const auto& input : program.inputs()) touch(input, 0).pinned_start = true;
  for (uint64_t i = 0; i < end; ++i) {
    for (const auto& v : nodes[i]->inputs) touch(v, i);
    for (const auto& v : nodes[i]->outputs) touch(v, i);
  }
  for (const auto& output : program.outputs()) {
    auto it = spans.find(output);
    if (it == spans.end()) {
      return make_error(ErrorCode::kInvalidExecutionPlan, "program output `{}` is never produced",
                        output.str());
    }
    it->second.pinned_end = true;
  }
  for (const auto& value : retained) {
    if (auto it = spans.find(value); it != spans.end()) it->second.pinned_end = true;
  }
  std::vector<Span*> ordered;
  ordered.reserve(spans.size());
  for (auto& [id, span] : spans) ordered.push_back(&span);
  std::sort(ordered.begin(), ordered.end(),
            [](const Span* a, const Span* b) { return a->id->view() < b->id->view(); });
  for (Span* span : ordered) {
    const auto kind = program.value_kind(*span->id);
    span->activation = kind == ProgramValueKind::kInput || kind == ProgramValueKind::kNodeOutput;
  }

  // Alias classes by union-find over the spans' positions in id order; a
  // class's root is its smallest position, i.e. its smallest id.
  DisjointIndices classes(ordered.size());
  for (size_t i = 0; i < ordered.size(); ++i) ordered[i]->rank = i;
  for (const auto& [output, input] : must_alias) {
    auto out_span = spans.find(output);
    auto in_span = spans.find(input);
    if (out_span == spans.end() || in_span == spans.end()) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "must-alias edge `{}` → `{}` names an unknown value", output.str(),
                        input.str());
    }
    classes.join(out_span->second.rank, in_span->second.rank);
  }
  // One buffer per class, at its root's position; filled in id order, so
  // members stay sorted and buffers come out by representative id.
  struct Building {
    ActivationLiveBuffer buffer;
    bool started = false;
    bool activation = true;  // every member is an input or a node output
  };
  std::vector<Building> buffers(ordered.size());
  for (size_t i = 0; i < ordered.size(); ++i) {
    const Span& span = *ordered[i];
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
    c.buffer.values.push_back(*span.id);
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
