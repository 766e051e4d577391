// ferrite/catalog/resource_estimate.h — a provider's resource estimate, raw and trusted.
//
// Contract (spec §6.2, §6.3): an `OperationResourceEstimate` is what a
// provider's resource estimator returns — untrusted plain data: the
// estimator's claimed identity, the estimator input fingerprint it claims to
// have answered, the alignment it needs for every value offset it binds, and
// optional scratch / binding / persistent workspaces.
//
// `ProviderResourcePlan::from_provider_output(descriptor, input_fp, estimate)`
// is the only way to get a trusted record. It fails (InvalidExecutionPlan,
// messages name the provider and estimator ids; fields provider_id,
// estimator_id) when, checked in this order:
//   * the estimator id differs from descriptor.resource_estimator_id;
//   * the estimator version differs from descriptor.resource_estimator_version;
//   * the implementation fingerprint differs from
//     descriptor.resource_estimator_implementation_fingerprint;
//   * the claimed input fingerprint differs from the core-computed `input_fp`
//     (an echo of the core's own deferred fingerprint — the same handle — is
//     equal without hashing; any other claim is compared as text);
//   * `validate_fields` fails: estimator id a portable identity ≤ 160 bytes;
//     version major ≠ 0; implementation and input fingerprints canonical
//     SHA-256; value_alignment_bytes a non-zero power of two; scratch and
//     binding workspaces Invocation-scoped; persistent NOT Invocation-scoped;
//     each workspace valid (workspace_requirement.h).
// `estimate_fingerprint` = canonical_fingerprint of every other field (the
// JSON below without "estimate_fingerprint"), derived from the fields on each
// call (it is not stored, so it always matches them). `validate_shape()`
// re-checks the fields.
//
// JSON (`to_json`; versions as "MAJOR.MINOR", WORKSPACE as in
// workspace_requirement.h):
//   {"provider_id": "...", "estimator_id": "...", "estimator_version": "1.0",
//    "estimator_implementation_fingerprint": SHA, "estimator_input_fingerprint": SHA,
//    "estimate_fingerprint": SHA, "value_alignment_bytes": 64,
//    "scratch": null | WORKSPACE, "binding": null | WORKSPACE, "persistent": null | WORKSPACE}
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(OperationResourceEstimate raw, estimator.estimate_resources(request));
//   FERRITE_ASSIGN_OR_RETURN(auto plan, ProviderResourcePlan::from_provider_output(
//       estimator.descriptor(), request.input_fingerprint, raw));
//   plan.value_alignment_bytes();  // the only output the compiler itself consumes
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ferrite/catalog/provider_descriptor.h"
#include "ferrite/catalog/workspace_requirement.h"
#include "ferrite/core/contract_version.h"
#include "ferrite/core/deferred_sha256.h"
#include "ferrite/core/identity.h"
#include "ferrite/core/once.h"
#include "ferrite/core/status.h"

namespace ferrite {

struct OperationResourceEstimate {
  std::string estimator_id;
  ContractVersion estimator_version;
  std::string estimator_implementation_fingerprint;
  // The request's input_fingerprint, echoed (copy the handle: nothing is hashed).
  DeferredSha256 claimed_input_fingerprint;
  uint64_t value_alignment_bytes = 0;
  std::optional<ProviderWorkspaceRequirement> scratch;
  std::optional<ProviderWorkspaceRequirement> binding;
  std::optional<ProviderWorkspaceRequirement> persistent;

  friend bool operator==(const OperationResourceEstimate&,
                         const OperationResourceEstimate&) = default;
};

class ProviderResourcePlan {
 public:
  static Result<ProviderResourcePlan> from_provider_output(
      const OperationProviderDescriptor& descriptor, const DeferredSha256& input_fingerprint,
      const OperationResourceEstimate& estimate);
  // The same checks and plan, with the estimate's workspaces moved into the
  // plan instead of copied (the compiler's estimates are used once).
  static Result<ProviderResourcePlan> from_provider_output(
      const OperationProviderDescriptor& descriptor, const DeferredSha256& input_fingerprint,
      OperationResourceEstimate&& estimate);

