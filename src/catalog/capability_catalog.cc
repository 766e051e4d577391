#include "ferrite/catalog/capability_catalog.h"

#include <algorithm>
#include <iterator>
#include <tuple>

#include <fmt/format.h>

#include "ferrite/core/fingerprint.h"

namespace ferrite {
namespace {

using nlohmann::json;

template <class Id>
std::set<Id> set_difference(const std::set<Id>& from, const std::set<Id>& remove) {
  std::set<Id> out;
  std::set_difference(from.begin(), from.end(), remove.begin(), remove.end(),
                      std::inserter(out, out.end()));
  return out;
}

// Checks 4b–4f of the header contract for one (normalized, validated) provider.
Result<void> check_provider(const DeviceDescriptor& device, const OperationCatalog& operations,
                            const std::map<OperationId, std::string>& fingerprints,
                            const OperationProviderDescriptor& provider) {
  const OperationDescriptor* op = operations.find(provider.operation_id);
  std::string unsupported;  // why the device cannot use the provider; empty when it can
  if (op == nullptr) {
    unsupported = "operation descriptor is not registered";
  } else if (const std::string& expected = fingerprints.at(op->id);
             provider.operation_fingerprint != expected) {
    unsupported =
        fmt::format("operation fingerprint {} differs from the registered descriptor's {}",
                    provider.operation_fingerprint, expected);
  } else if (provider.device_id != device.id) {
    unsupported = fmt::format("provider targets device `{}`", provider.device_id.str());
  } else if (!provider.version.satisfies(op->version) ||
             !provider.version.satisfies(op->provider.minimum_version)) {
    const bool below_operation = !provider.version.satisfies(op->version);
    const ContractVersion& required = below_operation ? op->version : op->provider.minimum_version;
    return make_error(
               ErrorCode::kIncompatibleOperationVersion,
               "provider `{}` of operation `{}` on device `{}` has version {}, which does "
               "not satisfy {} {}",
               provider.provider_id.str(), provider.operation_id.str(), device.id.str(),
               provider.version.to_string(),
               below_operation ? "operation version" : "the operation's provider minimum version",
               required.to_string())
        .with_field("provider_id", provider.provider_id.str())
        .with_field("operation_id", provider.operation_id.str())
        .with_field("device_id", device.id.str())
        .with_field("required_version", required.to_string())
        .with_field("available_version", provider.version.to_string());
  } else if (auto extra = set_difference(provider.capabilities, device.capabilities);
             !extra.empty()) {
    unsupported = fmt::format("provider needs capabilities {} the device does not advertise",
                              identity_list_text(extra));
  } else if (auto missing =
                 set_difference(op->provider.required_capabilities, provider.capabilities);
             !missing.empty()) {
    unsupported = fmt::format("provider lacks the operation's required capabilities {}",
                              identity_list_text(missing));
  }
  if (unsupported.empty()) return {};
  return make_error(ErrorCode::kUnsupportedOperation,
                    "provider `{}` of operation `{}` is unsupported on device `{}`: {}",
                    provider.provider_id.str(), provider.operation_id.str(), device.id.str(),
                    unsupported)
      .with_field("provider_id", provider.provider_id.str())
      .with_field("operation_id", provider.operation_id.str())
      .with_field("device_id", device.id.str());
}

}  // namespace

Result<CapabilityCatalog> CapabilityCatalog::create(
    DeviceDescriptor device, OperationCatalog operations,
    std::vector<OperationProviderDescriptor> providers) {
  FERRITE_RETURN_IF_ERROR(device.validate());
  const DeviceId device_id = device.id;
  if (providers.empty()) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "capability catalog for device `{}` has no providers", device_id.str())
        .with_field("device_id", device_id.str());
  }
  if (providers.size() > kMaxCatalogProviders) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "capability catalog for device `{}` has {} provider rows; the limit is {}",
                      device_id.str(), providers.size(), kMaxCatalogProviders)
        .with_field("device_id", device_id.str());
  }

  std::map<OperationId, std::string> fingerprints;
  for (const auto& [op_id, op] : operations.operations()) {
    if (auto missing = set_difference(op.provider.required_capabilities, device.capabilities);
        !missing.empty()) {
      return make_error(ErrorCode::kUnsupportedOperation,
                        "operation `{}` is unsupported on device `{}`: the device does not "
                        "advertise required capabilities {}",
                        op_id.str(), device_id.str(), identity_list_text(missing))
          .with_field("operation_id", op_id.str())
          .with_field("device_id", device_id.str());
    }
    FERRITE_ASSIGN_OR_RETURN(std::string fingerprint, op.fingerprint());
    fingerprints.emplace(op_id, std::move(fingerprint));
  }

  auto tables = std::make_shared<Tables>();
  for (auto& provider : providers) {
    provider.normalize();
    if (auto valid = provider.validate(); !valid) {
      return make_error(std::move(valid.error()).with_field("device_id", device_id.str()));
    }
    FERRITE_RETURN_IF_ERROR(check_provider(device, operations, fingerprints, provider));
    const OperationId op_id = provider.operation_id;
    tables->providers[op_id].push_back(std::move(provider));
  }

  for (const auto& [op_id, op] : operations.operations()) {
    auto rows = tables->providers.find(op_id);
    if (rows == tables->providers.end()) {
      return make_error(ErrorCode::kUnsupportedOperation,
                        "operation `{}` is unsupported on device `{}`: no provider is registered",
                        op_id.str(), device_id.str())
          .with_field("operation_id", op_id.str())
          .with_field("device_id", device_id.str());
    }
    auto& row = rows->second;
    std::stable_sort(row.begin(), row.end(), [](const auto& a, const auto& b) {
      return std::tie(a.provider_id, a.version) < std::tie(b.provider_id, b.version);
    });
    for (size_t i = 1; i < row.size(); ++i) {
      if (row[i].provider_id == row[i - 1].provider_id) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "provider `{}` is registered twice for operation `{}` on device "
                          "`{}` (versions {} and {})",
                          row[i].provider_id.str(), op_id.str(), device_id.str(),
                          row[i - 1].version.to_string(), row[i].version.to_string())
            .with_field("provider_id", row[i].provider_id.str())
            .with_field("operation_id", op_id.str())
            .with_field("device_id", device_id.str());
      }
    }
  }
  tables->operation_fingerprints = std::move(fingerprints);
  // Every operation has its fingerprint and (checked above) its providers.
  tables->by_address.reserve(tables->operation_fingerprints.size());
  for (const auto& [op_id, fingerprint] : tables->operation_fingerprints) {
    tables->by_address.emplace(op_id, Tables::Row{&tables->providers.at(op_id), &fingerprint});
  }
  CapabilityCatalog catalog(std::move(device), std::move(operations), std::move(tables));
  catalog.fingerprint_ = canonical_fingerprint(catalog.to_json());
  return catalog;
}

