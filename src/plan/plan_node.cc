#include "ferrite/plan/plan_node.h"

#include "ferrite/core/json_array.h"
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
  json ids = json_array_of(resource_ids, [&](const auto& id) { return id.str(); });
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
  json deps = json_array_of(dependencies, [&](const auto& d) { return d.str(); });
  json capabilities = json_array_of(required_capabilities, [&](const auto& c) { return c.str(); });
  json attrs = json::object();
  for (const auto& [attribute, v] : attributes) attrs[attribute.str()] = semantic_value_to_json(v);
  json rejected = json::array();
  for (const auto& [rejected_id, reason] : rejected_providers) {
    rejected.push_back(json{{"provider_id", rejected_id.str()},
                            {"reason", plan_reject_reason_to_json(reason)}});
  }
  json compatible = json_array_of(compatible_providers, [&](const auto& c) { return c.str(); });
  json bindings = json_array_of(values, [&](const auto& b) { return b.to_json(); });
  json aliases = json_array_of(exact_aliases, [&](const auto& a) { return a.to_json(); });
  json effects = json_array_of(state_effects, [&](const auto& e) { return e.to_json(); });
  json all = json_array_of(resources, [&](const auto& r) { return r.str(); });
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
