#include "ferrite/compiler/estimator_registry.h"

#include <fmt/format.h>

namespace ferrite {

Result<EstimatorRegistry> EstimatorRegistry::create(
    std::vector<std::shared_ptr<const OperationResourceEstimator>> estimators) {
  EstimatorRegistry registry;
  for (auto& estimator : estimators) {
    if (!estimator) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "estimator registry received a null estimator");
    }
    const ProviderId id = estimator->descriptor().provider_id;
    if (!registry.estimators_.emplace(id, std::move(estimator)).second) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "provider `{}` has more than one resource estimator", id.str());
    }
  }
  return registry;
}

const OperationResourceEstimator* EstimatorRegistry::find(const ProviderId& provider) const {
  auto it = estimators_.find(provider);
  return it == estimators_.end() ? nullptr : it->second.get();
}

}  // namespace ferrite
