// ferrite/catalog/canonical_encoding.h — catalog values streamed canonically.
//
// Contract: `encode_canonical(x, out)` writes into `out` exactly the bytes
// canonical_json(x.to_json()) would be (core/canonical_encoder.h), without
// building the document, for the values the compiler hashes once per node and
// provider: value bindings and their storage. `estimator_input_material(...)`
// is the document estimator_input_fingerprint (resource_estimator.h) hashes,
// spelled out as nlohmann JSON; the fingerprint streams the same bytes and
// tests hold the two equal.
//
// Example:
//   CanonicalSha256 hash;
//   encode_canonical(binding, hash);
//   std::string fp = hash.hex();  // == canonical_fingerprint(binding.to_json())
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferrite/catalog/provider_compatibility.h"
#include "ferrite/catalog/value_binding.h"
#include "ferrite/catalog/value_storage.h"
#include "ferrite/catalog/workspace_requirement.h"
#include "ferrite/core/canonical_encoder.h"
#include "ferrite/core/contract_version.h"
#include "ferrite/core/identity.h"
#include "ferrite/core/status.h"
#include "ferrite/program/semantic_value.h"

namespace ferrite {

void encode_canonical(const ResolvedTensorSpec& tensor, CanonicalEncoder& out);  // tensor_spec_to_json
void encode_canonical(const AliasPolicy& alias, CanonicalEncoder& out);          // alias_policy_to_json
void encode_canonical(const ResolvedWeightBinding& weight, CanonicalEncoder& out);
void encode_canonical(const ResolvedStorageComponent& component, CanonicalEncoder& out);
void encode_canonical(const ResolvedValueStorage& storage, CanonicalEncoder& out);
void encode_canonical(const ResolvedValueBinding& binding, CanonicalEncoder& out);
void encode_canonical(const ProviderWorkspaceRequirement& workspace, CanonicalEncoder& out);
void encode_canonical(const ProviderCompatibilityRejectReason& reason,
                      CanonicalEncoder& out);  // reject_reason_to_json

// The canonical bytes of an estimator input's `values` array, and the
// estimator input fingerprint given them: a node encodes its bindings once and
// hashes them for each of its providers. estimator_input_fingerprint(..., values,
// ...) == estimator_input_fingerprint_of_encoded(..., encode_canonical_values(values), ...).
std::string encode_canonical_values(const std::vector<ResolvedValueBinding>& values);
// The same bytes, with each weight binding's `weight` member taken from
// `weight_canonical[i]` when it is not empty. HAZARD: the caller vouches that
// weight_canonical[i] is encode_canonical(*values[i].weight()) — the compiler
// passes its per-compilation contract encodings only after checking that the
// binding's weight equals that contract (validate_semantic_bindings).
std::string encode_canonical_values(const std::vector<ResolvedValueBinding>& values,
                                    const std::vector<std::string_view>& weight_canonical);
// The same bytes, written into `out` as one value.
void encode_canonical_values(const std::vector<ResolvedValueBinding>& values,
                             const std::vector<std::string_view>& weight_canonical,
                             CanonicalEncoder& out);
Result<std::string> estimator_input_fingerprint_of_encoded(
    const std::string& prepared_family_fingerprint, const std::string& operation_fingerprint,
    const NodeId& node_id, const OperationId& operation_id,
    const ContractVersion& operation_version,
    const std::map<AttributeId, SemanticValue>& attributes, const ProviderId& provider_id,
    std::string_view canonical_values, const std::set<CapabilityId>& required_capabilities,
    const std::set<WeightFormatId>& required_weight_formats,
    const std::set<QuantizationFormatId>& required_quantization_formats);

nlohmann::json estimator_input_material(
    const std::string& prepared_family_fingerprint, const std::string& operation_fingerprint,
    const NodeId& node_id, const OperationId& operation_id,
    const ContractVersion& operation_version,
    const std::map<AttributeId, SemanticValue>& attributes, const ProviderId& provider_id,
    const std::vector<ResolvedValueBinding>& values,
    const std::set<CapabilityId>& required_capabilities,
    const std::set<WeightFormatId>& required_weight_formats,
    const std::set<QuantizationFormatId>& required_quantization_formats);

}  // namespace ferrite
