#include "ferrite/plan/executable_plan.h"

#include <fmt/format.h>

namespace ferrite {

Result<ExecutablePlan> ExecutablePlan::create(ExecutionPlan plan, CapabilityCatalog catalog) {
  const nlohmann::json& payload = plan.header();
  std::string_view differing;  // the first payload field the catalog disagrees with
  if (payload.value("device_id", std::string()) != catalog.device().id.str()) {
    differing = "device_id";
  } else if (payload.value("device_runtime_implementation_fingerprint", std::string()) !=
             catalog.device().runtime_implementation_fingerprint) {
    differing = "device_runtime_implementation_fingerprint";
  } else if (payload.value("capability_catalog_fingerprint", std::string()) !=
             catalog.fingerprint()) {
    differing = "capability_catalog_fingerprint";
  }
  if (!differing.empty()) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "executable plan differs from its device capability catalog: {}", differing)
        .with_field("field", differing);
  }
  return ExecutablePlan(std::move(plan), std::move(catalog));
}

}  // namespace ferrite
