// ferrite/catalog/operation_descriptor.h — the signature of one operation.
//
// Contract (spec §4.1, signature parts): an `OperationDescriptor` names a
// versioned, model-neutral operation and states what every provider of it must
// honour: input and output tensor contracts, the attribute schema, the minimum
// alignment of every value offset a provider binds, whether a provider may /
// must / must not request scratch, binding and persistent workspaces, and the
// minimum provider version and capabilities. `validate()` rejects: version
// major 0; no outputs; an input whose access is not Read/ReadWrite or whose
// alias is not NoAlias; an output whose access is not Write/ReadWrite or whose
// May/MustAlias index is not an input ordinal; a minimum alignment that is not
// a non-zero power of two; a provider minimum version with major 0 or a major
// different from the operation's.
//
// The fingerprint is the SHA-256 of the canonical JSON (`to_json`), so
// providers can pin the exact signature they implement.
//
// Example:
//   OperationDescriptor op{.id = OperationId::literal("operation.add"), .version = {1, 0},
//                          .inputs = {a, b}, .outputs = {sum}};
//   FERRITE_RETURN_IF_ERROR(op.validate());
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferrite/core/contract_version.h"
#include "ferrite/core/identity.h"
#include "ferrite/core/tensor_contract.h"
#include "ferrite/program/attribute_json.h"
#include "ferrite/program/attribute_schema.h"
#include "ferrite/program/semantic_value.h"

namespace ferrite {

enum class ResourcePresence : uint8_t { kForbidden, kOptional, kRequired };

std::string_view resource_presence_name(ResourcePresence presence);  // "forbidden", ...
Result<ResourcePresence> parse_resource_presence(std::string_view name);
inline bool presence_accepts(ResourcePresence presence, bool present) {
  return presence == ResourcePresence::kOptional ||
         (presence == ResourcePresence::kRequired) == present;
}

struct ResourceRequirements {
  uint64_t minimum_value_alignment_bytes = 1;
  ResourcePresence scratch = ResourcePresence::kOptional;
  ResourcePresence binding = ResourcePresence::kOptional;
  ResourcePresence persistent = ResourcePresence::kOptional;
  friend bool operator==(const ResourceRequirements&, const ResourceRequirements&) = default;
};

struct ProviderRequirement {
  ContractVersion minimum_version;
  std::set<CapabilityId> required_capabilities;
  friend bool operator==(const ProviderRequirement&, const ProviderRequirement&) = default;
};

struct OperationDescriptor {
  OperationId id;
  ContractVersion version;
  std::vector<TensorContract> inputs;
  std::vector<TensorContract> outputs;
  AttributeSchema attributes;
  ResourceRequirements resources;
  ProviderRequirement provider;

  Result<void> validate() const;
  // Validates node attributes against the schema; errors name the node.
  Result<void> validate_attributes(const NodeId& node_id,
                                   const std::map<AttributeId, SemanticValue>& values) const;
  nlohmann::json to_json() const;
  // validate() + SHA-256 of to_json().
  Result<std::string> fingerprint() const;

  friend bool operator==(const OperationDescriptor&, const OperationDescriptor&) = default;
};

}  // namespace ferrite
