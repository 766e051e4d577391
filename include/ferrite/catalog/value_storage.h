// ferrite/catalog/value_storage.h — where the bytes of one semantic value live.
//
// Contract (spec §5.2–5.4): a `ResolvedStorageComponent` is one byte range of
// one resource, typed by the element type stored there. `create` accepts it
// iff length > 0, offset + length fits u64, and both offset and length are
// multiples of the element size. The struct is plain data, so
// `ResolvedValueStorage` re-checks every component it is given.
//
// A `ResolvedValueStorage` is the storage of one value: valid by construction.
//   * `single(resource, offset, length, dtype)` — one component without id;
//   * `composite(components)` — every component carries a component id;
//   * `create(components)` — the common rules only (for readers).
// Common rules: ≥ 1 component; more than one ⇒ all carry ids; each component
// valid; component ids unique; no two components overlap within one resource;
// the total byte count fits u64. Components are stored sorted by
// (component_id, resource_id, offset_bytes) — a missing id sorts first.
// Errors are InvalidExecutionPlan and name the resource and component ids.
//
// "Overlap" (`overlaps`) means: some component of each storage lies in the
// same resource and their byte ranges [offset, offset + length) intersect.
//
// `BufferUsage` says what a buffer holds; values use Weights / Activations /
// State, provider workspaces Persistent / Binding / Scratch. Wire names are
// snake_case ("weights", "activations", ...).
//
// A storage is immutable and shares its state: copies are one reference
// count, and its canonical bytes (`canonical()`, the canonical dump of
// `to_json()`) are written once when it is made, for every estimator input
// and plan that names it. `ValueStorages` holds every value's storage of a
// program by the value's rank (program/value_table.h).
//
// JSON (`to_json`):
//   {"components": [{"component_id": null | "weight.x", "resource_id": "...",
//                    "offset_bytes": 0, "length_bytes": 64, "element_type": "f32"}, ...]}
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto storage, ResolvedValueStorage::single(
//       ResourceId::literal("resource.arena"), 256, 64, ElementType::kF32));
//   storage.total_physical_bytes();  // 64
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferrite/core/element_type.h"
#include "ferrite/core/identity.h"
#include "ferrite/core/once.h"
#include "ferrite/core/status.h"
#include "ferrite/program/value_table.h"

namespace ferrite {

enum class BufferUsage : uint8_t {
  kWeights,
  kActivations,
  kState,
  kPersistent,
  kBinding,
  kScratch,
  kTransfer,
};

// "weights", "activations", "state", "persistent", "binding", "scratch", "transfer".
std::string_view buffer_usage_name(BufferUsage usage);
// Parses a wire name; InvalidArgument error otherwise.
Result<BufferUsage> parse_buffer_usage(std::string_view name);

struct ResolvedStorageComponent {
  std::optional<WeightId> component_id;
  ResourceId resource_id;
  uint64_t offset_bytes = 0;
  uint64_t length_bytes = 0;
  ElementType element_type = ElementType::kU8;

  static Result<ResolvedStorageComponent> create(std::optional<WeightId> component_id,
                                                 ResourceId resource_id, uint64_t offset_bytes,
                                                 uint64_t length_bytes, ElementType element_type);

  // The rules of `create`; errors name the resource (and component) id.
  Result<void> validate() const;
  // True when both lie in the same resource and their byte ranges intersect.
  // Meaningful for valid components only (end = offset + length fits u64).
  bool overlaps(const ResolvedStorageComponent& other) const;
  nlohmann::json to_json() const;

  friend bool operator==(const ResolvedStorageComponent&,
                         const ResolvedStorageComponent&) = default;
};

class ResolvedValueStorage {
 public:
  static Result<ResolvedValueStorage> single(ResourceId resource_id, uint64_t offset_bytes,
                                             uint64_t length_bytes, ElementType element_type);
  static Result<ResolvedValueStorage> composite(std::vector<ResolvedStorageComponent> components);
  static Result<ResolvedValueStorage> create(std::vector<ResolvedStorageComponent> components);

  // Copies share the state; a move takes it (as ResolvedTensorSpec's).
  // Hazard: a moved-from storage holds no state and may only be destroyed
  // or assigned to.
  ResolvedValueStorage(const ResolvedValueStorage&) = default;
  ResolvedValueStorage& operator=(const ResolvedValueStorage&) = default;
  ResolvedValueStorage(ResolvedValueStorage&&) noexcept = default;
  ResolvedValueStorage& operator=(ResolvedValueStorage&&) noexcept = default;

  // Sorted by (component_id, resource_id, offset_bytes); never empty.
  const std::vector<ResolvedStorageComponent>& components() const { return state_->components; }
  std::set<ResourceId> resource_ids() const;
  // Σ component lengths; checked to fit u64 at construction.
  uint64_t total_physical_bytes() const { return state_->total_physical_bytes; }
  bool overlaps(const ResolvedValueStorage& other) const;
  nlohmann::json to_json() const;
  // The canonical bytes of to_json(): {"components":[{...}, ...]}. Written
  // by the first reader (on any thread) and kept: most storages a compile
  // makes — every value's dedicated probe storage — are never encoded.
  std::string_view canonical() const;

  friend bool operator==(const ResolvedValueStorage& a, const ResolvedValueStorage& b) {
    return a.state_ == b.state_ || a.state_->components == b.state_->components;
  }

 private:
  struct State {
    std::vector<ResolvedStorageComponent> components;
    uint64_t total_physical_bytes = 0;
    mutable OnceFlag canonical_once;
    mutable std::string canonical;  // written once, under canonical_once
  };
  explicit ResolvedValueStorage(std::shared_ptr<const State> state) : state_(std::move(state)) {}

  std::shared_ptr<const State> state_;  // never null but when moved from
};

// Every value's storage, by the value's rank in its program.
using ValueStorages = ValueTable<ResolvedValueStorage>;

}  // namespace ferrite