  // This plan as from_provider_output makes it from the same estimate
  // echoing `input_fingerprint` instead: every field but the input
  // fingerprint is this plan's (the estimate fingerprint, which covers the
  // input fingerprint, is derived again when read). How the compiler
  // re-issues an earlier round's plan when only the bindings' storage moved
  // and the estimator does not read storage
  // (OperationResourceEstimator::reads_value_storage).
  ProviderResourcePlan with_input_fingerprint(DeferredSha256 input_fingerprint) const;

  const ProviderId& provider_id() const { return provider_id_; }
  const std::string& estimator_id() const { return estimator_->id; }
  const ContractVersion& estimator_version() const { return estimator_->version; }
  const std::string& estimator_implementation_fingerprint() const {
    return estimator_->implementation_fingerprint;
  }
  // The input fingerprint's text, computed on the first read (the compiler's
  // fingerprints are deferred: only a chosen provider's is ever read).
  const std::string& estimator_input_fingerprint() const {
    return estimator_input_fingerprint_.hex();
  }
  const DeferredSha256& estimator_input_digest() const { return estimator_input_fingerprint_; }
  // The digest of every other field (canonical_fingerprint of to_json()
  // without it). Only a plan with a workspace needs it (its workspaces' ids,
  // named by the joint selection and again by the plan node), so only such
  // a plan keeps it once computed, shared by every copy (the fields cannot
  // change after from_provider_output); any other computes it on each call.
  // Safe to call from several threads at once.
  std::string estimate_fingerprint() const;
  uint64_t value_alignment_bytes() const { return value_alignment_bytes_; }
  const std::optional<ProviderWorkspaceRequirement>& scratch() const {
    return workspaces().scratch;
  }
  const std::optional<ProviderWorkspaceRequirement>& binding() const {
    return workspaces().binding;
  }
  const std::optional<ProviderWorkspaceRequirement>& persistent() const {
    return workspaces().persistent;
  }

  Result<void> validate_fields() const;
  Result<void> validate_shape() const;
  nlohmann::json to_json() const;

  // Field by field (the kept estimate fingerprint is derived from them).
  friend bool operator==(const ProviderResourcePlan& a, const ProviderResourcePlan& b);

 private:
  struct EstimateDigest {
    OnceFlag once;
    std::string hex;
  };
  explicit ProviderResourcePlan(ProviderId provider_id)
      : provider_id_(std::move(provider_id)) {}
  // Every field except estimate_fingerprint.
  nlohmann::json fingerprint_material() const;

  // The estimator's identity, checked once and shared: by every copy of a
  // plan, and by the plans a thread makes from one estimator (a compile
  // makes several per node from a catalog's few estimators), so neither a
  // copy nor a new plan copies its two strings.
  struct Estimator {
    std::string id;
    ContractVersion version;
    std::string implementation_fingerprint;
  };
  static Result<std::shared_ptr<const Estimator>> shared_estimator(
      const OperationProviderDescriptor& descriptor);

  // The estimate's workspaces, kept apart from the plan: a compile holds
  // several plans per node in each round and copies them into later rounds
  // and plan nodes, and most plans have no workspace, so a plan is 80 bytes
  // instead of 400. Shared by every copy (they cannot change after
  // from_provider_output); null when the plan has none, read then as
  // kNoWorkspaces.
  struct Workspaces {
    std::optional<ProviderWorkspaceRequirement> scratch;
    std::optional<ProviderWorkspaceRequirement> binding;
    std::optional<ProviderWorkspaceRequirement> persistent;
    friend bool operator==(const Workspaces&, const Workspaces&) = default;
  };
  static const Workspaces kNoWorkspaces;
  const Workspaces& workspaces() const {
    return workspaces_ != nullptr ? *workspaces_ : kNoWorkspaces;
  }

  ProviderId provider_id_;
  std::shared_ptr<const Estimator> estimator_;  // never null once made
  DeferredSha256 estimator_input_fingerprint_;
  uint64_t value_alignment_bytes_ = 0;
  std::shared_ptr<const Workspaces> workspaces_;  // null: no workspace
  // One per from_provider_output of a plan with a workspace (else null),
  // shared by copies.
  std::shared_ptr<EstimateDigest> estimate_digest_;
};

}  // namespace ferrite
