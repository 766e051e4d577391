// ferrite/catalog/device_descriptor.h — the device a plan is compiled for.
//
// Contract (spec §4.4): a `DeviceDescriptor` names one execution device: its
// class (host, accelerator or the numerical reference backend), its ordinal,
// its total memory, the fingerprint of the runtime implementation that drives
// it, the capabilities it advertises and the dynamic storage profiles its
// allocators can provide. `validate()` rejects (kInvalidExecutionPlan, field
// device_id): zero total memory, a runtime implementation fingerprint that is
// not a canonical SHA-256 (64 lowercase hex characters), and an empty profile
// set. Capabilities may be empty. `to_json()` is the canonical shape the
// capability catalog fingerprint hashes:
//   {"id":"device.gpu.0","class":"accelerator","ordinal":0,
//    "total_memory_bytes":1073741824,"runtime_implementation_fingerprint":"<sha>",
//    "capabilities":["capability.compute"],"dynamic_storage_profiles":["linear/contiguous"]}
//
// Example:
//   DeviceDescriptor gpu{.id = DeviceId::literal("device.gpu.0"),
//                        .device_class = DeviceClass::kAccelerator,
//                        .ordinal = 0,
//                        .total_memory_bytes = 1ull << 30,
//                        .runtime_implementation_fingerprint = sha256_hex("runtime"),
//                        .capabilities = {CapabilityId::literal("capability.compute")},
//                        .dynamic_storage_profiles = {DynamicStorageProfile::linear_contiguous()}};
//   FERRITE_RETURN_IF_ERROR(gpu.validate());
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ferrite/catalog/storage_profile.h"
#include "ferrite/core/identity.h"
#include "ferrite/core/status.h"

namespace ferrite {

enum class DeviceClass : uint8_t { kHost, kAccelerator, kReference };

std::string_view device_class_name(DeviceClass device_class);  // "host", "accelerator", "reference"
Result<DeviceClass> parse_device_class(std::string_view name);  // kInvalidArgument otherwise

struct DeviceDescriptor {
  DeviceId id;
  DeviceClass device_class = DeviceClass::kHost;
  uint32_t ordinal = 0;
  uint64_t total_memory_bytes = 0;                 // > 0
  std::string runtime_implementation_fingerprint;  // canonical SHA-256
  std::set<CapabilityId> capabilities;
  std::set<DynamicStorageProfile> dynamic_storage_profiles;  // non-empty

  Result<void> validate() const;
  nlohmann::json to_json() const;

  friend bool operator==(const DeviceDescriptor&, const DeviceDescriptor&) = default;
};

}  // namespace ferrite
