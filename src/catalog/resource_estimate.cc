#include "ferrite/catalog/resource_estimate.h"

#include <string>
#include <string_view>
#include <utility>

#include <absl/container/flat_hash_map.h>
#include <fmt/format.h>

#include "ferrite/catalog/canonical_encoding.h"
#include "ferrite/core/canonical_encoder.h"
#include "ferrite/core/checked_math.h"
#include "ferrite/core/fingerprint.h"

namespace ferrite {
namespace {

nlohmann::json optional_workspace_json(const std::optional<ProviderWorkspaceRequirement>& w) {
  return w ? w->to_json() : nlohmann::json(nullptr);
}

// "provider `p` resource estimate from estimator `e` <problem>", with both
// ids as fields: the one error every check of a plan's fields reports.
Error estimate_fields_error(std::string_view provider, std::string_view estimator,
                            std::string_view problem) {
  return make_error(ErrorCode::kInvalidExecutionPlan,
                    "provider `{}` resource estimate from estimator `{}` {}", provider, estimator,
                    problem)
      .with_field("provider_id", provider)
      .with_field("estimator_id", estimator);
}

// What is wrong with an estimator's id, version and implementation
// fingerprint, as fields_problem says it; "" when nothing is.
std::string estimator_problem(const std::string& id, const ContractVersion& version,
                              const std::string& implementation_fingerprint) {
  if (auto valid = validate_identity("resource estimator", id); !valid) {
    return fmt::format("has an invalid estimator id: {}", valid.error().message());
  }
  if (!version.is_stable()) {
    return fmt::format("has unstable estimator version {}", version.to_string());
  }
  if (!is_canonical_sha256(implementation_fingerprint)) {
    return fmt::format("has implementation fingerprint `{}` that is not a canonical sha256",
                       implementation_fingerprint);
  }
  return "";
}

// What is wrong with a resource plan's fields, as the rest of "provider `p`
// resource estimate from estimator `e` <problem>"; "" when nothing is. The
// estimator's id, version and implementation fingerprint are not checked
// again: every plan is made by from_provider_output, whose shared estimator
// text passed estimator_problem when it was made, and the fields never
// change after.
std::string fields_problem(const ProviderResourcePlan& plan) {
  // A deferred digest (the compiler's) is canonical by construction and is
  // not computed here; a fingerprint given as text is checked.
  if (!plan.estimator_input_digest().is_canonical_sha256()) {
    return fmt::format("has input fingerprint `{}` that is not a canonical sha256",
                       plan.estimator_input_fingerprint());
  }
  if (!is_power_of_two(plan.value_alignment_bytes())) {
    return fmt::format("has value_alignment_bytes {} that is not a non-zero power of two",
                       plan.value_alignment_bytes());
  }
  struct Slot {
    std::string_view name;
    const std::optional<ProviderWorkspaceRequirement>* workspace;
    bool must_be_invocation;
  };
  for (const Slot& slot :
       {Slot{"scratch", &plan.scratch(), true}, Slot{"binding", &plan.binding(), true},
        Slot{"persistent", &plan.persistent(), false}}) {
    if (!slot.workspace->has_value()) continue;
    const ProviderWorkspaceRequirement& workspace = **slot.workspace;
    const bool is_invocation = workspace.scope == ProviderWorkspaceScope::kInvocation;
    if (slot.must_be_invocation && !is_invocation) {
      return fmt::format("has a {} workspace with scope `{}` (must be invocation)", slot.name,
                         provider_workspace_scope_name(workspace.scope));
    }
    if (!slot.must_be_invocation && is_invocation) {
      return fmt::format("has a {} workspace with scope `invocation` (must outlive one invocation)",
                         slot.name);
    }
    if (std::holds_alternative<WorkspaceShape>(workspace.formula)) {
      return fmt::format("has a {} workspace with an unresolved `shape` formula (the estimator "
                         "resolves it for the node)",
                         slot.name);
    }
    if (auto valid = workspace.validate(); !valid) {
      return fmt::format("has an invalid {} workspace: {}", slot.name, valid.error().message());
    }
  }
  return "";
}

// canonical_fingerprint(plan.fingerprint_material()), streamed in canonical
// key order from the plan's public fields (tests hold the two equal).
std::string estimate_fingerprint_of(const ProviderResourcePlan& plan) {
  thread_local CanonicalSha256 out;
  out.reset();
  auto workspace = [&](const std::optional<ProviderWorkspaceRequirement>& w) {
    if (w) {
      encode_canonical(*w, out);
    } else {
      out.null();
    }
  };
  out.begin_object();
  out.key("binding");
  workspace(plan.binding());
  out.key("estimator_id");
  out.string(plan.estimator_id());
  out.key("estimator_implementation_fingerprint");
  out.string(plan.estimator_implementation_fingerprint());
  out.key("estimator_input_fingerprint");
  out.string(plan.estimator_input_fingerprint());
  out.key("estimator_version");
  out.string(plan.estimator_version().to_string());
  out.key("persistent");
  workspace(plan.persistent());
  out.key("provider_id");
  out.string(plan.provider_id());
  out.key("scratch");
  workspace(plan.scratch());
  out.key("value_alignment_bytes");
  out.unsigned_integer(plan.value_alignment_bytes());
  out.end_object();
  return out.hex();
}

}  // namespace

constinit const ProviderResourcePlan::Workspaces ProviderResourcePlan::kNoWorkspaces{};

Result<ProviderResourcePlan> ProviderResourcePlan::from_provider_output(
    const OperationProviderDescriptor& descriptor, const DeferredSha256& input_fingerprint,
    const OperationResourceEstimate& estimate) {
  return from_provider_output(descriptor, input_fingerprint, OperationResourceEstimate(estimate));
}

Result<ProviderResourcePlan> ProviderResourcePlan::from_provider_output(
    const OperationProviderDescriptor& descriptor, const DeferredSha256& input_fingerprint,
    OperationResourceEstimate&& estimate) {
  const std::string_view provider = descriptor.provider_id.str();
  std::string mismatch;  // the rest of "provider `p` resource estimate <mismatch>"
  if (estimate.estimator_id != descriptor.resource_estimator_id) {
    mismatch = fmt::format("comes from estimator `{}` but the provider registers estimator `{}`",
                           estimate.estimator_id, descriptor.resource_estimator_id);
  } else if (estimate.estimator_version != descriptor.resource_estimator_version) {
    mismatch =
        fmt::format("from estimator `{}` has version {} but the provider registers version {}",
                    estimate.estimator_id, estimate.estimator_version.to_string(),
                    descriptor.resource_estimator_version.to_string());
  } else if (estimate.estimator_implementation_fingerprint !=
             descriptor.resource_estimator_implementation_fingerprint) {
    mismatch = fmt::format(
        "from estimator `{}` has implementation fingerprint `{}` but the provider registers "
        "implementation `{}`",
        estimate.estimator_id, estimate.estimator_implementation_fingerprint,
        descriptor.resource_estimator_implementation_fingerprint);
  } else if (!(estimate.claimed_input_fingerprint == input_fingerprint)) {
    // An echo of the core's own handle is equal without hashing; any other
    // claim is compared as text.
    mismatch =
        fmt::format("from estimator `{}` claims input fingerprint `{}` but the core computed `{}`",
                    estimate.estimator_id, estimate.claimed_input_fingerprint.hex(),
                    input_fingerprint.hex());
  }
  if (!mismatch.empty()) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "provider `{}` resource estimate {}",
                      provider, mismatch)
        .with_field("provider_id", provider)
        .with_field("estimator_id", descriptor.resource_estimator_id);
  }

  ProviderResourcePlan plan(descriptor.provider_id);
  FERRITE_ASSIGN_OR_RETURN(plan.estimator_, shared_estimator(descriptor));
  plan.estimator_input_fingerprint_ = input_fingerprint;
  plan.value_alignment_bytes_ = estimate.value_alignment_bytes;
  if (estimate.scratch || estimate.binding || estimate.persistent) {
    plan.workspaces_ = std::make_shared<const Workspaces>(Workspaces{
        std::move(estimate.scratch), std::move(estimate.binding), std::move(estimate.persistent)});
    plan.estimate_digest_ = std::make_shared<EstimateDigest>();
  }
  const std::string problem = fields_problem(plan);
  if (!problem.empty()) return estimate_fields_error(provider, plan.estimator_id(), problem);
  return plan;
}

