// ferrite/compiler/value_placement.h — where every value physically lives.
//
// Contract (spec §11.6): weights go to content-addressed resources, either
//   * probe placement: one dedicated resource per referenced component
//     (`resource/weight-probe/sha256/...`, offset 0), used once to learn the
//     providers' alignment; or
//   * arena placement: one arena per physical element type
//     (`resource/weight-arena/sha256/...`, key = the JSON string of the dtype,
//     quotes included), components in schema (id) order, each offset aligned to
//     max(A, element size).
// Weight resource ids hash the EXECUTION weight plan fingerprint; activation and
// state ids hash the family fingerprint. Program inputs and NoAlias/MayAlias
// node outputs get their own activation resource at offset 0; a MustAlias
// output reuses its input's storage; a state gets `resource/state/sha256/...`
// sized align_up(capacity minimum bytes, element size). Only referenced
// components get storage. Every value's storage is kept by its rank in a
// `ValueStorages` table (catalog/value_storage.h), which the resolution keeps
// apart from the program.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto locations, arena_weight_locations(family, weights, 64));
//   FERRITE_ASSIGN_OR_RETURN(auto storages, build_value_storages(family, weights, ops, tensors, locations));
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "ferrite/catalog/operation_catalog.h"
#include "ferrite/catalog/value_storage.h"
#include "ferrite/compiler/tensor_inference.h"
#include "ferrite/compiler/weight_materializer.h"

namespace ferrite {

struct WeightComponentLocation {
  ResourceId resource_id;
  uint64_t offset_bytes = 0;
  uint64_t length_bytes = 0;
  ElementType element_type = ElementType::kU8;
};
using WeightLocations = std::map<WeightId, WeightComponentLocation>;

// "resource/{kind}/sha256/{hex(SHA256(kind ‖ 0 ‖ fingerprint ‖ 0 ‖ identity))}".
Result<ResourceId> hashed_resource_id(std::string_view kind, std::string_view fingerprint,
                                      std::string_view semantic_identity);

Result<WeightLocations> probe_weight_locations(const PreparedModelFamily& family,
                                               const ExecutionWeightPlan& weights);
Result<WeightLocations> arena_weight_locations(const PreparedModelFamily& family,
                                               const ExecutionWeightPlan& weights,
                                               uint64_t provider_alignment_bytes);

// `earlier`, when given, is what this function returned for the same family,
// weights and tensors with other weight locations (the alignment rounds move
// only weights): the storages of inputs, states and activations that are
// not aliases are taken from it instead of being derived (and their
// resource ids hashed) again. The result equals a build without it. An
// `earlier` table that does not index the family's program is refused.
// Without `earlier`, the node outputs' resource ids are hashed on up to
// `threads` threads (core/parallel_indices.h); the result, and the error
// when there is one, do not depend on how many.
Result<ValueStorages> build_value_storages(const PreparedModelFamily& family,
                                           const ExecutionWeightPlan& weights,
                                           const OperationCatalog& operations,
                                           const ValueTensors& tensors,
                                           const WeightLocations& locations,
                                           const ValueStorages* earlier = nullptr,
                                           unsigned threads = 1);

}  // namespace ferrite
