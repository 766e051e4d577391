// ferrite/compiler/compile_options.h — what the caller states explicitly.
//
// Contract (spec §11.1): `ProgramPlanCompileOptions` carries
//   * explicit tensors: every program input's canonical *capacity* tensor
//     (the compiler never guesses, e.g., a one-token input) and, optionally,
//     tensors for intermediates whose contract is intentionally not inferable
//     (for example a strided output);
//   * per-node required capabilities (accumulate) and preferred providers
//     (a preference only; overwrite);
//   * completion retention (values kept readable after the run);
//   * the weight materializer selection (default: exact identity), with the
//     numeric-quality approval an approximate materializer needs;
//   * run settings (optional): the caller's record of how the plan is meant
//     to run — for a model file, its context, token capacity, providers,
//     instruction set, memory and source-weights digest (cli/model_plan.h).
//     The compiler decides nothing from them; the plan carries them as
//     payload `run_settings`, so they are hashed and compared like every
//     other byte (a plan is refused when a rebuild records other settings).
//     `record_run_settings` accepts a JSON object whose members are strings,
//     unsigned integers, booleans, null or arrays of strings (canonical JSON
//     has no floats); anything else is kInvalidArgument naming the member;
//   * compile threads (0, the default: core/parallel_indices.h's
//     default_compile_threads()): how many threads resolve the program's
//     nodes and build its plan nodes. They change how fast a plan is built, never its bytes: each
//     node's resolution lands in its own slot and the first failing node's
//     error is the one reported, as serially. Registered estimators are
//     then called concurrently (resource_estimator.h: estimate_resources
//     is const and must be safe to call from several threads at once).
// Specs are validated when inserted; node and value ids are checked against the
// program by `validate_compile_options` (compiler/tensor_inference.h).
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto options, ProgramPlanCompileOptions::create(
//       {{ProgramValueId::literal("value.tokens"), {{32}, ElementType::kU32, ContiguousLayout{}}}}));
//   options.prefer_provider(NodeId::literal("layer.0.attn"), ProviderId::literal("cpu.fast"));
#pragma once

#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "ferrite/compiler/weight_quality.h"
#include "ferrite/core/identity.h"
#include "ferrite/core/tensor_spec.h"
#include "ferrite/program/prepared_model_family.h"

namespace ferrite {

inline constexpr std::string_view kIdentityWeightMaterializerId = "weight-materializer.identity";

// The set of semantic values kept readable after the terminal completion.
class CompletionRetentionSpec {
 public:
  CompletionRetentionSpec() = default;
  explicit CompletionRetentionSpec(std::set<ProgramValueId> values) : values_(std::move(values)) {}
  // Every node output of the program (the diagnostic "retain-all" plan).
  static CompletionRetentionSpec for_determinism_outputs(const PreparedModelFamily& family);

  bool insert(ProgramValueId value) { return values_.insert(std::move(value)).second; }
  const std::set<ProgramValueId>& values() const { return values_; }
  bool empty() const { return values_.empty(); }

  friend bool operator==(const CompletionRetentionSpec&, const CompletionRetentionSpec&) = default;

 private:
  std::set<ProgramValueId> values_;
};

// How activations get memory: `kPacked` (default) places every activation of
// one storage class in one arena at offsets chosen by liveness
// (plan/activation_placement.h); `kDedicated` is the seed's layout, one
// resource per activation at offset 0, kept for comparison and tests.
enum class ActivationStorage : uint8_t { kPacked, kDedicated };
std::string_view activation_storage_name(ActivationStorage storage);  // "packed", "dedicated"
Result<ActivationStorage> parse_activation_storage(std::string_view name);

// Which weight materializer turns source weights into execution weights, and
// for an approximate one, the numeric-quality approval (weight_quality.h).
struct WeightMaterializerSelection {
  WeightMaterializerId materializer_id = WeightMaterializerId::literal(kIdentityWeightMaterializerId);
  std::optional<WeightQualityApproval> quality_approval;
  friend bool operator==(const WeightMaterializerSelection&,
                         const WeightMaterializerSelection&) = default;
};

class ProgramPlanCompileOptions {
 public:
  // Validates each input spec: "program input `v` is invalid: ...".
  static Result<ProgramPlanCompileOptions> create(
      std::map<ProgramValueId, ProgramTensorSpec> input_tensor_specs);

  // Adds or replaces an explicit tensor: "program value `v` is invalid: ...".
  Result<void> insert_tensor_spec(ProgramValueId value_id, ProgramTensorSpec tensor);
  void require_capability(NodeId node_id, CapabilityId capability) {
    required_capabilities_[std::move(node_id)].insert(std::move(capability));
  }
  void prefer_provider(NodeId node_id, ProviderId provider_id) {
    preferred_providers_.insert_or_assign(std::move(node_id), std::move(provider_id));
  }
  bool retain_completion_value(ProgramValueId value_id) {
    return completion_retention_.insert(std::move(value_id));
  }
  void retain_all_outputs_for_determinism(const PreparedModelFamily& family) {
    completion_retention_ = CompletionRetentionSpec::for_determinism_outputs(family);
  }
  void set_activation_storage(ActivationStorage storage) { activation_storage_ = storage; }
  void set_compile_threads(unsigned threads) { compile_threads_ = threads; }
  // The threads the compile uses: the set count, or the default for 0.
  unsigned compile_threads() const;
  ActivationStorage activation_storage() const { return activation_storage_; }
  void require_weight_materializer(WeightMaterializerId id) {
    weight_materializer_selection_ = {std::move(id), std::nullopt};
  }
  void require_weight_materializer(WeightMaterializerId id, WeightQualityApproval approval) {
    weight_materializer_selection_ = {std::move(id), std::move(approval)};
  }

  const std::map<ProgramValueId, ProgramTensorSpec>& tensor_specs() const { return tensor_specs_; }
  const std::map<NodeId, std::set<CapabilityId>>& required_capabilities() const {
    return required_capabilities_;
  }
  const std::map<NodeId, ProviderId>& preferred_providers() const { return preferred_providers_; }
  const CompletionRetentionSpec& completion_retention() const { return completion_retention_; }
  const WeightMaterializerSelection& weight_materializer_selection() const {
    return weight_materializer_selection_;
  }
  Result<void> record_run_settings(nlohmann::json settings);
  // null when none were recorded.
  const nlohmann::json& run_settings() const { return run_settings_; }

  friend bool operator==(const ProgramPlanCompileOptions&,
                         const ProgramPlanCompileOptions&) = default;

 private:
  ProgramPlanCompileOptions() = default;
  std::map<ProgramValueId, ProgramTensorSpec> tensor_specs_;
  std::map<NodeId, std::set<CapabilityId>> required_capabilities_;
  std::map<NodeId, ProviderId> preferred_providers_;
  CompletionRetentionSpec completion_retention_;
  WeightMaterializerSelection weight_materializer_selection_;
  ActivationStorage activation_storage_ = ActivationStorage::kPacked;
  unsigned compile_threads_ = 0;  // 0: default_compile_threads()
  nlohmann::json run_settings_;  // null, or an object (record_run_settings)
};

}  // namespace ferrite