ProviderResourcePlan ProviderResourcePlan::with_input_fingerprint(
    DeferredSha256 input_fingerprint) const {
  ProviderResourcePlan plan = *this;
  plan.estimator_input_fingerprint_ = std::move(input_fingerprint);
  // The kept estimate fingerprint covers the input fingerprint: a fresh one.
  if (plan.estimate_digest_ != nullptr) plan.estimate_digest_ = std::make_shared<EstimateDigest>();
  return plan;
}

Result<std::shared_ptr<const ProviderResourcePlan::Estimator>>
ProviderResourcePlan::shared_estimator(const OperationProviderDescriptor& descriptor) {
  const std::string& id = descriptor.resource_estimator_id;
  const ContractVersion& version = descriptor.resource_estimator_version;
  const std::string& implementation = descriptor.resource_estimator_implementation_fingerprint;
  // The thread's last estimator of each id. A hit is an equal, checked text
  // (so an address reused by another catalog cannot alias it); the table
  // starts over past kRemembered ids, so it stays small however many
  // catalogs a thread compiles with.
  constexpr size_t kRemembered = 256;
  thread_local absl::flat_hash_map<std::string, std::shared_ptr<const Estimator>> remembered;
  if (auto it = remembered.find(id); it != remembered.end()) {
    const Estimator& known = *it->second;
    if (known.version == version && known.implementation_fingerprint == implementation) {
      return it->second;
    }
  }
  if (std::string problem = estimator_problem(id, version, implementation); !problem.empty()) {
    return estimate_fields_error(descriptor.provider_id.str(), id, problem);
  }
  auto made = std::make_shared<const Estimator>(Estimator{id, version, implementation});
  if (remembered.size() >= kRemembered) remembered.clear();
  remembered.insert_or_assign(id, made);
  return made;
}

