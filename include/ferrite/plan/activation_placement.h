// ferrite/plan/activation_placement.h — pack activations into arenas by liveness.
//
// Contract (activation memory planning): given the compiler's dedicated
// placement (one resource per activation buffer at offset 0) and a joint
// provider selection, `place_activations`
//   1. forms live buffers (memory/activation_liveness.h): MustAlias chains of
//      the operation contracts are one buffer; program inputs live from the
//      start, outputs and retained values to the end;
//   2. groups buffers into arena classes by the storage profile joint
//      selection gave their dedicated resource (all activations have usage
//      Activations and invocation lifetime; element types may share);
//   3. sizes each buffer as its bytes rounded up to its alignment — the
//      largest value alignment of the chosen provider of any node binding a
//      member (`alignments`, never below the element size), or a larger
//      `floor` learnt in an earlier round;
//   4. packs each class with pack_intervals (bounded, deterministic effort)
//      into `resource/activation-arena/sha256/…` (hashing the family
//      fingerprint and the profile) and gives every member value one storage
//      component in it.
// Arena summaries record the peak (the arena size), LOAD (the max-live lower
// bound over the same padded sizes), the bytes the dedicated layout needs
// (the sum of padded buffer sizes) and the buffer count.
// `chosen_activation_alignments` is step 3's source: per value, the largest
// value alignment of the chosen providers of the nodes binding it. Value
// tables (storages, alignments) of another program are refused.
//
// Example:
//   auto alignments = chosen_activation_alignments(program, resolutions, selection);
//   FERRITE_ASSIGN_OR_RETURN(auto placement, place_activations(
//       {family, operations, tensors, dedicated, selection, retained}, alignments));
//   placement.arenas[0].peak_bytes == placement.arenas[0].load_bytes;  // typical for decoders
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferrite/catalog/operation_catalog.h"
#include "ferrite/catalog/value_storage.h"
#include "ferrite/compiler/joint_selection.h"
#include "ferrite/compiler/tensor_inference.h"
#include "ferrite/program/prepared_model_family.h"
#include "ferrite/program/value_table.h"

namespace ferrite {

struct ActivationArenaSummary {
  ResourceId resource_id;
  std::string storage_profile;
  uint64_t buffers = 0;
  uint64_t peak_bytes = 0;
  uint64_t load_bytes = 0;
  uint64_t dedicated_bytes = 0;

  nlohmann::json to_json() const;
  friend bool operator==(const ActivationArenaSummary&, const ActivationArenaSummary&) = default;
};

// Per value, an alignment in bytes, by the value's rank in the program
// (program/value_table.h). A table of no program (`{}`) holds none.
using ValueAlignments = ValueTable<uint64_t>;

struct ActivationPlacement {
  ValueStorages value_storages;                // every value
  std::vector<ActivationArenaSummary> arenas;  // sorted by resource id
  ValueAlignments alignments;                  // per value, as used
};

struct ActivationPlacementInput {
  const PreparedModelFamily& family;
  const OperationCatalog& operations;
  const ValueTensors& tensors;
  // The dedicated placement (of `family`'s program: another program's table
  // is refused) and the selection made with it (for profiles).
  const ValueStorages& dedicated_storages;
  const JointProviderSelection& dedicated_selection;
  const std::set<ProgramValueId>& retained;
};

ValueAlignments chosen_activation_alignments(const ModelProgram& program,
                                             const std::vector<PlanNodeResolution>& resolutions,
                                             const JointProviderSelection& selection);

Result<ActivationPlacement> place_activations(const ActivationPlacementInput& input,
                                              const ValueAlignments& alignments);

}  // namespace ferrite
