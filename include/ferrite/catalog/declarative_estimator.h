// ferrite/catalog/declarative_estimator.h — a resource estimator made of catalog data.
//
// Contract: a `DeclarativeResourceEstimator` answers every request with the
// same data-declared estimate, so a plan can be compiled for a target whose
// kernels are not on this machine. Its `DeclarativeEstimateSpec` holds a fixed
// `value_alignment_bytes` and optional scratch / binding / persistent
// workspaces whose size formulas are data (workspace_requirement.h); the
// plan builder binds them to the policy's ceilings later.
//
// Identity: the estimator echoes `request.input_fingerprint` and its
// descriptor's estimator identity (id, version, implementation fingerprint).
// The implementation fingerprint of declarative data is
// `declarative_estimator_implementation_fingerprint(spec)` =
// canonical_fingerprint(spec.to_json()), so changing the data changes the
// implementation; `create` requires the descriptor to declare exactly that
// fingerprint and the spec to pass `validate()` (the ProviderResourcePlan
// rules: alignment a non-zero power of two; scratch and binding
// Invocation-scoped; persistent not Invocation-scoped; workspaces valid).
// `estimate_resources` fails (InvalidExecutionPlan, naming the node and the
// provider) when the request is for another provider or operation.
//
// JSON (`to_json`, and what `read` accepts; "scratch", "binding" and
// "persistent" are optional; WORKSPACE as in workspace_requirement.h):
//   {"value_alignment_bytes": 64,
//    "scratch": {"formula": {"tokens": {"bytes_per_token": 256}},
//                "alignment_bytes": 64, "scope": "invocation",
//                "storage": ["linear/contiguous"]},
//    "persistent": WORKSPACE}
// `read(json, path)` is strict: unknown fields, missing fields, wrong types
// and unknown scopes / formula kinds / profile texts are kSerialization errors
// whose message and field "path" name the JSON path (`path` is the path of
// `json` itself, e.g. `$.providers[0].estimator`); semantic rule violations
// keep their InvalidExecutionPlan code, prefixed with the path.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto spec, DeclarativeEstimateSpec::read(doc["estimator"], "$.estimator"));
//   descriptor.resource_estimator_implementation_fingerprint =
//       declarative_estimator_implementation_fingerprint(spec);
//   FERRITE_ASSIGN_OR_RETURN(auto estimator, DeclarativeResourceEstimator::create(descriptor, spec));
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ferrite/catalog/provider_descriptor.h"
#include "ferrite/catalog/resource_estimate.h"
#include "ferrite/catalog/resource_estimator.h"
#include "ferrite/catalog/workspace_requirement.h"
#include "ferrite/core/status.h"

namespace ferrite {

struct DeclarativeEstimateSpec {
  uint64_t value_alignment_bytes = 1;
  std::optional<ProviderWorkspaceRequirement> scratch;
  std::optional<ProviderWorkspaceRequirement> binding;
  std::optional<ProviderWorkspaceRequirement> persistent;

  static Result<DeclarativeEstimateSpec> read(const nlohmann::json& json,
                                              std::string_view json_path);
  Result<void> validate() const;
  nlohmann::json to_json() const;

  friend bool operator==(const DeclarativeEstimateSpec&, const DeclarativeEstimateSpec&) = default;
};

std::string declarative_estimator_implementation_fingerprint(const DeclarativeEstimateSpec& spec);

class DeclarativeResourceEstimator final : public OperationResourceEstimator {
 public:
  static Result<DeclarativeResourceEstimator> create(OperationProviderDescriptor descriptor,
                                                     DeclarativeEstimateSpec spec);

  const OperationProviderDescriptor& descriptor() const override { return descriptor_; }
  const DeclarativeEstimateSpec& spec() const { return spec_; }
  Result<OperationResourceEstimate> estimate_resources(
      const OperationResourceEstimateRequest& request) const override;
  // Its formulas read the attributes, each binding's role, ordinal and
  // dimensions, and the token rows; never storage.
  bool reads_value_storage() const override { return false; }

 private:
  DeclarativeResourceEstimator(OperationProviderDescriptor descriptor, DeclarativeEstimateSpec spec)
      : descriptor_(std::move(descriptor)), spec_(std::move(spec)) {}

  OperationProviderDescriptor descriptor_;
  DeclarativeEstimateSpec spec_;
};

}  // namespace ferrite
