#include "ferrite/compiler/runtime_policy.h"

#include <set>

#include <fmt/format.h>

#include "ferrite/core/fingerprint.h"

namespace ferrite {
namespace {

Error policy_error(const RuntimePolicy& policy, std::string_view field, std::string_view reason,
                   SourceLocation location = SourceLocation::current()) {
  return make_error(ErrorCode::kInvalidExecutionPlan,
                    fmt::format("runtime policy `{}` field `policy.{}` is invalid: {}",
                                policy.id.str(), field, reason),
                    location)
      .with_field("policy_id", policy.id.str())
      .with_field("field", fmt::format("policy.{}", field));
}

}  // namespace

Result<void> RuntimePolicy::validate() const {
  if (!version.is_stable()) {
    return policy_error(*this, "policy_version",
                        fmt::format("version {} is unstable (major 0)", version.to_string()));
  }
  if (memory_capacity_bytes == 0) {
    return policy_error(*this, "memory.capacity_bytes", "must be greater than zero");
  }
  if (memory_reserve_bytes >= memory_capacity_bytes) {
    return policy_error(*this, "memory.reserve_bytes",
                        fmt::format("reserve {} must be smaller than the capacity {}",
                                    memory_reserve_bytes, memory_capacity_bytes));
  }
  if (maximum_active_sequences == 0) {
    return policy_error(*this, "memory.maximum_active_sequences", "must be greater than zero");
  }
  if (maximum_scheduled_tokens == 0) {
    return policy_error(*this, "admission.maximum_scheduled_tokens", "must be greater than zero");
  }
  if (storage_profile_order.empty()) {
    return policy_error(*this, "memory.storage_profile_order", "must not be empty");
  }
  std::set<DynamicStorageProfile> seen;
  for (const auto& profile : storage_profile_order) {
    if (!seen.insert(profile).second) {
      return policy_error(*this, "memory.storage_profile_order",
                          fmt::format("repeats profile `{}`", profile.to_string()));
    }
  }
  return {};
}

nlohmann::json RuntimePolicy::to_json() const {
  nlohmann::json profiles = nlohmann::json::array();
  for (const auto& profile : storage_profile_order) profiles.push_back(profile.to_string());
  return nlohmann::json{
      {"policy_id", id.str()},
      {"policy_version", version.to_string()},
      {"memory",
       {{"capacity_bytes", memory_capacity_bytes},
        {"reserve_bytes", memory_reserve_bytes},
        {"maximum_active_sequences", maximum_active_sequences},
        {"storage_profile_order", profiles}}},
      {"admission", {{"maximum_scheduled_tokens", maximum_scheduled_tokens}}}};
}

std::string RuntimePolicy::fingerprint() const { return canonical_fingerprint(to_json()); }

}  // namespace ferrite
