// ferrite/compiler/estimator_registry.h — the estimators the compiler may
// call, and the compilation target (catalog + estimators) of one device.
//
// Contract: `EstimatorRegistry::create` holds one resource estimator per
// provider id (a null entry or a second estimator for one provider is
// kInvalidExecutionPlan); `find` returns nullptr for an unknown provider
// (one hash of the id's interned address; nothing iterates the table).
// A `CompilationTarget` is what the compiler needs to plan for one device:
// the capability catalog (operations, device, providers) and the estimators
// of those providers. Target catalog files (format/catalog_file.h) and the
// runtime's provider registry (runtime/provider_registry.h) both produce one.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(EstimatorRegistry estimators, EstimatorRegistry::create({estimator}));
//   CompilationTarget target{std::move(catalog), std::move(estimators)};
#pragma once

#include <memory>
#include <vector>

#include "ferrite/catalog/capability_catalog.h"
#include "ferrite/catalog/resource_estimator.h"
#include "ferrite/core/identity_hash_map.h"

namespace ferrite {

// The estimators the compiler may call, one per provider id.
class EstimatorRegistry {
 public:
  // Rejects null entries and two estimators for one provider.
  static Result<EstimatorRegistry> create(
      std::vector<std::shared_ptr<const OperationResourceEstimator>> estimators);
  const OperationResourceEstimator* find(const ProviderId& provider) const;

 private:
  IdentityHashMap<ProviderId, std::shared_ptr<const OperationResourceEstimator>> estimators_;
};

// What the compiler needs to plan for one device.
struct CompilationTarget {
  CapabilityCatalog catalog;
  EstimatorRegistry estimators;
};

}  // namespace ferrite
