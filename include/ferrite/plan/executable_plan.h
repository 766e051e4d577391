// ferrite/plan/executable_plan.h — a plan bound to the catalog it was compiled for.
//
// Contract (spec §8.8): `ExecutablePlan::create(plan, catalog)` requires the
// plan's device id to equal the catalog's device id, the plan's device
// runtime implementation fingerprint to equal the device's, and the plan's
// capability catalog fingerprint to equal `catalog.fingerprint()`; otherwise
// kInvalidExecutionPlan "executable plan differs from its device capability
// catalog" (the message names the field that differs). The executable plan
// owns both, so whatever runs the plan sees exactly the providers it was
// compiled against.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto executable, ExecutablePlan::create(std::move(plan), catalog));
//   executable.device().id;
#pragma once

#include <utility>

#include "ferrite/catalog/capability_catalog.h"
#include "ferrite/plan/execution_plan.h"

namespace ferrite {

class ExecutablePlan {
 public:
  static Result<ExecutablePlan> create(ExecutionPlan plan, CapabilityCatalog catalog);

  const ExecutionPlan& execution_plan() const { return plan_; }
  const DeviceDescriptor& device() const { return catalog_.device(); }
  const CapabilityCatalog& capabilities() const { return catalog_; }
  std::pair<ExecutionPlan, CapabilityCatalog> into_parts() && {
    return {std::move(plan_), std::move(catalog_)};
  }

 private:
  ExecutablePlan(ExecutionPlan plan, CapabilityCatalog catalog)
      : plan_(std::move(plan)), catalog_(std::move(catalog)) {}
  ExecutionPlan plan_;
  CapabilityCatalog catalog_;
};

}  // namespace ferrite
