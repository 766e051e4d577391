// tests/plan/plan_test_support.h — the reference harness shared by the
// resolution, joint-selection and plan tests: the spec §12 device, provider,
// policy, and an estimator that counts its calls and can misbehave on purpose.
#pragma once

#include <atomic>
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

// Contiguous storage for every non-weight slot of operation.main
// (input 0 = activation, input 2 = state, output 0).
inline std::vector<ProviderStorageBindingRequirement> contiguous_slots() {
  return {{ValueBindingRole::kInput, 0, DynamicStorageRequirement::contiguous()},
          {ValueBindingRole::kInput, 2, DynamicStorageRequirement::contiguous()},
          {ValueBindingRole::kOutput, 0, DynamicStorageRequirement::contiguous()}};
}

inline OperationProviderDescriptor provider(
    std::string_view id, const OperationDescriptor& op,
    std::vector<ProviderStorageBindingRequirement> slots = contiguous_slots()) {
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
      .dynamic_storage_bindings = std::move(slots),
      .resource_estimator_id = "estimator.reference",
      .resource_estimator_version = {1, 0},
      .resource_estimator_implementation_fingerprint = sha256_hex("estimator.reference")};
}

// How the test estimator behaves: correctly (spec §12 "Correct": alignment 16,
// 64 B invocation scratch, 32 B plan persistent), or in one specific wrong way.
enum class Behaviour { kCorrect, kArenaNeeds64, kWrongId, kWrongVersion, kWrongImplementation,
                       kWrongInputClaim, kAlignment3, kMissingScratch,
                       kAffineScratch /* 8 B + 16 B per sequence + 4 B per token */,
                       kPagedScratchWhenAccelerated /* a `*.accelerated` provider's scratch
                                                       needs a paged profile */ };

class CountingEstimator final : public OperationResourceEstimator {
 public:
  explicit CountingEstimator(OperationProviderDescriptor descriptor,
                             Behaviour behaviour = Behaviour::kCorrect)
      : descriptor_(std::move(descriptor)), behaviour_(behaviour) {}
  const OperationProviderDescriptor& descriptor() const override { return descriptor_; }
  Result<OperationResourceEstimate> estimate_resources(
      const OperationResourceEstimateRequest& request) const override {
    ++calls;
    OperationResourceEstimate e{
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
    switch (behaviour_) {
      case Behaviour::kArenaNeeds64:
        for (const auto& b : request.values) {
          for (const auto& c : b.storage().components()) {
            if (c.resource_id.str().starts_with("resource/weight-arena/")) {
              e.value_alignment_bytes = 64;
            }
          }
        }
        break;
      case Behaviour::kWrongId: e.estimator_id = "estimator.other"; break;
      case Behaviour::kWrongVersion: e.estimator_version = {2, 0}; break;
      case Behaviour::kWrongImplementation:
        e.estimator_implementation_fingerprint = sha256_hex("x");
        break;
      case Behaviour::kWrongInputClaim: e.claimed_input_fingerprint = sha256_hex("forged"); break;
      case Behaviour::kAlignment3: e.value_alignment_bytes = 3; break;
      case Behaviour::kMissingScratch: e.scratch.reset(); break;
      case Behaviour::kAffineScratch:
        e.scratch->formula = WorkspaceAffine{.fixed = 8, .per_sequence = 16, .per_token = 4};
        break;
      case Behaviour::kPagedScratchWhenAccelerated:
        if (descriptor_.provider_id.str().ends_with(".accelerated")) {
          e.scratch->storage = DynamicStorageRequirement{
              {DynamicStorageProfile::parse("fixed_block:65536/paged:65536").value()}};
        }
        break;
      case Behaviour::kCorrect: break;
    }
    return e;
  }
  // What it says of storage (its correct behaviour reads none; the
  // kArenaNeeds64 one does).
  bool reads_value_storage() const override { return reads_storage; }
  mutable std::atomic<int> calls{0};
  bool reads_storage = true;

 private:
  OperationProviderDescriptor descriptor_;
  Behaviour behaviour_;
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
      {std::make_shared<CountingEstimator>(provider("provider.operation.reference", op))}));
  WeightMaterializerRegistry materializers = WeightMaterializerRegistry::identity_only();
  PreparedModelFamily family = testing::synthetic_family();
  ProgramPlanCompileOptions options = testing::synthetic_options();
  RuntimePolicy runtime_policy = policy();

  Result<ProgramPlanCompilation> compile() const {
    return ProgramPlanCompiler::compile(family, catalog, runtime_policy, estimators, materializers,
                                        options);
  }
  Result<void> verify(std::string_view text) const {
    FERRITE_RETURN_IF_ERROR(verify_plan_json(text, family, catalog, runtime_policy, estimators,
                                             materializers, options));
    return {};
  }
};

}  // namespace ferrite::plan_testing
