// ferrite/catalog/provider_compatibility.h — why a provider can or cannot serve a node.
//
// Contract (spec §4.5): a `ProviderCompatibilityRequest` states what one node
// needs from the providers of its operation: the operation version it was
// written against, extra capabilities, and the weight and quantization formats
// of its quantized weights. `CapabilityCatalog::provider_compatibility`
// classifies every provider of the operation, in catalog order (provider id
// order), into `compatible` or `rejected` with the typed reasons, in this
// order: OperationVersionMismatch, ProviderVersionMismatch,
// MissingCapabilities, UnsupportedWeightFormats, UnsupportedQuantizationFormats
// (each at most once; sets are the missing elements only). A rejected
// provider always has at least one reason.
//
// Text and JSON forms of a reason (JSON mirrors the reference's tagging):
//   OperationVersionMismatch{2.0, 1.0}
//     "operation version 1.0 does not satisfy required version 2.0"
//     {"operation_version_mismatch":{"available":"1.0","required":"2.0"}}
//   ProviderVersionMismatch{1.2, 1.1}
//     "provider version 1.1 does not satisfy required version 1.2"
//     {"provider_version_mismatch":{"available":"1.1","required":"1.2"}}
//   MissingCapabilities{{capability.simd}}
//     "missing capabilities {capability.simd}"
//     {"missing_capabilities":{"capabilities":["capability.simd"]}}
//   UnsupportedWeightFormats / UnsupportedQuantizationFormats
//     "unsupported weight formats {weight-format.x}" / "unsupported quantization formats {q.y}"
//     {"unsupported_weight_formats":{"formats":[...]}} / {"unsupported_quantization_formats":...}
// `ProviderCompatibilityReport::rejected_to_json()` is
//   [{"provider_id":"provider.a","reasons":[REASON...]},...] in provider id order.
//
// Example:
//   ProviderCompatibilityRequest request{.operation_id = node.operation_id,
//                                        .required_version = node.required_version};
//   ProviderCompatibilityReport report = catalog.provider_compatibility(request);
//   for (const auto& [provider, reasons] : report.rejected)
//     for (const auto& reason : reasons) log(provider.str(), describe_reject_reason(reason));
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferrite/core/contract_version.h"
#include "ferrite/core/identity.h"
#include "ferrite/core/status.h"

namespace ferrite {

struct ProviderCompatibilityRequest {
  OperationId operation_id;
  ContractVersion required_version;  // major != 0
  // Optional (default empty), so designated initializers may omit them.
  std::set<CapabilityId> required_capabilities{};
  std::set<WeightFormatId> required_weight_formats{};
  std::set<QuantizationFormatId> required_quantization_formats{};

  // Rejects an unstable required version (kInvalidExecutionPlan, field operation_id).
  Result<void> validate() const;

  friend bool operator==(const ProviderCompatibilityRequest&,
                         const ProviderCompatibilityRequest&) = default;
};

// The operation's own version does not satisfy the request.
struct OperationVersionMismatch {
  ContractVersion required;
  ContractVersion available;
  friend bool operator==(const OperationVersionMismatch&, const OperationVersionMismatch&) = default;
};
// The provider's version does not satisfy the request.
struct ProviderVersionMismatch {
  ContractVersion required;
  ContractVersion available;
  friend bool operator==(const ProviderVersionMismatch&, const ProviderVersionMismatch&) = default;
};
struct MissingCapabilities {
  std::set<CapabilityId> capabilities;
  friend bool operator==(const MissingCapabilities&, const MissingCapabilities&) = default;
};
struct UnsupportedWeightFormats {
  std::set<WeightFormatId> formats;
  friend bool operator==(const UnsupportedWeightFormats&, const UnsupportedWeightFormats&) = default;
};
struct UnsupportedQuantizationFormats {
  std::set<QuantizationFormatId> formats;
  friend bool operator==(const UnsupportedQuantizationFormats&,
                         const UnsupportedQuantizationFormats&) = default;
};

using ProviderCompatibilityRejectReason =
    std::variant<OperationVersionMismatch, ProviderVersionMismatch, MissingCapabilities,
                 UnsupportedWeightFormats, UnsupportedQuantizationFormats>;

std::string describe_reject_reason(const ProviderCompatibilityRejectReason& reason);
nlohmann::json reject_reason_to_json(const ProviderCompatibilityRejectReason& reason);

struct ProviderCompatibilityReport {
  std::vector<ProviderId> compatible;  // catalog order = provider id order
  std::map<ProviderId, std::vector<ProviderCompatibilityRejectReason>> rejected;

  // [{"provider_id":..., "reasons":[...]}] in provider id order.
  nlohmann::json rejected_to_json() const;
  // {"compatible":[...],"rejected":<rejected_to_json()>}.
  nlohmann::json to_json() const;

  // Returns `compatible` when it is non-empty; otherwise selects the error
  // for node `node_id` of operation `operation_id` on device `device_id`:
  //   1. the first OperationVersionMismatch (provider id order) →
  //      kIncompatibleOperationVersion
  //      "node `n` requires operation `op` version 2.0, available 1.0";
  //   2. else, when every rejection has a ProviderVersionMismatch →
  //      kIncompatibleOperationVersion with the greatest available provider
  //      version: "node `n` requires operation `op` version 1.3, available 1.2
  //      (greatest provider version)";
  //   (both with fields node_id, operation_id, required_version, available_version)
  //   3. else kUnsupportedOperation "node `n` operation `op` is unsupported on
  //      device `d`: all providers were rejected: <rejected_to_json()>" with
  //      fields node_id, operation_id, device_id.
  // Through a valid CapabilityCatalog (where every provider version satisfies
  // its operation version) a ProviderVersionMismatch always comes with an
  // OperationVersionMismatch, so rule 2 only matters for hand-built reports.
  Result<std::vector<ProviderId>> require_compatible_for_node(const DeviceId& device_id,
                                                              const NodeId& node_id,
                                                              const OperationId& operation_id) const;

  friend bool operator==(const ProviderCompatibilityReport&,
                         const ProviderCompatibilityReport&) = default;
};

}  // namespace ferrite
