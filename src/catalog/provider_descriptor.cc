#include "ferrite/catalog/provider_descriptor.h"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "ferrite/core/fingerprint.h"
#include "ferrite/core/enum_names.h"
#include "ferrite/core/json_array.h"

namespace ferrite {
namespace {

using nlohmann::json;

auto binding_key(const ProviderStorageBindingRequirement& binding) {
  return std::make_tuple(binding.role, binding.ordinal);
}

}  // namespace

constexpr EnumNames<ValueBindingRole, 2> kValueBindingRoleNames{
    "value binding role",
    {{{ValueBindingRole::kInput, "input"}, {ValueBindingRole::kOutput, "output"}}}};
FERRITE_ENUM_NAME_FUNCTIONS(kValueBindingRoleNames, ValueBindingRole::kOutput,
                            value_binding_role_name, parse_value_binding_role)

json DynamicStorageRequirement::to_json() const {
  json profiles =
      json_array_of(accepted_profiles, [&](const auto& profile) { return profile.to_string(); });
  return json{{"accepted_profiles", profiles}};
}

json ProviderStorageBindingRequirement::to_json() const {
  return json{{"role", value_binding_role_name(role)},
              {"ordinal", ordinal},
              {"storage", storage.to_json()}};
}

Result<void> OperationProviderDescriptor::validate() const {
  const auto provider_error = [&](std::string problem) {
    return make_error(Status(ErrorCode::kInvalidExecutionPlan,
                             fmt::format("provider `{}` of operation `{}` {}", provider_id.str(),
                                         operation_id.str(), problem))
                          .with_field("provider_id", provider_id.str())
                          .with_field("operation_id", operation_id.str()));
  };
  const auto check_sha = [&](std::string_view what, const std::string& value) -> Result<void> {
    if (is_canonical_sha256(value)) return {};
    return provider_error(fmt::format(
        "has a {} fingerprint `{}` that is not a canonical SHA-256 (64 lowercase hex characters)",
        what, value.substr(0, 80)));
  };
  if (!version.is_stable()) {
    return provider_error(fmt::format("has unstable version {}", version.to_string()));
  }
  FERRITE_RETURN_IF_ERROR(check_sha("operation", operation_fingerprint));
  FERRITE_RETURN_IF_ERROR(check_sha("provider implementation", provider_implementation_fingerprint));
  if (auto valid = validate_identity("resource estimator", resource_estimator_id); !valid) {
    return make_error(
        std::move(valid.error())
            .annotate("provider `{}` of operation `{}`", provider_id.str(), operation_id.str())
            .with_field("provider_id", provider_id.str())
            .with_field("operation_id", operation_id.str()));
  }
  if (!resource_estimator_version.is_stable()) {
    return provider_error(fmt::format("has resource estimator `{}` with unstable version {}",
                                      resource_estimator_id,
                                      resource_estimator_version.to_string()));
  }
  FERRITE_RETURN_IF_ERROR(
      check_sha("resource estimator implementation", resource_estimator_implementation_fingerprint));
  if (dynamic_storage_bindings.empty()) {
    return provider_error("declares no dynamic storage bindings");
  }
  for (size_t i = 0; i < dynamic_storage_bindings.size(); ++i) {
    const auto& binding = dynamic_storage_bindings[i];
    const auto slot =
        fmt::format("{}[{}]", value_binding_role_name(binding.role), binding.ordinal);
    if (binding.storage.accepted_profiles.empty()) {
      return provider_error(
          fmt::format("dynamic storage binding {} accepts no storage profile", slot));
    }
    if (i == 0) continue;
    const auto previous = binding_key(dynamic_storage_bindings[i - 1]);
    if (previous == binding_key(binding)) {
      return provider_error(fmt::format("declares dynamic storage binding {} twice", slot));
    }
    if (previous > binding_key(binding)) {
      return provider_error(fmt::format(
          "dynamic storage binding {} is out of (role, ordinal) order; call normalize()", slot));
    }
  }
  return {};
}

void OperationProviderDescriptor::normalize() {
  std::stable_sort(dynamic_storage_bindings.begin(), dynamic_storage_bindings.end(),
                   [](const auto& a, const auto& b) { return binding_key(a) < binding_key(b); });
}

const DynamicStorageRequirement* OperationProviderDescriptor::dynamic_storage_for(
    ValueBindingRole role, uint32_t ordinal) const {
  for (const auto& binding : dynamic_storage_bindings) {
    if (binding.role == role && binding.ordinal == ordinal) return &binding.storage;
  }
  return nullptr;
}

json OperationProviderDescriptor::to_json() const {
  json bindings = json_array_of(dynamic_storage_bindings, [&](const auto& binding) {
    return binding.to_json();
  });
  return json{{"provider_id", provider_id.str()},
              {"operation_id", operation_id.str()},
              {"operation_fingerprint", operation_fingerprint},
              {"provider_implementation_fingerprint", provider_implementation_fingerprint},
              {"version", version.to_string()},
              {"device_id", device_id.str()},
              {"capabilities", json_identity_array(capabilities)},
              {"accepted_weight_formats", json_identity_array(accepted_weight_formats)},
              {"accepted_quantization_formats", json_identity_array(accepted_quantization_formats)},
              {"dynamic_storage_bindings", bindings},
              {"resource_estimator_id", resource_estimator_id},
              {"resource_estimator_version", resource_estimator_version.to_string()},
              {"resource_estimator_implementation_fingerprint",
               resource_estimator_implementation_fingerprint}};
}

}  // namespace ferrite
