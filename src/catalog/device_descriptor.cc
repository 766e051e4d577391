#include "ferrite/catalog/device_descriptor.h"

#include "ferrite/core/json_array.h"
#include <fmt/format.h>

#include "ferrite/core/fingerprint.h"
#include "ferrite/core/enum_names.h"

namespace ferrite {

using nlohmann::json;

constexpr EnumNames<DeviceClass, 3> kDeviceClassNames{
    "device class",
    {{{DeviceClass::kHost, "host"}, {DeviceClass::kAccelerator, "accelerator"},
      {DeviceClass::kReference, "reference"}}}};
FERRITE_ENUM_NAME_FUNCTIONS(kDeviceClassNames, DeviceClass::kReference,
                            device_class_name, parse_device_class)

Result<void> DeviceDescriptor::validate() const {
  if (total_memory_bytes == 0) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "device `{}` has zero total memory",
                      id.str())
        .with_field("device_id", id.str());
  }
  if (!is_canonical_sha256(runtime_implementation_fingerprint)) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "device `{}` runtime implementation fingerprint `{}` is not a canonical "
                      "SHA-256 (64 lowercase hex characters)",
                      id.str(), runtime_implementation_fingerprint.substr(0, 80))
        .with_field("device_id", id.str());
  }
  if (dynamic_storage_profiles.empty()) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "device `{}` must provide at least one dynamic storage profile", id.str())
        .with_field("device_id", id.str());
  }
  return {};
}

json DeviceDescriptor::to_json() const {
  json capability_list =
      json_array_of(capabilities, [&](const auto& capability) { return capability.str(); });
  json profiles = json_array_of(dynamic_storage_profiles, [&](const auto& profile) {
    return profile.to_string();
  });
  return json{{"id", id.str()},
              {"class", device_class_name(device_class)},
              {"ordinal", ordinal},
              {"total_memory_bytes", total_memory_bytes},
              {"runtime_implementation_fingerprint", runtime_implementation_fingerprint},
              {"capabilities", capability_list},
              {"dynamic_storage_profiles", profiles}};
}

}  // namespace ferrite
