// ferrite/compiler/runtime_policy.h — the runtime limits a plan is compiled for.
//
// Contract: a `RuntimePolicy` states the memory budget and admission ceilings
// the compiler plans against, and the dynamic storage profiles it may use, in
// preference order. `validate()` rejects (InvalidExecutionPlan, naming the
// field `policy.<field>`):
//   * version major 0 (unstable);
//   * memory_capacity_bytes == 0;
//   * memory_reserve_bytes >= memory_capacity_bytes;
//   * maximum_active_sequences == 0 or maximum_scheduled_tokens == 0;
//   * an empty storage_profile_order, or one that repeats a profile.
// `to_json()` is the body of a policy file (format/policy_file.h):
//   {"policy_id":"policy.default","policy_version":"1.0",
//    "memory":{"capacity_bytes":N,"reserve_bytes":N,"maximum_active_sequences":N,
//              "storage_profile_order":["linear/contiguous", ...]},
//    "admission":{"maximum_scheduled_tokens":N}}
// and `fingerprint()` is canonical_fingerprint(to_json()). The profile order is
// a preference order, so it is hashed as written (not sorted).
//
// Example:
//   RuntimePolicy policy{PolicyId::literal("policy.default"), {1, 0}, 1u << 30, 64u << 20, 1, 256,
//                        {DynamicStorageProfile::linear_contiguous()}};
//   FERRITE_RETURN_IF_ERROR(policy.validate());
//   std::string fp = policy.fingerprint();
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferrite/catalog/storage_profile.h"
#include "ferrite/core/contract_version.h"
#include "ferrite/core/identity.h"
#include "ferrite/core/status.h"

namespace ferrite {

struct RuntimePolicy {
  PolicyId id;
  ContractVersion version;
  uint64_t memory_capacity_bytes = 0;
  uint64_t memory_reserve_bytes = 0;
  uint64_t maximum_active_sequences = 0;
  uint64_t maximum_scheduled_tokens = 0;
  std::vector<DynamicStorageProfile> storage_profile_order;

  Result<void> validate() const;
  // Bytes available to plans: capacity - reserve (after validate()).
  uint64_t plannable_bytes() const {
    return memory_reserve_bytes < memory_capacity_bytes
               ? memory_capacity_bytes - memory_reserve_bytes
               : 0;
  }
  nlohmann::json to_json() const;
  std::string fingerprint() const;

  friend bool operator==(const RuntimePolicy&, const RuntimePolicy&) = default;
};

}  // namespace ferrite
