#include "ferrite/format/policy_file.h"

#include <string>
#include <utility>
#include <vector>

#include "file_envelope.h"

namespace ferrite {
namespace {

Result<RuntimePolicy> read_policy_fields(const JsonCursor& cursor, bool with_envelope) {
  std::vector<std::string_view> allowed = {"policy_id", "policy_version", "memory", "admission"};
  if (with_envelope) {
    allowed.push_back("format");
    allowed.push_back("format_version");
  }
  FERRITE_ASSIGN_OR_RETURN(ObjectReader object, cursor.object(allowed));
  FERRITE_ASSIGN_OR_RETURN(PolicyId id, object.required_identity<PolicyId>("policy_id"));
  FERRITE_ASSIGN_OR_RETURN(ContractVersion version, object.required_version_text("policy_version"));

  FERRITE_ASSIGN_OR_RETURN(JsonCursor memory_cursor, object.required("memory"));
  FERRITE_ASSIGN_OR_RETURN(ObjectReader memory,
                           memory_cursor.object({"capacity_bytes", "reserve_bytes",
                                                 "maximum_active_sequences",
                                                 "storage_profile_order"}));
  FERRITE_ASSIGN_OR_RETURN(uint64_t capacity, memory.required_u64("capacity_bytes"));
  FERRITE_ASSIGN_OR_RETURN(uint64_t reserve, memory.required_u64("reserve_bytes"));
  FERRITE_ASSIGN_OR_RETURN(uint64_t sequences, memory.required_u64("maximum_active_sequences"));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor order_cursor, memory.required("storage_profile_order"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> items, order_cursor.array());
  std::vector<DynamicStorageProfile> order;
  order.reserve(items.size());
  for (const JsonCursor& item : items) {
    FERRITE_ASSIGN_OR_RETURN(DynamicStorageProfile profile, read_storage_profile(item));
    order.push_back(profile);
  }

  FERRITE_ASSIGN_OR_RETURN(JsonCursor admission_cursor, object.required("admission"));
  FERRITE_ASSIGN_OR_RETURN(ObjectReader admission,
                           admission_cursor.object({"maximum_scheduled_tokens"}));
  FERRITE_ASSIGN_OR_RETURN(uint64_t tokens, admission.required_u64("maximum_scheduled_tokens"));

  RuntimePolicy policy{std::move(id), version, capacity, reserve, sequences, tokens,
                       std::move(order)};
  FERRITE_RETURN_IF_ERROR(policy.validate());
  return policy;
}

}  // namespace

Result<DynamicStorageProfile> read_storage_profile(const JsonCursor& cursor) {
  return cursor.parsed_string(DynamicStorageProfile::parse, "storage profile");
}

Result<RuntimePolicy> read_runtime_policy(const JsonCursor& cursor) {
  return read_policy_fields(cursor, /*with_envelope=*/false);
}

Result<RuntimePolicy> read_policy_file_json(const nlohmann::json& document) {
  FERRITE_RETURN_IF_ERROR(check_strict_json_value(document));
  const JsonCursor root(document);
  FERRITE_RETURN_IF_ERROR(
      format_internal::check_envelope(root, kPolicyFileFormat, kPolicyFileFormatVersion));
  return read_policy_fields(root, /*with_envelope=*/true);
}

Result<RuntimePolicy> read_policy_file_text(std::string_view text) {
  FERRITE_ASSIGN_OR_RETURN(nlohmann::json document, parse_strict_json(text));
  return read_policy_file_json(document);
}

Result<RuntimePolicy> read_policy_file(const std::filesystem::path& path) {
  FERRITE_ASSIGN_OR_RETURN(std::string text, read_text_file(path));
  auto policy = read_policy_file_text(text);
  if (!policy) return format_internal::with_file_context(std::move(policy).error(), path);
  return policy;
}

nlohmann::json policy_file_to_json(const RuntimePolicy& policy) {
  nlohmann::json out = policy.to_json();
  out["format"] = kPolicyFileFormat;
  out["format_version"] = kPolicyFileFormatVersion;
  return out;
}

}  // namespace ferrite
