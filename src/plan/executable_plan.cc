#include "ferrite/plan/executable_plan.h"

#include <fmt/format.h>

namespace ferrite {

Result<ExecutablePlan> ExecutablePlan::create(ExecutionPlan plan, CapabilityCatalog catalog) {
  const nlohmann::json& payload = plan.payload();
  const auto differs = [&](std::string_view field) {
    return make_error(Status(ErrorCode::kInvalidExecutionPlan,
                             fmt::format("executable plan differs from its device capability "
                                         "catalog: {}",
                                         field))
                          .with_field("field", std::string(field)));
  };
  if (payload.value("device_id", std::string()) != catalog.device().id.str()) {
    return differs("device_id");
  }
  if (payload.value("device_runtime_implementation_fingerprint", std::string()) !=
      catalog.device().runtime_implementation_fingerprint) {
    return differs("device_runtime_implementation_fingerprint");
  }
  if (payload.value("capability_catalog_fingerprint", std::string()) != catalog.fingerprint()) {
    return differs("capability_catalog_fingerprint");
  }
  return ExecutablePlan(std::move(plan), std::move(catalog));
}

}  // namespace ferrite
