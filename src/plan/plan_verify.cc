#include "ferrite/plan/plan_verify.h"

#include <fmt/format.h>

#include "ferrite/core/fingerprint.h"

namespace ferrite {

std::string first_json_difference(const nlohmann::json& expected, const nlohmann::json& actual,
                                  const std::string& path) {
  if (expected.type() != actual.type()) return path;
  if (expected.is_object()) {
    for (auto it = expected.begin(); it != expected.end(); ++it) {
      const std::string child = path + "." + it.key();
      if (!actual.contains(it.key())) return child;
      std::string diff = first_json_difference(it.value(), actual.at(it.key()), child);
      if (!diff.empty()) return diff;
    }
    for (auto it = actual.begin(); it != actual.end(); ++it) {
      if (!expected.contains(it.key())) return path + "." + it.key();
    }
    return {};
  }
  if (expected.is_array()) {
    const size_t common = std::min(expected.size(), actual.size());
    for (size_t i = 0; i < common; ++i) {
      std::string diff =
          first_json_difference(expected[i], actual[i], fmt::format("{}[{}]", path, i));
      if (!diff.empty()) return diff;
    }
    if (expected.size() != actual.size()) return fmt::format("{}[{}]", path, common);
    return {};
  }
  return expected == actual ? std::string() : path;
}

Result<void> verify_plan_json(std::string_view plan_text, const PreparedModelFamily& family,
                              const CapabilityCatalog& catalog, const RuntimePolicy& policy,
                              const EstimatorRegistry& estimators,
                              const WeightMaterializerRegistry& materializers,
                              const ProgramPlanCompileOptions& options) {
  if (plan_text.size() > kMaxPlanJsonBytes) {
    return serialization_error(fmt::format("plan text is {} bytes, over the {} byte limit",
                                           plan_text.size(), kMaxPlanJsonBytes));
  }
  nlohmann::json wire = nlohmann::json::parse(plan_text, nullptr, /*allow_exceptions=*/false);
  if (wire.is_discarded()) return serialization_error("plan text is not valid JSON");
  // The schema marker first, before any nested field.
  const nlohmann::json* schema = nullptr;
  if (wire.is_object() && wire.contains("payload") && wire["payload"].is_object() &&
      wire["payload"].contains("schema")) {
    schema = &wire["payload"]["schema"];
  }
  if (schema == nullptr || !schema->is_string() || schema->get<std::string>() != kPlanSchema) {
    return make_error(ErrorCode::kUnsupportedPlanSchema,
                      fmt::format("plan schema {} is not supported, expected `{}`",
                                  schema ? schema->dump() : std::string("(missing)"), kPlanSchema));
  }
  if (!wire.contains("plan_hash") || !wire["plan_hash"].is_string()) {
    return serialization_error("plan lacks a string `plan_hash`");
  }
  const std::string recomputed = plan_payload_hash(wire["payload"]);
  if (recomputed != wire["plan_hash"].get<std::string>()) {
    return make_error(ErrorCode::kPlanHashMismatch,
                      fmt::format("plan hash {} differs from the payload's hash {}",
                                  wire["plan_hash"].get<std::string>(), recomputed));
  }
  FERRITE_ASSIGN_OR_RETURN(auto rebuilt, ProgramPlanCompiler::compile(family, catalog, policy,
                                                                      estimators, materializers,
                                                                      options));
  const nlohmann::json expected = rebuilt.plan.to_json();
  if (canonical_json(expected) != canonical_json(wire)) {
    std::string path = first_json_difference(expected, wire);
    if (path.empty()) path = "$";
    return make_error(Status(ErrorCode::kInvalidExecutionPlan,
                             fmt::format("plan differs from the trusted rebuild at {}", path))
                          .with_field("json_path", path));
  }
  return {};
}

}  // namespace ferrite
