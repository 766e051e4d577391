// ferrite/catalog/capability_catalog.h — one device, its operations and their providers.
//
// Contract (spec §4.5): a `CapabilityCatalog` is immutable and validated.
// `create` normalizes every provider (OperationProviderDescriptor::normalize)
// and then applies, in this order (the first failure is returned; every
// message names the ids involved and carries fields device_id and, where one
// is involved, operation_id / provider_id):
//   1. the device is valid (DeviceDescriptor::validate);
//   2. providers are non-empty and at most 16384 rows (kInvalidExecutionPlan);
//   3. the device advertises every operation's required capabilities
//      (kUnsupportedOperation: "... the device does not advertise required
//      capabilities {...}");
//   4. per provider, in the given order:
//      a. OperationProviderDescriptor::validate (its own code; provider_id field);
//      b. its operation is in the catalog (kUnsupportedOperation, "operation
//         descriptor is not registered");
//      c. its operation fingerprint equals OperationDescriptor::fingerprint()
//         (kUnsupportedOperation);
//      d. its device id is the catalog device (kUnsupportedOperation);
//      e. its version satisfies the operation version, then the operation's
//         provider minimum version (kIncompatibleOperationVersion — chosen over
//         UnsupportedOperation because the failure is purely a version
//         mismatch; fields required_version / available_version);
//      f. its capabilities are a subset of the device's and a superset of the
//         operation's required capabilities (kUnsupportedOperation);
//   5. every operation has at least one provider (kUnsupportedOperation, "no
//      provider is registered");
//   6. rows are sorted by (provider_id, version); the same provider id twice
//      for one operation is an error (kInvalidExecutionPlan).
// Engine providers and the reference-oracle graph of the seed are not modelled.
//
// `provider_compatibility` follows §4.5 steps 1–3 (see
// provider_compatibility.h); for an operation the catalog does not know it
// returns an empty report. `require_compatible_for_node` validates the request
// and the operation, then applies
// ProviderCompatibilityReport::require_compatible_for_node with the catalog
// device; it returns the compatible provider ids or, when there are none:
//   * any OperationVersionMismatch → kIncompatibleOperationVersion
//     "node `n` requires operation `op` version 2.0, available 1.0";
//   * else every rejection has a ProviderVersionMismatch →
//     kIncompatibleOperationVersion with the greatest available provider
//     version, same message shape plus " (greatest provider version)";
//   * else kUnsupportedOperation "node `n` operation `op` is unsupported on
//     device `d`: all providers were rejected: <rejected_to_json()>".
// `fingerprint()` is the canonical fingerprint of `to_json()`:
//   {"device":DEVICE,"operations":[OPERATION...],"providers":[PROVIDER...]}
// with operations in id order and providers in (operation id, catalog) order.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(CapabilityCatalog catalog,
//                            CapabilityCatalog::create(device, std::move(ops), providers));
//   FERRITE_ASSIGN_OR_RETURN(std::vector<ProviderId> usable,
//                            catalog.require_compatible_for_node(node.id, request));
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferrite/catalog/device_descriptor.h"
#include "ferrite/catalog/operation_catalog.h"
#include "ferrite/catalog/provider_compatibility.h"
#include "ferrite/catalog/provider_descriptor.h"
#include "ferrite/core/identity_hash_map.h"

namespace ferrite {

inline constexpr size_t kMaxCatalogProviders = 16384;

class CapabilityCatalog {
 public:
  static Result<CapabilityCatalog> create(DeviceDescriptor device, OperationCatalog operations,
                                          std::vector<OperationProviderDescriptor> providers);

  const DeviceDescriptor& device() const { return device_; }
  const OperationCatalog& operations() const { return operations_; }
  // Provider rows per operation, each sorted by (provider_id, version).
  const std::map<OperationId, std::vector<OperationProviderDescriptor>>& providers() const {
    return tables_->providers;
  }

  // OperationCatalog::operation_for_node with the device named (context
  // "device `d`" and field device_id).
  Result<const OperationDescriptor*> operation_for_node(const NodeId& node_id,
                                                        const OperationId& id) const;
  // kUnsupportedOperation "... no provider is registered" for an unknown operation.
  Result<const std::vector<OperationProviderDescriptor>*> providers_for(
      const OperationId& id) const;
  Result<const std::vector<OperationProviderDescriptor>*> providers_for_node(
      const NodeId& node_id, const OperationId& id) const;
  // nullptr when the operation or the provider is unknown.
  const OperationProviderDescriptor* find_provider(const OperationId& operation_id,
                                                   const ProviderId& provider_id) const;

  ProviderCompatibilityReport provider_compatibility(
      const ProviderCompatibilityRequest& request) const;
  // Validates the request (InvalidExecutionPlan for an unstable version) and
  // the operation (UnsupportedOperation), then selects as described above.
  Result<std::vector<ProviderId>> require_compatible_for_node(
      const NodeId& node_id, const ProviderCompatibilityRequest& request) const;

  nlohmann::json to_json() const;
  // canonical_fingerprint(to_json()), computed once at creation (the catalog
  // is immutable afterwards).
  const std::string& fingerprint() const { return fingerprint_; }
  // OperationDescriptor::fingerprint() of a catalog operation, computed once
  // at creation; nullptr for an unknown operation.
  const std::string* operation_fingerprint(const OperationId& id) const;

  friend bool operator==(const CapabilityCatalog& a, const CapabilityCatalog& b);

 private:
  // Built once by `create` and shared by every copy. `by_address` points
  // into the two maps' nodes (which live as long as the tables): one hash
  // of an operation id's interned address finds its providers and
  // fingerprint, reading no text (identity_hash_map.h).
  struct Tables {
    std::map<OperationId, std::vector<OperationProviderDescriptor>> providers;
    std::map<OperationId, std::string> operation_fingerprints;
    struct Row {
      const std::vector<OperationProviderDescriptor>* providers;  // never null
      const std::string* fingerprint;                             // never null
    };
    IdentityHashMap<OperationId, Row> by_address;
  };
  CapabilityCatalog(DeviceDescriptor device, OperationCatalog operations,
                    std::shared_ptr<const Tables> tables)
      : device_(std::move(device)), operations_(std::move(operations)), tables_(std::move(tables)) {}
  const Tables::Row* row(const OperationId& id) const;  // nullptr when unknown

  DeviceDescriptor device_;
  OperationCatalog operations_;
  std::shared_ptr<const Tables> tables_;  // never null
  std::string fingerprint_;
};

}  // namespace ferrite
