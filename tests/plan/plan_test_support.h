// tests/plan/plan_test_support.h — the reference harness for plan tests
// (device, provider, estimator, policy), copied from
// tests/compiler/program_resolution_test.cc so plan tests stand alone.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ferrite/plan/program_plan_compiler.h"
#include "ferrite/core/fingerprint.h"
#include "ferrite/plan/plan_verify.h"
#include "support/fixtures.h"

namespace ferrite::plan_testing {

using testing::unwrap;

inline constexpr std::string_view kDevice = "device.reference.0";

inline DynamicStorageProfile linear() { return DynamicStorageProfile::linear_contiguous(); }

inline DeviceDescriptor device() {
  return DeviceDescriptor{.id = DeviceId::literal(kDevice),
                          .device_class = DeviceClass::kReference,
                          .ordinal = 0,
                          .total_memory_bytes = 1 << 20,
                          .runtime_implementation_fingerprint = sha256_hex("runtime"),
                          .capabilities = {CapabilityId::literal("capability.compute")},
                          .dynamic_storage_profiles = {linear()}};
}

inline OperationProviderDescriptor provider(std::string_view id, const OperationDescriptor& op) {
  return OperationProviderDescriptor{
      .provider_id = ProviderId::literal(id),
      .operation_id = op.id,
      .operation_fingerprint = unwrap(op.fingerprint()),
      .provider_implementation_fingerprint = sha256_hex(std::string(id)),
      .version = {1, 0},
      .device_id = DeviceId::literal(kDevice),
      .capabilities = {CapabilityId::literal("capability.compute")},
      .accepted_weight_formats = {WeightFormatId::literal("weight-format.dense")},
      .accepted_quantization_formats = {},
      .dynamic_storage_bindings = {{ValueBindingRole::kInput, 0,
                                    DynamicStorageRequirement::contiguous()},
                                   {ValueBindingRole::kInput, 2,
                                    DynamicStorageRequirement::contiguous()},
                                   {ValueBindingRole::kOutput, 0,
                                    DynamicStorageRequirement::contiguous()}},
      .resource_estimator_id = "estimator.reference",
      .resource_estimator_version = {1, 0},
      .resource_estimator_implementation_fingerprint = sha256_hex("estimator.reference")};
}

class ReferenceEstimator final : public OperationResourceEstimator {
 public:
  explicit ReferenceEstimator(OperationProviderDescriptor descriptor)
      : descriptor_(std::move(descriptor)) {}
  const OperationProviderDescriptor& descriptor() const override { return descriptor_; }
  Result<OperationResourceEstimate> estimate_resources(
      const OperationResourceEstimateRequest& request) const override {
    return OperationResourceEstimate{
        .estimator_id = descriptor_.resource_estimator_id,
        .estimator_version = descriptor_.resource_estimator_version,
        .estimator_implementation_fingerprint =
            descriptor_.resource_estimator_implementation_fingerprint,
        .claimed_input_fingerprint = request.input_fingerprint,
        .value_alignment_bytes = 16,
        .scratch = ProviderWorkspaceRequirement{WorkspaceFixed{64}, 16,
                                                ProviderWorkspaceScope::kInvocation,
                                                DynamicStorageRequirement::contiguous()},
        .binding = std::nullopt,
        .persistent = ProviderWorkspaceRequirement{WorkspaceFixed{32}, 16,
                                                   ProviderWorkspaceScope::kPlan,
                                                   DynamicStorageRequirement::contiguous()}};
  }

 private:
  OperationProviderDescriptor descriptor_;
};

inline RuntimePolicy policy(uint64_t capacity = 4096) {
  return RuntimePolicy{.id = PolicyId::literal("policy.test"),
                       .version = {1, 0},
                       .memory_capacity_bytes = capacity,
                       .memory_reserve_bytes = 128,
                       .maximum_active_sequences = 3,
                       .maximum_scheduled_tokens = 4096,
                       .storage_profile_order = {linear()}};
}

// Everything compile and verify need, built once.
struct PlanHarness {
  OperationDescriptor op = testing::synthetic_operation();
  CapabilityCatalog catalog = unwrap(CapabilityCatalog::create(
      device(), unwrap(OperationCatalog::create({op})),
      {provider("provider.operation.reference", op)}));
  EstimatorRegistry estimators = unwrap(EstimatorRegistry::create(
      {std::make_shared<ReferenceEstimator>(provider("provider.operation.reference", op))}));
  WeightMaterializerRegistry materializers = WeightMaterializerRegistry::identity_only();
  PreparedModelFamily family = testing::synthetic_family();
  ProgramPlanCompileOptions options = testing::synthetic_options();
  RuntimePolicy runtime_policy = policy();

  Result<ProgramPlanCompilation> compile() const {
    return ProgramPlanCompiler::compile(family, catalog, runtime_policy, estimators, materializers,
                                        options);
  }
  Result<void> verify(std::string_view text) const {
    return verify_plan_json(text, family, catalog, runtime_policy, estimators, materializers,
                            options);
  }
};

}  // namespace ferrite::plan_testing
