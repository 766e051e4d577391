#include "ferrite/memory/activation_liveness.h"
#include "ferrite/memory/value_classes.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

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
  };
  // Touched by hashing the id's address; walked below in id order, as an
  // ordered map of ids would be (never in the table's order).
  std::unordered_map<ProgramValueId, Span, IdentityAddressHash> spans;
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

  ValueClasses classes;
  for (const auto& [output, input] : must_alias) {
    if (!spans.contains(output) || !spans.contains(input)) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "must-alias edge `{}` → `{}` names an unknown value", output.str(),
                        input.str());
    }
    classes.join(output, input);
  }
  std::map<ProgramValueId, ActivationLiveBuffer> buffers;
  std::map<ProgramValueId, bool> class_is_activation;
  for (const Span* span_pointer : ordered) {
    const ProgramValueId& id = *span_pointer->id;
    const Span& span = *span_pointer;
    const ProgramValueId root = classes.find(id);
    auto [it, inserted] = buffers.try_emplace(root);
    ActivationLiveBuffer& b = it->second;
    const uint64_t lower = span.pinned_start ? 0 : span.lower;
    const uint64_t upper = span.pinned_end ? end : span.last + 1;
    if (inserted) {
      b.lower = lower;
      b.upper = upper;
    } else {
      b.lower = std::min(b.lower, lower);
      b.upper = std::max(b.upper, upper);
    }
    b.values.push_back(id);  // spans iterate in id order: members stay sorted
    auto [flag, fresh] = class_is_activation.try_emplace(root, span.activation);
    if (!fresh) flag->second = flag->second && span.activation;
  }
  std::vector<ActivationLiveBuffer> out;
  for (auto& [root, buffer] : buffers) {
    if (!class_is_activation.at(root)) continue;
    if (buffer.upper <= buffer.lower) buffer.upper = buffer.lower + 1;
    out.push_back(std::move(buffer));
  }
  return out;
}

}  // namespace ferrite
