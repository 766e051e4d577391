#include "ferrite/plan/plan_node.h"

#include "ferrite/core/enum_names.h"

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
  json ids = json::array();
  for (const auto& id : resource_ids) ids.push_back(id.str());
  return json{{"state_id", state_id.str()},
              {"access", tensor_access_name(access)},
              {"lifetime", state_lifetime_name(lifetime)},
              {"resource_ids", std::move(ids)}};
}

namespace {

json optional_id(const std::optional<ResourceId>& id) {
  return id ? json(id->str()) : json(nullptr);
}

}  // namespace

json PlanNode::to_json() const {
  json deps = json::array();
  for (const auto& d : dependencies) deps.push_back(d.str());
  json capabilities = json::array();
  for (const auto& c : required_capabilities) capabilities.push_back(c.str());
  json attrs = json::object();
  for (const auto& [attribute, v] : attributes) attrs[attribute.str()] = semantic_value_to_json(v);
  json rejected = json::array();
  for (const auto& [rejected_id, reason] : rejected_providers) {
    rejected.push_back(json{{"provider_id", rejected_id.str()},
                            {"reason", plan_reject_reason_to_json(reason)}});
  }
  json compatible = json::array();
  for (const auto& c : compatible_providers) compatible.push_back(c.str());
  json bindings = json::array();
  for (const auto& b : values) bindings.push_back(b.to_json());
  json aliases = json::array();
  for (const auto& a : exact_aliases) aliases.push_back(a.to_json());
  json effects = json::array();
  for (const auto& e : state_effects) effects.push_back(e.to_json());
  json all = json::array();
  for (const auto& r : resources) all.push_back(r.str());
  return json{{"id", id.str()},
              {"dependencies", std::move(deps)},
              {"operation_id", operation_id.str()},
              {"operation_version", operation_version.to_string()},
              {"operation_fingerprint", operation_fingerprint},
              {"provider_implementation_fingerprint", provider_implementation_fingerprint},
              {"required_capabilities", std::move(capabilities)},
              {"attributes", std::move(attrs)},
              {"work", work_spec_to_json(work)},
              {"provider_id", provider_id.str()},
              {"selection_reason", plan_selection_reason_name(selection_reason)},
              {"rejected_providers", std::move(rejected)},
              {"compatible_providers", std::move(compatible)},
              {"provider_resources", provider_resources.to_json()},
              {"values", std::move(bindings)},
              {"exact_aliases", std::move(aliases)},
              {"state_effects", std::move(effects)},
              {"scratch_resource", optional_id(scratch_resource)},
              {"binding_resource", optional_id(binding_resource)},
              {"persistent_resource", optional_id(persistent_resource)},
              {"resources", std::move(all)}};
}

}  // namespace ferrite
