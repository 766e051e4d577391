#include "ferrite/catalog/provider_compatibility.h"

#include <optional>

#include <fmt/format.h>

#include "ferrite/core/json_array.h"
#include "ferrite/core/overloaded.h"

namespace ferrite {
namespace {

using nlohmann::json;

json version_pair(const ContractVersion& required, const ContractVersion& available) {
  return json{{"required", required.to_string()}, {"available", available.to_string()}};
}

// The version mismatch that explains why no provider is compatible: (1) the
// operation's own (the same for every provider), else (2) when every provider
// has the wrong version, the greatest one; nullopt otherwise.
struct ReportedVersionMismatch {
  ContractVersion required;
  ContractVersion available;
  std::string_view note;  // appended to the message
};

std::optional<ReportedVersionMismatch> reported_version_mismatch(
    const std::map<ProviderId, std::vector<ProviderCompatibilityRejectReason>>& rejected) {
  // 1. The operation itself has the wrong version (the same for every provider).
  for (const auto& [provider_id, reasons] : rejected) {
    for (const auto& reason : reasons) {
      if (const auto* mismatch = std::get_if<OperationVersionMismatch>(&reason)) {
        return ReportedVersionMismatch{mismatch->required, mismatch->available, ""};
      }
    }
  }
  // 2. Every provider has the wrong version: report the greatest one.
  std::optional<ProviderVersionMismatch> greatest;
  bool every_provider_version = !rejected.empty();
  for (const auto& [provider_id, reasons] : rejected) {
    const ProviderVersionMismatch* mismatch = nullptr;
    for (const auto& reason : reasons) {
      if (const auto* found = std::get_if<ProviderVersionMismatch>(&reason)) mismatch = found;
    }
    if (mismatch == nullptr) {
      every_provider_version = false;
      break;
    }
    if (!greatest || greatest->available <= mismatch->available) greatest = *mismatch;
  }
  if (every_provider_version && greatest) {
    return ReportedVersionMismatch{greatest->required, greatest->available,
                                   " (greatest provider version)"};
  }
  return std::nullopt;
}

}  // namespace

Result<void> ProviderCompatibilityRequest::validate() const {
  if (required_version.is_stable()) return {};
  return make_error(ErrorCode::kInvalidExecutionPlan,
                    "provider compatibility request for operation `{}` has "
                    "unstable required version {}",
                    operation_id.str(), required_version.to_string())
      .with_field("operation_id", operation_id.str());
}

std::string describe_reject_reason(const ProviderCompatibilityRejectReason& reason) {
  return std::visit(
      Overloaded{
          [](const OperationVersionMismatch& r) {
            return fmt::format("operation version {} does not satisfy required version {}",
                               r.available.to_string(), r.required.to_string());
          },
          [](const ProviderVersionMismatch& r) {
            return fmt::format("provider version {} does not satisfy required version {}",
                               r.available.to_string(), r.required.to_string());
          },
          [](const MissingCapabilities& r) {
            return "missing capabilities " + identity_list_text(r.capabilities);
          },
          [](const UnsupportedWeightFormats& r) {
            return "unsupported weight formats " + identity_list_text(r.formats);
          },
          [](const UnsupportedQuantizationFormats& r) {
            return "unsupported quantization formats " + identity_list_text(r.formats);
          },
      },
      reason);
}

json reject_reason_to_json(const ProviderCompatibilityRejectReason& reason) {
  return std::visit(
      Overloaded{
          [](const OperationVersionMismatch& r) {
            return json{{"operation_version_mismatch", version_pair(r.required, r.available)}};
          },
          [](const ProviderVersionMismatch& r) {
            return json{{"provider_version_mismatch", version_pair(r.required, r.available)}};
          },
          [](const MissingCapabilities& r) {
            return json{{"missing_capabilities", {{"capabilities", json_identity_array(r.capabilities)}}}};
          },
          [](const UnsupportedWeightFormats& r) {
            return json{{"unsupported_weight_formats", {{"formats", json_identity_array(r.formats)}}}};
          },
          [](const UnsupportedQuantizationFormats& r) {
            return json{
                {"unsupported_quantization_formats", {{"formats", json_identity_array(r.formats)}}}};
          },
      },
      reason);
}

json ProviderCompatibilityReport::rejected_to_json() const {
  json out = json::array();
  for (const auto& [provider_id, reasons] : rejected) {
    json reason_list =
        json_array_of(reasons, [&](const auto& reason) { return reject_reason_to_json(reason); });
    out.push_back(json{{"provider_id", provider_id.str()}, {"reasons", reason_list}});
  }
  return out;
}

json ProviderCompatibilityReport::to_json() const {
  json compatible_list =
      json_array_of(compatible, [&](const auto& provider_id) { return provider_id.str(); });
  return json{{"compatible", compatible_list}, {"rejected", rejected_to_json()}};
}

Result<std::vector<ProviderId>> ProviderCompatibilityReport::require_compatible_for_node(
    const DeviceId& device_id, const NodeId& node_id, const OperationId& operation_id) const {
  if (!compatible.empty()) return compatible;

  if (const auto mismatch = reported_version_mismatch(rejected)) {
    return make_error(ErrorCode::kIncompatibleOperationVersion,
                      "node `{}` requires operation `{}` version {}, available {}{}", node_id.str(),
                      operation_id.str(), mismatch->required.to_string(),
                      mismatch->available.to_string(), mismatch->note)
        .with_field("node_id", node_id.str())
        .with_field("operation_id", operation_id.str())
        .with_field("required_version", mismatch->required.to_string())
        .with_field("available_version", mismatch->available.to_string());
  }
  // 3. Anything else: name every rejection.
  return make_error(ErrorCode::kUnsupportedOperation,
                    "node `{}` operation `{}` is unsupported on device `{}`: all providers "
                    "were rejected: {}",
                    node_id.str(), operation_id.str(), device_id.str(), rejected_to_json().dump())
      .with_field("node_id", node_id.str())
      .with_field("operation_id", operation_id.str())
      .with_field("device_id", device_id.str());
}

}  // namespace ferrite
