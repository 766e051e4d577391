// ferrite/catalog/resource_estimator.h — the estimator interface and its input.
//
// Contract (spec §4.6, §6.4): an `OperationResourceEstimator` is the planning
// side of one provider: it names the provider it sizes (`descriptor()`) and,
// for one fully placed node, returns a raw `OperationResourceEstimate`
// (resource_estimate.h). The core never trusts that output directly: it turns
// it into a `ProviderResourcePlan` with `from_provider_output`, which checks
// the estimator identity against the descriptor and the claimed input
// fingerprint against `request.input_fingerprint`.
//
// `estimator_input_fingerprint(...)` is the canonical fingerprint
// (core/fingerprint.h) of everything an estimate may depend on:
//   {"prepared_family_fingerprint": SHA, "operation_fingerprint": SHA,
//    "node_id": "...", "operation_id": "...", "operation_version": "1.0",
//    "attributes": {"attr.id": SEMANTIC_VALUE, ...}, "provider_id": "...",
//    "values": [VALUE_BINDING, ...]            (in slot order, storage included),
//    "required_capabilities": [...], "required_weight_formats": [...],
//    "required_quantization_formats": [...]}
// (SEMANTIC_VALUE as `semantic_value_to_json`, VALUE_BINDING as
// value_binding.h). So moving a value inside an arena changes the input and
// forces a new estimate. Errors (InvalidExecutionPlan, naming the node): the
// family or operation fingerprint is not a canonical SHA-256.
// `operation_version` is the node's required version; capabilities are the
// effective set (operation-required ∪ node-requested).
//
// `OperationResourceEstimateRequest::validate()` checks the request's own
// shape: an operation is present and valid, the attributes pass its schema,
// there is one binding per operand in slot order (inputs 0..n, then outputs
// 0..m), `token_rows` is empty or has one entry per binding, and the input
// fingerprint is a canonical SHA-256. The full per-node
// binding contract (dtype, dims, alias, overlap) is the operation's to check.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(std::string input_fp, estimator_input_fingerprint(
//       family_fp, op_fp, node.id, op.id, node.required_version, node.attributes,
//       provider.provider_id, values, capabilities, weight_formats, quantization_formats));
//   OperationResourceEstimateRequest request{node.id, &op, node.attributes, provider.provider_id,
//                                            values, capabilities, weight_formats,
//                                            quantization_formats, input_fp};
//   FERRITE_ASSIGN_OR_RETURN(auto raw, estimator.estimate_resources(request));
#pragma once

#include <map>
#include <memory>
#include <span>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ferrite/catalog/operation_descriptor.h"
#include "ferrite/catalog/provider_descriptor.h"
#include "ferrite/catalog/resource_estimate.h"
#include "ferrite/catalog/value_binding.h"
#include "ferrite/core/contract_version.h"
#include "ferrite/core/deferred_sha256.h"
#include "ferrite/core/identity.h"
#include "ferrite/core/status.h"
#include "ferrite/program/semantic_value.h"

namespace ferrite {

struct OperationResourceEstimateRequest {
  NodeId node_id;
  const OperationDescriptor* operation = nullptr;  // borrowed; outlives the request
  std::map<AttributeId, SemanticValue> attributes;
  ProviderId provider_id;
  // Borrowed: the caller's bindings outlive the request (the compiler's
  // node bindings, encoded once for all of its providers).
  std::span<const ResolvedValueBinding> values;
  std::set<CapabilityId> required_capabilities;
  std::set<WeightFormatId> required_weight_formats;
  std::set<QuantizationFormatId> required_quantization_formats;
  // Deferred: an estimator that echoes it (the declarative one) copies a
  // handle and hashes nothing; reading `.hex()` computes it (core/deferred_sha256.h).
  DeferredSha256 input_fingerprint;
  // The token rows of each binding (slot order) that is a token-scaled state
  // (for example a K cache's context), 0 for every other binding; empty when
  // the caller knows of none. Not a separate fingerprint input: the prepared
  // family fingerprint covers the program's state capacities.
  // Borrowed, like `values`.
  std::span<const uint64_t> token_rows;

