#include "ferrite/catalog/canonical_encoding.h"

#include "ferrite/core/json_array.h"
#include "ferrite/core/tensor_json.h"
#include "ferrite/program/model_program.h"

namespace ferrite {

// Keys in byte-wise order, as the canonical dump of each to_json() orders them.

void encode_canonical(const ResolvedStorageComponent& component, CanonicalEncoder& out) {
  out.begin_object();
  out.key("component_id");
  if (component.component_id) {
    out.string(*component.component_id);
  } else {
    out.null();
  }
  out.key("element_type");
  out.string(element_type_name(component.element_type));
  out.key("length_bytes");
  out.unsigned_integer(component.length_bytes);
  out.key("offset_bytes");
  out.unsigned_integer(component.offset_bytes);
  out.key("resource_id");
  out.string(component.resource_id);
  out.end_object();
}

void encode_canonical(const ResolvedValueStorage& storage, CanonicalEncoder& out) {
  out.canonical_value(storage.canonical());
}

void encode_canonical(const ResolvedTensorSpec& tensor, CanonicalEncoder& out) {
  out.begin_object();
  out.key("dimensions");
  out.begin_array();
  for (uint64_t d : tensor.dimensions()) out.unsigned_integer(d);
  out.end_array();
  out.key("element_type");
  out.string(element_type_name(tensor.element_type()));
  out.key("layout");
  if (std::holds_alternative<ContiguousLayout>(tensor.layout())) {
    out.string("contiguous");
  } else {
    out.json(layout_to_json(tensor.layout()));
  }
  out.end_object();
}

void encode_canonical(const AliasPolicy& alias, CanonicalEncoder& out) {
  if (std::holds_alternative<NoAlias>(alias)) {
    out.string("no_alias");
    return;
  }
  out.begin_object();
  if (const auto* may = std::get_if<MayAlias>(&alias)) {
    out.key("may_alias");
    out.unsigned_integer(may->tensor_index);
  } else {
    out.key("must_alias");
    out.unsigned_integer(std::get<MustAlias>(alias).tensor_index);
  }
  out.end_object();
}

void encode_canonical(const ResolvedWeightBinding& weight, CanonicalEncoder& out) {
  out.begin_object();
  out.key("components");
  out.begin_array();
  for (const ResolvedWeightComponentLayout& component : weight.components) {
    out.begin_object();
    out.key("component_id");
    out.string(component.component_id);
    out.key("encoding");
    encode_weight_encoding(component.encoding, out);
    out.key("physical_dimensions");
    out.begin_array();
    for (uint64_t d : component.physical_dimensions) out.unsigned_integer(d);
    out.end_array();
    out.key("role");
    out.string(weight_component_role_name(component.role));
    out.end_object();
  }
  out.end_array();
  out.key("format_id");
  out.string(weight.format_id);
  out.key("layout_id");
  out.string(weight.layout_id);
  out.key("physical_layout");
  encode_physical_layout(weight.physical_layout, out);
  out.key("schema_version");
  out.begin_object();
  out.key("major");
  out.unsigned_integer(weight.schema_version.major);
  out.key("minor");
  out.unsigned_integer(weight.schema_version.minor);
  out.end_object();
  out.key("weight_id");
  out.string(weight.weight_id);
  out.end_object();
}

namespace {

// `weight_canonical`, when not empty, is encode_canonical(*binding.weight()).
void encode_binding(const ResolvedValueBinding& binding, std::string_view weight_canonical,
                    CanonicalEncoder& out) {
  out.begin_object();
  out.key("access");
  out.string(tensor_access_name(binding.access()));
  out.key("alias");
  encode_canonical(binding.alias(), out);
  out.key("ordinal");
  out.unsigned_integer(binding.ordinal());
  out.key("role");
  out.string(value_binding_role_name(binding.role()));
  out.key("storage");
  encode_canonical(binding.storage(), out);
  out.key("tensor");
  encode_canonical(binding.tensor(), out);
  out.key("usage");
  out.string(buffer_usage_name(binding.usage()));
  out.key("value_id");
  out.string(binding.value_id());
  out.key("weight");
  if (!binding.weight()) {
    out.null();
  } else if (!weight_canonical.empty()) {
    out.canonical_value(weight_canonical);
  } else {
    encode_canonical(*binding.weight(), out);
  }
  out.end_object();
}

}  // namespace

void encode_canonical(const ResolvedValueBinding& binding, CanonicalEncoder& out) {
  encode_binding(binding, {}, out);
}

std::string encode_canonical_values(const std::vector<ResolvedValueBinding>& values) {
  return encode_canonical_values(values, {});
}

std::string encode_canonical_values(const std::vector<ResolvedValueBinding>& values,
                                    const std::vector<std::string_view>& weight_canonical) {
  CanonicalText out;
  encode_canonical_values(values, weight_canonical, out);
  return out.text();
}

void encode_canonical_values(const std::vector<ResolvedValueBinding>& values,
                             const std::vector<std::string_view>& weight_canonical,
                             CanonicalEncoder& out) {
  out.begin_array();
  for (size_t i = 0; i < values.size(); ++i) {
    encode_binding(values[i],
                   i < weight_canonical.size() ? weight_canonical[i] : std::string_view(), out);
  }
  out.end_array();
}

nlohmann::json estimator_input_material(
    const std::string& prepared_family_fingerprint, const std::string& operation_fingerprint,
    const NodeId& node_id, const OperationId& operation_id,
    const ContractVersion& operation_version,
    const std::map<AttributeId, SemanticValue>& attributes, const ProviderId& provider_id,
    const std::vector<ResolvedValueBinding>& values,
    const std::set<CapabilityId>& required_capabilities,
    const std::set<WeightFormatId>& required_weight_formats,
    const std::set<QuantizationFormatId>& required_quantization_formats) {
  nlohmann::json attribute_json = nlohmann::json::object();
  for (const auto& [id, value] : attributes) attribute_json[id.str()] = semantic_value_to_json(value);
  nlohmann::json value_json = nlohmann::json::array();
  for (const ResolvedValueBinding& binding : values) value_json.push_back(binding.to_json());
  return nlohmann::json{
      {"prepared_family_fingerprint", prepared_family_fingerprint},
      {"operation_fingerprint", operation_fingerprint},
      {"node_id", node_id.str()},
      {"operation_id", operation_id.str()},
      {"operation_version", operation_version.to_string()},
      {"attributes", std::move(attribute_json)},
      {"provider_id", provider_id.str()},
      {"values", std::move(value_json)},
      {"required_capabilities", json_identity_array(required_capabilities)},
      {"required_weight_formats", json_identity_array(required_weight_formats)},
      {"required_quantization_formats", json_identity_array(required_quantization_formats)}};
}

namespace {

// {"<kind>":{"available":"…","required":"…"}}
void version_mismatch(LiteralKey kind, const ContractVersion& required,
                      const ContractVersion& available, CanonicalEncoder& out) {
  out.begin_object();
  out.key(kind);
  out.begin_object();
  out.key("available");
  out.string(available.to_string());
  out.key("required");
  out.string(required.to_string());
  out.end_object();
  out.end_object();
}

// {"<kind>":{"<member>":[ids…]}}, the ids in set order.
template <class Ids>
void id_list(LiteralKey kind, LiteralKey member, const Ids& ids,
             CanonicalEncoder& out) {
  out.begin_object();
  out.key(kind);
  out.begin_object();
  out.key(member);
  out.id_array(ids);
  out.end_object();
  out.end_object();
}

}  // namespace

void encode_canonical(const ProviderCompatibilityRejectReason& reason, CanonicalEncoder& out) {
  if (const auto* r = std::get_if<OperationVersionMismatch>(&reason)) {
    version_mismatch("operation_version_mismatch", r->required, r->available, out);
  } else if (const auto* p = std::get_if<ProviderVersionMismatch>(&reason)) {
    version_mismatch("provider_version_mismatch", p->required, p->available, out);
  } else if (const auto* c = std::get_if<MissingCapabilities>(&reason)) {
    id_list("missing_capabilities", "capabilities", c->capabilities, out);
  } else if (const auto* w = std::get_if<UnsupportedWeightFormats>(&reason)) {
    id_list("unsupported_weight_formats", "formats", w->formats, out);
  } else {
    id_list("unsupported_quantization_formats", "formats",
            std::get<UnsupportedQuantizationFormats>(reason).formats, out);
  }
}

void encode_canonical(const ProviderWorkspaceRequirement& workspace, CanonicalEncoder& out) {
  out.begin_object();
  out.key("alignment_bytes");
  out.unsigned_integer(workspace.alignment_bytes);
  out.key("formula");
  auto member = [&out](LiteralKey name, uint64_t value) {
    out.key(name);
    out.unsigned_integer(value);
  };
  auto open = [&out](LiteralKey kind) {
    out.begin_object();
    out.key(kind);
    out.begin_object();
  };
  auto close = [&out] {
    out.end_object();
    out.end_object();
  };
  if (const auto* f = std::get_if<WorkspaceFixed>(&workspace.formula)) {
    open("fixed");
    member("bytes", f->bytes);
    close();
  } else if (const auto* s = std::get_if<WorkspaceActualSequences>(&workspace.formula)) {
    open("actual_sequences");
    member("bytes_per_sequence", s->bytes_per_sequence);
    close();
  } else if (const auto* t = std::get_if<WorkspaceTokens>(&workspace.formula)) {
    open("tokens");
    member("bytes_per_token", t->bytes_per_token);
    close();
  } else if (const auto* a = std::get_if<WorkspaceAffine>(&workspace.formula)) {
    open("affine");
    member("fixed", a->fixed);
    member("per_sequence", a->per_sequence);
    member("per_token", a->per_token);
    close();
  } else if (const auto* p = std::get_if<WorkspacePages>(&workspace.formula)) {
    open("pages");
    member("bytes_per_page", p->bytes_per_page);
    member("maximum_pages", p->maximum_pages);
    close();
  } else {
    out.json(workspace_formula_to_json(workspace.formula));  // shape: never in a plan
  }
  out.key("scope");
  out.string(provider_workspace_scope_name(workspace.scope));
  out.key("storage");
  out.begin_array();
  for (const DynamicStorageProfile& profile : workspace.storage.accepted_profiles) {
    out.string(profile.to_string());
  }
  out.end_array();
  out.end_object();
}

}  // namespace ferrite
