#include "ferrite/memory/value_classes.h"

#include <utility>

namespace ferrite {

ProgramValueId ValueClasses::find(const ProgramValueId& id) {
  ProgramValueId root = id;
  for (auto it = parent_.find(root); it != parent_.end() && it->second != root;
       it = parent_.find(root)) {
    root = it->second;
  }
  ProgramValueId at = id;
  while (at != root) {
    ProgramValueId& parent = parent_.at(at);
    ProgramValueId next = parent;
    parent = root;
    at = std::move(next);
  }
  return root;
}

void ValueClasses::join(const ProgramValueId& a, const ProgramValueId& b) {
  ProgramValueId ra = find(a);
  ProgramValueId rb = find(b);
  if (ra == rb) return;
  parent_.try_emplace(ra, ra);
  parent_.try_emplace(rb, rb);
  if (rb < ra) std::swap(ra, rb);
  parent_.at(rb) = ra;
}

}  // namespace ferrite
