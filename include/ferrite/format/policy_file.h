// ferrite/format/policy_file.h — the runtime policy file.
//
// Contract: a policy file is the envelope plus the body of RuntimePolicy::to_json:
//   {"format":"ferrite.policy","format_version":1,
//    "policy_id":"policy.default","policy_version":"1.0",
//    "memory":{"capacity_bytes":N,"reserve_bytes":N,"maximum_active_sequences":N,
//              "storage_profile_order":["linear/contiguous","fixed_block:65536/paged:65536"]},
//    "admission":{"maximum_scheduled_tokens":N}}
// Shape errors (including storage profile text that does not parse or names
// an invalid combination) are kSerialization naming the JSON path; a
// well-formed policy that RuntimePolicy::validate rejects returns that
// InvalidExecutionPlan error unchanged. `read_runtime_policy` reads the body
// alone (the to_json shape, no envelope) and also validates.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(RuntimePolicy policy, read_policy_file("examples/synthetic.policy.json"));
#pragma once

#include <cstdint>
#include <filesystem>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ferrite/compiler/runtime_policy.h"
#include "ferrite/core/json_reader.h"

namespace ferrite {

inline constexpr std::string_view kPolicyFileFormat = "ferrite.policy";
inline constexpr uint64_t kPolicyFileFormatVersion = 1;

Result<DynamicStorageProfile> read_storage_profile(const JsonCursor& cursor);
Result<RuntimePolicy> read_runtime_policy(const JsonCursor& cursor);
Result<RuntimePolicy> read_policy_file_json(const nlohmann::json& document);
Result<RuntimePolicy> read_policy_file_text(std::string_view text);
Result<RuntimePolicy> read_policy_file(const std::filesystem::path& path);
nlohmann::json policy_file_to_json(const RuntimePolicy& policy);

}  // namespace ferrite