Result<void> ProviderResourcePlan::validate_fields() const {
  const std::string problem = fields_problem(*this);
  if (problem.empty()) return {};
  return estimate_fields_error(provider_id_.str(), estimator_id(), problem);
}

std::string ProviderResourcePlan::estimate_fingerprint() const {
  if (estimate_digest_ == nullptr) return estimate_fingerprint_of(*this);
  run_once(estimate_digest_->once,
           [this] { estimate_digest_->hex = estimate_fingerprint_of(*this); });
  return estimate_digest_->hex;
}

bool operator==(const ProviderResourcePlan& a, const ProviderResourcePlan& b) {
  return a.provider_id_ == b.provider_id_ &&
         (a.estimator_ == b.estimator_ ||
          (a.estimator_id() == b.estimator_id() &&
           a.estimator_version() == b.estimator_version() &&
           a.estimator_implementation_fingerprint() == b.estimator_implementation_fingerprint())) &&
         a.estimator_input_fingerprint_ == b.estimator_input_fingerprint_ &&
         a.value_alignment_bytes_ == b.value_alignment_bytes_ &&
         (a.workspaces_ == b.workspaces_ || a.workspaces() == b.workspaces());
}

// The estimate fingerprint is derived from the fields on demand, so it cannot
// disagree with them: the fields are the whole shape.
Result<void> ProviderResourcePlan::validate_shape() const { return validate_fields(); }

nlohmann::json ProviderResourcePlan::fingerprint_material() const {
  return nlohmann::json{
      {"provider_id", provider_id_.str()},
      {"estimator_id", estimator_id()},
      {"estimator_version", estimator_version().to_string()},
      {"estimator_implementation_fingerprint", estimator_implementation_fingerprint()},
      {"estimator_input_fingerprint", estimator_input_fingerprint_.hex()},
      {"value_alignment_bytes", value_alignment_bytes_},
      {"scratch", optional_workspace_json(scratch())},
      {"binding", optional_workspace_json(binding())},
      {"persistent", optional_workspace_json(persistent())}};
}

nlohmann::json ProviderResourcePlan::to_json() const {
  nlohmann::json out = fingerprint_material();
  out["estimate_fingerprint"] = estimate_fingerprint();
  return out;
}

}  // namespace ferrite
