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

// What is wrong with a provider descriptor, as the rest of "provider `p` of
// operation `o` <problem>"; "" when nothing is. validate() checks the
// resource estimator id between `leading_problem` and `trailing_problem`.

std::string sha_problem(std::string_view what, const std::string& value) {
  if (is_canonical_sha256(value)) return "";
  return fmt::format(
      "has a {} fingerprint `{}` that is not a canonical SHA-256 (64 lowercase hex characters)",
      what, value.substr(0, 80));
}

std::string leading_problem(const OperationProviderDescriptor& provider) {
  if (!provider.version.is_stable()) {
    return fmt::format("has unstable version {}", provider.version.to_string());
  }
  if (std::string problem = sha_problem("operation", provider.operation_fingerprint);
      !problem.empty()) {
    return problem;
  }
  return sha_problem("provider implementation", provider.provider_implementation_fingerprint);
}

std::string trailing_problem(const OperationProviderDescriptor& provider) {
  if (!provider.resource_estimator_version.is_stable()) {
    return fmt::format("has resource estimator `{}` with unstable version {}",
                       provider.resource_estimator_id,
                       provider.resource_estimator_version.to_string());
  }
  if (std::string problem = sha_problem("resource estimator implementation",
                                        provider.resource_estimator_implementation_fingerprint);
      !problem.empty()) {
    return problem;
  }
  const auto& bindings = provider.dynamic_storage_bindings;
  if (bindings.empty()) return "declares no dynamic storage bindings";
  for (size_t i = 0; i < bindings.size(); ++i) {
    const auto& binding = bindings[i];
    const auto slot = fmt::format("{}[{}]", value_binding_role_name(binding.role), binding.ordinal);
    if (binding.storage.accepted_profiles.empty()) {
      return fmt::format("dynamic storage binding {} accepts no storage profile", slot);
    }
    if (i == 0) continue;
    const auto previous = binding_key(bindings[i - 1]);
    if (previous == binding_key(binding)) {
      return fmt::format("declares dynamic storage binding {} twice", slot);
    }
    if (previous > binding_key(binding)) {
      return fmt::format(
          "dynamic storage binding {} is out of (role, ordinal) order; call normalize()", slot);
    }
  }
  return "";
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
  std::string problem = leading_problem(*this);
  if (problem.empty()) {
    if (auto valid = validate_identity("resource estimator", resource_estimator_id); !valid) {
      return make_error(
          std::move(valid.error())
              .annotate("provider `{}` of operation `{}`", provider_id.str(), operation_id.str())
              .with_field("provider_id", provider_id.str())
              .with_field("operation_id", operation_id.str()));
    }
    problem = trailing_problem(*this);
  }
  if (problem.empty()) return {};
  return make_error(ErrorCode::kInvalidExecutionPlan, "provider `{}` of operation `{}` {}",
                    provider_id.str(), operation_id.str(), problem)
      .with_field("provider_id", provider_id.str())
      .with_field("operation_id", operation_id.str());
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
