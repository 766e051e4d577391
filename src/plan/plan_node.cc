#include "ferrite/plan/plan_node.h"

#include "ferrite/catalog/canonical_encoding.h"
#include "ferrite/core/canonical_encoder.h"
#include "ferrite/core/json_array.h"
#include "ferrite/core/enum_names.h"
#include "ferrite/core/tensor_json.h"

namespace ferrite {

using nlohmann::json;

constexpr EnumNames<PlanSelectionReason, 3> kSelectionReasonNames{
    "plan selection reason",
    {{{PlanSelectionReason::kPreferredCompatible, "preferred_compatible"},
      {PlanSelectionReason::kFallbackFromPreferred, "fallback_from_preferred"},
      {PlanSelectionReason::kDeterministicCompatible, "deterministic_compatible"}}}};
static_assert(kSelectionReasonNames.covers_in_order(PlanSelectionReason::kDeterministicCompatible));

std::string_view plan_selection_reason_name(PlanSelectionReason reason) {
  return kSelectionReasonNames.name(reason, "unknown");
}

std::string_view plan_alias_kind_name(PlanAliasKind kind) {
  return kind == PlanAliasKind::kMust ? "must" : "may";
}

json PlanExactAlias::to_json() const {
  return json{{"output_value_id", output_value_id.str()},
              {"output_ordinal", output_ordinal},
              {"input_value_id", input_value_id.str()},
              {"input_ordinal", input_ordinal},
              {"kind", plan_alias_kind_name(kind)}};
}

json StateEffect::to_json() const {
  json ids = json_array_of(resource_ids, [&](const auto& id) { return id.str(); });
  return json{{"state_id", state_id.str()},
              {"access", tensor_access_name(access)},
              {"lifetime", state_lifetime_name(lifetime)},
              {"resource_ids", std::move(ids)}};
}

namespace {

// A workspace member, left out when the estimate has none.
void workspace(LiteralKey name, const std::optional<ProviderWorkspaceRequirement>& w,
               CanonicalEncoder& out) {
  if (!w) return;
  out.key(name);
  encode_canonical(*w, out);
}

// The node's bindings of one role, in ordinal order: the value id alone when
// the access is the role's usual one (inputs read, outputs write) and the
// value may not alias; otherwise {"access","alias","value_id"}.
void value_rows(const std::vector<ResolvedValueBinding>& values, ValueBindingRole role,
                CanonicalEncoder& out) {
  const TensorAccess usual = role == ValueBindingRole::kInput ? TensorAccess::kRead
                                                              : TensorAccess::kWrite;
  out.begin_array();
  for (const ResolvedValueBinding& binding : values) {
    if (binding.role() != role) continue;
    if (binding.access() == usual && std::holds_alternative<NoAlias>(binding.alias())) {
      out.string(binding.value_id());
      continue;
    }
    out.begin_object();
    out.key("access");
    out.string(tensor_access_name(binding.access()));
    out.key("alias");
    encode_canonical(binding.alias(), out);
    out.key("value_id");
    out.string(binding.value_id());
    out.end_object();
  }
  out.end_array();
}

}  // namespace

// Keys in byte-wise order; members that are empty or null are left out.
// Compared with ferrite.plan/1, the node leaves out
// what the payload's tables hold once per plan: `operation_fingerprint` and
// `operation_version` (`operations`), `provider_implementation_fingerprint`
// and the estimator's id, version and implementation fingerprint
// (`providers`), and each value's tensor, usage, storage and weight
// (`values`); and what a reader derives: `resources` (the union of the
// resources its values, workspaces and state effects name) and the estimate's
// `estimate_fingerprint` (the hash of the estimate's other fields, which the
// node and the `providers` row hold). ferrite.plan/3 also leaves out the
// defaults: `compatible_providers` when it is `[provider_id]` alone, and
// `selection_reason` when it is `deterministic_compatible`.
void PlanNode::encode_canonical(CanonicalEncoder& out) const {
  out.begin_object();
  if (!attributes.empty()) {
    out.key("attributes");
    out.begin_object();
    for (const auto& [attribute, value] : attributes) {
      out.key(attribute);
      encode_semantic_value(value, out);
    }
    out.end_object();
  }
  if (binding_resource) {
    out.key("binding_resource");
    out.string(*binding_resource);
  }
  // Absent when the chosen provider was the only compatible one.
  if (!(compatible_providers.size() == 1 && compatible_providers.front() == provider_id)) {
    out.key("compatible_providers");
    out.id_array(compatible_providers);
  }
  out.key("dependencies");
  out.id_array(dependencies);
  if (!exact_aliases.empty()) {
    out.key("exact_aliases");
    out.begin_array();
    for (const PlanExactAlias& alias : exact_aliases) {
      out.begin_object();
      out.key("input_ordinal");
      out.unsigned_integer(alias.input_ordinal);
      out.key("input_value_id");
      out.string(alias.input_value_id);
      out.key("kind");
      out.string(plan_alias_kind_name(alias.kind));
      out.key("output_ordinal");
      out.unsigned_integer(alias.output_ordinal);
      out.key("output_value_id");
      out.string(alias.output_value_id);
      out.end_object();
    }
    out.end_array();
  }
  out.key("id");
  out.string(id);
  out.key("inputs");
  value_rows(values.vector(), ValueBindingRole::kInput, out);
  out.key("operation_id");
  out.string(operation_id);
  out.key("outputs");
  value_rows(values.vector(), ValueBindingRole::kOutput, out);
  if (persistent_resource) {
    out.key("persistent_resource");
    out.string(*persistent_resource);
  }
  out.key("provider_id");
  out.string(provider_id);
  out.key("provider_resources");
  out.begin_object();
  workspace("binding", provider_resources.binding(), out);
  out.key("estimator_input_fingerprint");
  out.string(provider_resources.estimator_input_fingerprint());
  workspace("persistent", provider_resources.persistent(), out);
  workspace("scratch", provider_resources.scratch(), out);
  out.key("value_alignment_bytes");
  out.unsigned_integer(provider_resources.value_alignment_bytes());
  out.end_object();
  if (!rejected_providers.empty()) {
    out.key("rejected_providers");
    out.begin_array();
    for (const auto& [rejected_id, reason] : rejected_providers) {
      out.begin_object();
      out.key("provider_id");
      out.string(rejected_id);
      out.key("reason");
      ferrite::encode_canonical(reason, out);
      out.end_object();
    }
    out.end_array();
  }
  if (!required_capabilities.empty()) {
    out.key("required_capabilities");
    out.id_array(required_capabilities);
  }
  if (scratch_resource) {
    out.key("scratch_resource");
    out.string(*scratch_resource);
  }
  if (selection_reason != PlanSelectionReason::kDeterministicCompatible) {
    out.key("selection_reason");
    out.string(plan_selection_reason_name(selection_reason));
  }
  if (!state_effects.empty()) {
    out.key("state_effects");
    out.begin_array();
    for (const StateEffect& effect : state_effects) {
      out.begin_object();
      out.key("access");
      out.string(tensor_access_name(effect.access));
      out.key("lifetime");
      out.string(state_lifetime_name(effect.lifetime));
      out.key("resource_ids");
      out.id_array(effect.resource_ids);
      out.key("state_id");
      out.string(effect.state_id);
      out.end_object();
    }
    out.end_array();
  }
  out.key("work");
  encode_work_spec(work, out);
  out.end_object();
}

json PlanNode::to_json() const {
  CanonicalText text;
  encode_canonical(text);
  return json::parse(text.text());
}

}  // namespace ferrite
