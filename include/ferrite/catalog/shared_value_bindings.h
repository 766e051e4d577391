// ferrite/catalog/shared_value_bindings.h — a node's value bindings, shared and read-only.
//
// Contract: a `SharedValueBindings` is an immutable sequence of
// ResolvedValueBinding held by reference count. It reads like a const
// std::vector (size, indexing, iteration, `vector()`); copying it is one
// count, where copying the vector copied every binding and with it the
// counted tensor, storage and weight states each binding holds (three
// counts, three cache lines, per binding). Equality compares the bindings.
// A default-constructed one is empty.
//
// Why: a plan node's bindings are its resolution's (plan_node_builder.h).
// On a 128-layer program a copy per node was about 7,700 bindings, each
// touched again when the plan was freed (docs/performance.md, step 28).
//
// Hazard: the bindings are shared with whoever made them (a resolution and
// its estimator input); nothing may change them, which is why only const
// access is offered.
//
// Example:
//   SharedValueBindings values(resolution.shared_values());  // no binding copied
//   for (const ResolvedValueBinding& b : values) use(b);
//   SharedValueBindings made = std::vector<ResolvedValueBinding>{input, output};
#pragma once

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "ferrite/catalog/value_binding.h"

namespace ferrite {

class SharedValueBindings {
 public:
  using value_type = ResolvedValueBinding;
  using const_iterator = std::vector<ResolvedValueBinding>::const_iterator;
  using iterator = const_iterator;

  SharedValueBindings() = default;
  // Takes the bindings (implicit, so a vector may be assigned to one).
  // NOLINTNEXTLINE(google-explicit-constructor)
  SharedValueBindings(std::vector<ResolvedValueBinding> values)
      : values_(std::make_shared<const std::vector<ResolvedValueBinding>>(std::move(values))) {}
  // Shares them; null reads as empty.
  explicit SharedValueBindings(std::shared_ptr<const std::vector<ResolvedValueBinding>> values)
      : values_(std::move(values)) {}

  const std::vector<ResolvedValueBinding>& vector() const {
    return values_ != nullptr ? *values_ : empty_vector();
  }
  const_iterator begin() const { return vector().begin(); }
  const_iterator end() const { return vector().end(); }
  size_t size() const { return vector().size(); }
  bool empty() const { return vector().empty(); }
  const ResolvedValueBinding& operator[](size_t i) const { return vector()[i]; }
  const ResolvedValueBinding& front() const { return vector().front(); }
  const ResolvedValueBinding& back() const { return vector().back(); }

  friend bool operator==(const SharedValueBindings& a, const SharedValueBindings& b) {
    return a.values_ == b.values_ || a.vector() == b.vector();
  }

 private:
  static const std::vector<ResolvedValueBinding>& empty_vector() {
    static const std::vector<ResolvedValueBinding> kEmpty;
    return kEmpty;
  }

  std::shared_ptr<const std::vector<ResolvedValueBinding>> values_;
};

}  // namespace ferrite