  Result<void> validate() const;
};

Result<std::string> estimator_input_fingerprint(
    const std::string& prepared_family_fingerprint, const std::string& operation_fingerprint,
    const NodeId& node_id, const OperationId& operation_id,
    const ContractVersion& operation_version,
    const std::map<AttributeId, SemanticValue>& attributes, const ProviderId& provider_id,
    const std::vector<ResolvedValueBinding>& values,
    const std::set<CapabilityId>& required_capabilities,
    const std::set<WeightFormatId>& required_weight_formats,
    const std::set<QuantizationFormatId>& required_quantization_formats);

// One node's estimator input for all of its providers: the canonical bytes
// of the document above, less the provider id, written once; then
// `fingerprint_for(provider)` is the deferred digest of the whole document
// with that provider's id, hashed only when read.
// `encode` takes the bindings' `values` array already encoded (see
// canonical_encoding.h); `encode_sharing_values` keeps the bindings instead
// (shared, immutable) and encodes them only if a digest is read — the
// compiler's way, since most of a compilation's estimator inputs belong to
// rounds whose plans are never read. `weight_canonical` as in
// encode_canonical_values: its views must live as long as the input — the
// compiler's are bytes of the shared weight contract each binding holds
// (node_resolution.h, SharedWeightContract), so the bindings keep them.
// estimator_input_fingerprint(...) == encode(...)->fingerprint_for(p).hex().
// Errors as estimator_input_fingerprint's.
class NodeEstimatorInput : public std::enable_shared_from_this<NodeEstimatorInput> {
 public:
  static Result<std::shared_ptr<const NodeEstimatorInput>> encode(
      const std::string& prepared_family_fingerprint, const std::string& operation_fingerprint,
      const NodeId& node_id, const OperationId& operation_id,
      const ContractVersion& operation_version,
      const std::map<AttributeId, SemanticValue>& attributes, std::string_view canonical_values,
      const std::set<CapabilityId>& required_capabilities,
      const std::set<WeightFormatId>& required_weight_formats,
      const std::set<QuantizationFormatId>& required_quantization_formats);
  // `earlier`, when given (the same node's input in an earlier round), lends
  // its checked head — everything but the values and provider — when every
  // input the head is made of equals this call's; otherwise the head is
  // checked and copied again. Nothing is encoded until a digest is read.
  static Result<std::shared_ptr<const NodeEstimatorInput>> encode_sharing_values(
      const std::string& prepared_family_fingerprint, const std::string& operation_fingerprint,
      const NodeId& node_id, const OperationId& operation_id,
      const ContractVersion& operation_version,
      const std::map<AttributeId, SemanticValue>& attributes,
      std::shared_ptr<const std::vector<ResolvedValueBinding>> values,
      std::vector<std::string_view> weight_canonical,
      const std::set<CapabilityId>& required_capabilities,
      const std::set<WeightFormatId>& required_weight_formats,
      const std::set<QuantizationFormatId>& required_quantization_formats,
      const NodeEstimatorInput* earlier = nullptr);

  // `earlier`'s input with its values replaced by `values`: the same node's
  // bindings in a later round with at most their storage moved (as many,
  // each pointing at the very same weight contract as its slot in
  // `earlier`, which keeps `earlier`'s weight views valid). The head and the
  // weight views are shared, not copied, and only the weight contracts are
  // compared: the caller vouches that everything else the head is made of
  // is unchanged (same context, node, capabilities). Null when `earlier`
  // holds no shared values or `values` do not match it that far.
  static std::shared_ptr<const NodeEstimatorInput> with_moved_values(
      const NodeEstimatorInput& earlier,
      std::shared_ptr<const std::vector<ResolvedValueBinding>> values);

  DeferredSha256 fingerprint_for(const ProviderId& provider_id) const;
  // Writes the whole document with `provider_id` into `out` (a digest just
  // started): what fingerprint_for's digest hashes.
  void write(const ProviderId& provider_id, CanonicalSha256& out) const;

 private:
  NodeEstimatorInput() = default;
  struct Head;
  static Result<std::shared_ptr<const Head>> make_head(
      const std::string& prepared_family_fingerprint, const std::string& operation_fingerprint,
      const NodeId& node_id, const OperationId& operation_id,
      const ContractVersion& operation_version,
      const std::map<AttributeId, SemanticValue>& attributes,
      const std::set<CapabilityId>& required_capabilities,
      const std::set<WeightFormatId>& required_weight_formats,
      const std::set<QuantizationFormatId>& required_quantization_formats,
      const NodeEstimatorInput* earlier);

  // Everything but the provider and the values, checked, its bytes written
  // only by write() (resource_estimator.cc). Shared by the rounds of one
  // node whose head is unchanged.
  std::shared_ptr<const Head> head_;
  std::string values_text_;  // the encoded values array, when given encoded
  std::shared_ptr<const std::vector<ResolvedValueBinding>> values_;  // else these
  // Views of the weight contracts the values hold (null when none): shared
  // by the inputs of later rounds, whose values hold the very same contracts.
  std::shared_ptr<const std::vector<std::string_view>> weight_canonical_;
};

class OperationResourceEstimator {
 public:
  virtual ~OperationResourceEstimator();
  virtual const OperationProviderDescriptor& descriptor() const = 0;
  // Called concurrently from the compiler's resolution threads
  // (compile_options.h, "compile threads"): an implementation must be safe
  // to call from several threads at once (a pure function of the request,
  // or synchronized state).
  virtual Result<OperationResourceEstimate> estimate_resources(
      const OperationResourceEstimateRequest& request) const = 0;
  // Whether an estimate may depend on where the bindings' values are stored
  // (`ResolvedValueBinding::storage()`: resource ids, offsets, lengths).
  // False promises that two requests whose bindings differ only in storage
  // get the same estimate but for the echoed input fingerprint; the
  // compiler then re-issues the node's plan from an earlier round
  // (ProviderResourcePlan::with_input_fingerprint) instead of asking again
  // when a later round moved only storage (the alignment rounds move
  // weights, the packing round activations). The default, true, is always
  // correct; an estimator that returns false wrongly makes plans that differ
  // from a compile that asked it every time.
  virtual bool reads_value_storage() const { return true; }

 protected:
  // Copyable and movable by implementations only (no slicing through the interface).
  OperationResourceEstimator() = default;
  OperationResourceEstimator(const OperationResourceEstimator&) = default;
  OperationResourceEstimator(OperationResourceEstimator&&) = default;
  OperationResourceEstimator& operator=(const OperationResourceEstimator&) = default;
  OperationResourceEstimator& operator=(OperationResourceEstimator&&) = default;
};

}  // namespace ferrite
