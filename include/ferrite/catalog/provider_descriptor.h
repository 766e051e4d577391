// ferrite/catalog/provider_descriptor.h — one kernel implementation of one operation.
//
// Contract (spec §4.2, §4.3): an `OperationProviderDescriptor` pins the exact
// operation signature it implements (`operation_fingerprint` must equal
// `OperationDescriptor::fingerprint()`; the capability catalog checks that),
// the device it runs on, the capabilities it needs, the weight and
// quantization formats it accepts, the dynamic storage it can bind per value
// slot, and the resource estimator that sizes its workspaces.
// `validate()` rejects (kInvalidExecutionPlan unless noted; every message
// names the provider and the operation; fields provider_id, operation_id):
//   * a provider version or resource estimator version with major 0;
//   * an operation, provider implementation or estimator implementation
//     fingerprint that is not a canonical SHA-256;
//   * a resource estimator id that is not a portable identity of at most 160
//     bytes (kInvalidIdentity, kind "resource estimator");
//   * no dynamic storage bindings, a binding whose requirement accepts no
//     profile, or bindings that are not strictly sorted by (role, ordinal) —
//     call `normalize()` first to sort them; duplicates stay an error.
// `dynamic_storage_for(role, ordinal)` returns nullptr when the provider
// cannot bind that slot with dynamic storage at all.
//
// Wire names: ValueBindingRole "input" / "output". Inputs sort before outputs.
//
// Example:
//   OperationProviderDescriptor p{.provider_id = ProviderId::literal("provider.add.simd"),
//                                 .operation_id = add.id,
//                                 .operation_fingerprint = *add.fingerprint(), ...,
//                                 .dynamic_storage_bindings = {{ValueBindingRole::kOutput, 0,
//                                     DynamicStorageRequirement::contiguous()}}, ...};
//   p.normalize();
//   FERRITE_RETURN_IF_ERROR(p.validate());
//   const DynamicStorageRequirement* out = p.dynamic_storage_for(ValueBindingRole::kOutput, 0);
#pragma once

#include <compare>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferrite/catalog/storage_profile.h"
#include "ferrite/core/contract_version.h"
#include "ferrite/core/identity.h"
#include "ferrite/core/status.h"

namespace ferrite {

enum class ValueBindingRole : uint8_t { kInput, kOutput };

std::string_view value_binding_role_name(ValueBindingRole role);  // "input", "output"
Result<ValueBindingRole> parse_value_binding_role(std::string_view name);

// The dynamic storage profiles a provider accepts for one value slot.
struct DynamicStorageRequirement {
  std::set<DynamicStorageProfile> accepted_profiles;  // non-empty

  // {linear/contiguous}.
  static DynamicStorageRequirement contiguous() {
    return DynamicStorageRequirement{{DynamicStorageProfile::linear_contiguous()}};
  }
  bool accepts(const DynamicStorageProfile& profile) const {
    return accepted_profiles.contains(profile);
  }
  nlohmann::json to_json() const;  // {"accepted_profiles":["linear/contiguous"]}

  friend bool operator==(const DynamicStorageRequirement&,
                         const DynamicStorageRequirement&) = default;
};

struct ProviderStorageBindingRequirement {
  ValueBindingRole role = ValueBindingRole::kInput;
  uint32_t ordinal = 0;
  DynamicStorageRequirement storage;

  nlohmann::json to_json() const;  // {"role":"input","ordinal":0,"storage":{...}}

  friend bool operator==(const ProviderStorageBindingRequirement&,
                         const ProviderStorageBindingRequirement&) = default;
};

struct OperationProviderDescriptor {
  ProviderId provider_id;
  OperationId operation_id;
  std::string operation_fingerprint;                // canonical SHA-256
  std::string provider_implementation_fingerprint;  // canonical SHA-256
  ContractVersion version;                          // major != 0
  DeviceId device_id;
  std::set<CapabilityId> capabilities;
  std::set<WeightFormatId> accepted_weight_formats;
  std::set<QuantizationFormatId> accepted_quantization_formats;
  std::vector<ProviderStorageBindingRequirement> dynamic_storage_bindings;  // sorted, unique
  std::string resource_estimator_id;                           // portable identity
  ContractVersion resource_estimator_version;                  // major != 0
  std::string resource_estimator_implementation_fingerprint;  // canonical SHA-256

  Result<void> validate() const;
  // Sorts the storage bindings by (role, ordinal); stable, so duplicates
  // stay adjacent and `validate()` still reports them.
  void normalize();
  const DynamicStorageRequirement* dynamic_storage_for(ValueBindingRole role,
                                                       uint32_t ordinal) const;
  // Every field; sets as sorted arrays, versions as "1.0".
  nlohmann::json to_json() const;

  friend bool operator==(const OperationProviderDescriptor&,
                         const OperationProviderDescriptor&) = default;
};

}  // namespace ferrite