Result<const OperationDescriptor*> CapabilityCatalog::operation_for_node(
    const NodeId& node_id, const OperationId& id) const {
  auto op = operations_.operation_for_node(node_id, id);
  if (op) return op;
  return make_error(std::move(op.error())
                        .annotate("device `{}`", device_.id.str())
                        .with_field("device_id", device_.id.str()));
}

Result<const std::vector<OperationProviderDescriptor>*> CapabilityCatalog::providers_for(
    const OperationId& id) const {
  if (const Tables::Row* rows = row(id)) return rows->providers;
  return make_error(ErrorCode::kUnsupportedOperation,
                    "operation `{}` is unsupported on device `{}`: no provider is registered",
                    id.str(), device_.id.str())
      .with_field("operation_id", id.str())
      .with_field("device_id", device_.id.str());
}

Result<const std::vector<OperationProviderDescriptor>*> CapabilityCatalog::providers_for_node(
    const NodeId& node_id, const OperationId& id) const {
  if (const Tables::Row* rows = row(id)) return rows->providers;
  return make_error(ErrorCode::kUnsupportedOperation,
                    "node `{}` operation `{}` is unsupported on device `{}`: no provider is "
                    "registered",
                    node_id.str(), id.str(), device_.id.str())
      .with_field("node_id", node_id.str())
      .with_field("operation_id", id.str())
      .with_field("device_id", device_.id.str());
}

const CapabilityCatalog::Tables::Row* CapabilityCatalog::row(const OperationId& id) const {
  auto it = tables_->by_address.find(id);
  return it == tables_->by_address.end() ? nullptr : &it->second;
}

