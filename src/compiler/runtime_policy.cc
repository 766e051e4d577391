#include "ferrite/compiler/runtime_policy.h"

#include <optional>
#include <set>
#include <string>

#include <fmt/format.h>

#include "ferrite/core/fingerprint.h"

namespace ferrite {
namespace {

// The first rule a runtime policy breaks: its field (below `policy.`) and why.
struct PolicyViolation {
  std::string_view field;
  std::string reason;
};

std::optional<PolicyViolation> first_violation(const RuntimePolicy& policy) {
  if (!policy.version.is_stable()) {
    return PolicyViolation{"policy_version", fmt::format("version {} is unstable (major 0)",
                                                         policy.version.to_string())};
  }
  if (policy.memory_capacity_bytes == 0) {
    return PolicyViolation{"memory.capacity_bytes", "must be greater than zero"};
  }
  if (policy.memory_reserve_bytes >= policy.memory_capacity_bytes) {
    return PolicyViolation{"memory.reserve_bytes",
                           fmt::format("reserve {} must be smaller than the capacity {}",
                                       policy.memory_reserve_bytes, policy.memory_capacity_bytes)};
  }
  if (policy.maximum_active_sequences == 0) {
    return PolicyViolation{"memory.maximum_active_sequences", "must be greater than zero"};
  }
  if (policy.maximum_scheduled_tokens == 0) {
    return PolicyViolation{"admission.maximum_scheduled_tokens", "must be greater than zero"};
  }
  if (policy.storage_profile_order.empty()) {
    return PolicyViolation{"memory.storage_profile_order", "must not be empty"};
  }
  // Every resolution checks its policy: a short order (the usual) is
  // compared pairwise with no allocation, a long one through a set.
  const auto& order = policy.storage_profile_order;
  const auto repeated = [](const DynamicStorageProfile& profile) {
    return PolicyViolation{"memory.storage_profile_order",
                           fmt::format("repeats profile `{}`", profile.to_string())};
  };
  constexpr size_t kPairwiseLimit = 16;
  if (order.size() <= kPairwiseLimit) {
    for (size_t i = 1; i < order.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (order[j] == order[i]) return repeated(order[i]);
      }
    }
    return std::nullopt;
  }
  std::set<DynamicStorageProfile> seen;
  for (const auto& profile : order) {
    if (!seen.insert(profile).second) return repeated(profile);
  }
  return std::nullopt;
}

}  // namespace

Result<void> RuntimePolicy::validate() const {
  const std::optional<PolicyViolation> violation = first_violation(*this);
  if (!violation) return {};
  return make_error(ErrorCode::kInvalidExecutionPlan,
                    "runtime policy `{}` field `policy.{}` is invalid: {}", id.str(),
                    violation->field, violation->reason)
      .with_field("policy_id", id.str())
      .with_field("field", fmt::format("policy.{}", violation->field));
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