const OperationProviderDescriptor* CapabilityCatalog::find_provider(
    const OperationId& operation_id, const ProviderId& provider_id) const {
  const Tables::Row* rows = row(operation_id);
  if (rows == nullptr) return nullptr;
  for (const auto& provider : *rows->providers) {
    if (provider.provider_id == provider_id) return &provider;
  }
  return nullptr;
}

ProviderCompatibilityReport CapabilityCatalog::provider_compatibility(
    const ProviderCompatibilityRequest& request) const {
  ProviderCompatibilityReport report;
  const OperationDescriptor* op = operations_.find(request.operation_id);
  const Tables::Row* rows = row(request.operation_id);
  if (op == nullptr || rows == nullptr) return report;

  // The request's capabilities and the operation's: the request's own set
  // when it already names the operation's (the compiler's requests do), a
  // union otherwise.
  const std::set<CapabilityId>& operation_capabilities = op->provider.required_capabilities;
  std::set<CapabilityId> merged;
  const std::set<CapabilityId>* required = &request.required_capabilities;
  if (!std::includes(request.required_capabilities.begin(), request.required_capabilities.end(),
                     operation_capabilities.begin(), operation_capabilities.end())) {
    merged = request.required_capabilities;
    merged.insert(operation_capabilities.begin(), operation_capabilities.end());
    required = &merged;
  }
  const std::set<CapabilityId>& required_capabilities = *required;
  report.compatible.reserve(rows->providers->size());
  for (const auto& provider : *rows->providers) {
    std::vector<ProviderCompatibilityRejectReason> reasons;
    if (!op->version.satisfies(request.required_version)) {
      reasons.emplace_back(OperationVersionMismatch{request.required_version, op->version});
    }
    if (!provider.version.satisfies(request.required_version)) {
      reasons.emplace_back(ProviderVersionMismatch{request.required_version, provider.version});
    }
    if (auto missing = set_difference(required_capabilities, provider.capabilities);
        !missing.empty()) {
      reasons.emplace_back(MissingCapabilities{std::move(missing)});
    }
    if (auto missing =
            set_difference(request.required_weight_formats, provider.accepted_weight_formats);
        !missing.empty()) {
      reasons.emplace_back(UnsupportedWeightFormats{std::move(missing)});
    }
    if (auto missing = set_difference(request.required_quantization_formats,
                                      provider.accepted_quantization_formats);
        !missing.empty()) {
      reasons.emplace_back(UnsupportedQuantizationFormats{std::move(missing)});
    }
    if (reasons.empty()) {
      report.compatible.push_back(provider.provider_id);
    } else {
      report.rejected.emplace(provider.provider_id, std::move(reasons));
    }
  }
  return report;
}

bool operator==(const CapabilityCatalog& a, const CapabilityCatalog& b) {
  return a.device_ == b.device_ && a.operations_ == b.operations_ &&
         (a.tables_ == b.tables_ ||
          (a.tables_->providers == b.tables_->providers &&
           a.tables_->operation_fingerprints == b.tables_->operation_fingerprints)) &&
         a.fingerprint_ == b.fingerprint_;
}

Result<std::vector<ProviderId>> CapabilityCatalog::require_compatible_for_node(
    const NodeId& node_id, const ProviderCompatibilityRequest& request) const {
  if (auto valid = request.validate(); !valid) {
    return make_error(std::move(valid.error())
                          .annotate("node `{}`", node_id.str())
                          .with_field("node_id", node_id.str()));
  }
  FERRITE_RETURN_IF_ERROR(operation_for_node(node_id, request.operation_id));
  FERRITE_RETURN_IF_ERROR(providers_for_node(node_id, request.operation_id));

  ProviderCompatibilityReport report = provider_compatibility(request);
  if (!report.compatible.empty()) return std::move(report.compatible);
  return report.require_compatible_for_node(device_.id, node_id, request.operation_id);
}

json CapabilityCatalog::to_json() const {
  json providers = json::array();
  for (const auto& [op_id, rows] : tables_->providers) {
    for (const auto& provider : rows) providers.push_back(provider.to_json());
  }
  return json{{"device", device_.to_json()},
              {"operations", operations_.to_json().at("operations")},
              {"providers", providers}};
}

}  // namespace ferrite

namespace ferrite {

const std::string* CapabilityCatalog::operation_fingerprint(const OperationId& id) const {
  const Tables::Row* rows = row(id);
  return rows == nullptr ? nullptr : rows->fingerprint;
}

}  // namespace ferrite
