#include "ferrite/compiler/weight_materializer.h"

#include "ferrite/core/json_array.h"
#include <algorithm>

#include <fmt/format.h>

#include "ferrite/core/canonical_encoder.h"
#include "ferrite/core/fingerprint.h"

namespace ferrite {
namespace {

using nlohmann::json;

class IdentityWeightMaterializer final : public WeightMaterializer {
 public:
  const WeightMaterializerDescriptor& descriptor() const override {
    return identity_weight_materializer_descriptor();
  }
  Result<WeightSchema> execution_schema(const PreparedModelFamily& family) const override {
    return family.weight_schema();
  }
};

// The logical contract a materializer must keep: id → (dims, dtype,
// required), compared on two normalized schemas (tensors sorted by id).
bool same_logical_tensor_contract(const WeightSchema& a, const WeightSchema& b) {
  if (a.tensors.size() != b.tensors.size()) return false;
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    const WeightTensorSpec& x = a.tensors[i];
    const WeightTensorSpec& y = b.tensors[i];
    if (x.id != y.id || x.dimensions != y.dimensions ||
        x.logical_element_type != y.logical_element_type || x.required != y.required) {
      return false;
    }
  }
  return true;
}

}  // namespace

const WeightMaterializerDescriptor& identity_weight_materializer_descriptor() {
  static const WeightMaterializerDescriptor descriptor = [] {
    WeightMaterializerDescriptor d{
        .id = WeightMaterializerId::literal(kIdentityWeightMaterializerId),
        .version = {2, 0},
        .implementation_fingerprint = "",
        .fidelity = WeightMaterializationFidelity::kExact,
        .required_capabilities = {},
        .quality_contract = std::nullopt};
    d.implementation_fingerprint = canonical_fingerprint(
        json{{"id", d.id.str()}, {"version", d.version.to_string()}, {"contract", "identity"}});
    return d;
  }();
  return descriptor;
}

Result<void> WeightMaterializerDescriptor::validate() const {
  if (!version.is_stable()) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "weight materializer `{}` has unstable version {}", id.str(),
                      version.to_string());
  }
  if (!is_canonical_sha256(implementation_fingerprint)) {
    return make_error(
        ErrorCode::kInvalidExecutionPlan,
        "weight materializer `{}` implementation fingerprint is not a canonical sha256", id.str());
  }
  if (quality_contract) {
    if (fidelity != WeightMaterializationFidelity::kApproximate) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "weight materializer `{}` is exact and cannot declare a quality contract",
                        id.str());
    }
    FERRITE_RETURN_IF_ERROR(quality_contract->validate());
  }
  return {};
}

json WeightMaterializerDescriptor::to_json() const {
  json capabilities = json_array_of(required_capabilities, [&](const auto& c) { return c.str(); });
  json out{{"id", id.str()},
           {"version", version.to_string()},
           {"implementation_fingerprint", implementation_fingerprint},
           {"fidelity", fidelity == WeightMaterializationFidelity::kExact ? "exact" : "approximate"},
           {"required_capabilities", capabilities}};
  // Present only when declared, so exact materializers keep their wire form.
  if (quality_contract) out["quality_contract"] = quality_contract->to_json();
  return out;
}

Result<std::vector<WeightId>> WeightMaterializer::approximate_components(
    const PreparedModelFamily& family, const WeightSchema& execution_schema) const {
  std::vector<WeightId> out;
  if (descriptor().fidelity != WeightMaterializationFidelity::kApproximate) return out;
  FERRITE_ASSIGN_OR_RETURN(auto sources, component_sources(family, execution_schema));
  for (const auto& component : execution_schema.components) {
    const WeightComponentSpec* source = family.weight_schema().find_component(component.id);
    const auto from = sources.find(component.id);
    const bool unchanged = source != nullptr && *source == component && from != sources.end() &&
                           from->second == std::vector<WeightId>{component.id};
    if (!unchanged) out.push_back(component.id);
  }
  return out;  // execution schema order: sorted once normalized
}

Result<void> WeightMaterializer::materialize_component(const WeightComponentSpec& source,
                                                       std::span<const std::byte> source_bytes,
                                                       const WeightComponentSpec& target,
                                                       std::span<std::byte> destination) const {
  if (source.physical_element_type() != target.physical_element_type() ||
      source_bytes.size() != destination.size()) {
    return make_error(
        ErrorCode::kInvalidExecutionPlan,
        "weight materializer `{}` cannot copy component `{}` ({} bytes) into `{}` ({} bytes)",
        descriptor().id.str(), source.id.str(), source_bytes.size(), target.id.str(),
        destination.size());
  }
  std::copy(source_bytes.begin(), source_bytes.end(), destination.begin());
  return {};
}

Result<ComponentQuality> WeightMaterializer::measure_component(
    const WeightComponentSpec&, std::span<const std::byte>, const WeightComponentSpec& target,
    std::span<const std::byte>) const {
  return make_error(ErrorCode::kInvalidExecutionPlan,
                    "weight materializer `{}` cannot measure component `{}`", descriptor().id.str(),
                    target.id.str());
}

Result<std::map<WeightId, std::vector<WeightId>>> WeightMaterializer::component_sources(
    const PreparedModelFamily& family, const WeightSchema& execution_schema) const {
  std::map<WeightId, std::vector<WeightId>> sources;
  for (const auto& component : execution_schema.components) {
    if (!family.weight_schema().find_component(component.id)) {
      return make_error(
          ErrorCode::kInvalidExecutionPlan,
          "weight materializer `{}` execution component `{}` has no source component of the "
          "same id",
          descriptor().id.str(), component.id.str());
    }
    sources.emplace(component.id, std::vector<WeightId>{component.id});
  }
  return sources;
}

Result<ExecutionWeightPlan> ExecutionWeightPlan::create(
    const PreparedModelFamily& family, const WeightMaterializerDescriptor& descriptor,
    std::map<WeightId, std::vector<WeightId>> sources, WeightSchema schema,
    std::optional<WeightQualityApproval> approval) {
  FERRITE_RETURN_IF_ERROR(descriptor.validate());
  schema.normalize();
  const WeightSchema& source = family.weight_schema();
  // The family's own schema was validated when the family was created.
  const bool unchanged = schema == source;
  if (!unchanged) FERRITE_RETURN_IF_ERROR(schema.validate(family.family_id()));
  if (!unchanged && !same_logical_tensor_contract(schema, source)) {
    return make_error(
        ErrorCode::kInvalidExecutionPlan,
        "weight materializer `{}`: execution weight schema changes the prepared family's logical "
        "tensor contract",
        descriptor.id.str());
  }
  std::set<WeightId> used_sources;
  for (const auto& component : schema.components) {
    auto it = sources.find(component.id);
    if (it == sources.end() || it->second.empty()) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "execution weight component `{}` has no source components",
                        component.id.str());
    }
    std::set<WeightId> unique(it->second.begin(), it->second.end());
    if (unique.size() != it->second.size()) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "execution weight component `{}` lists a source component twice",
                        component.id.str());
    }
    for (const auto& source_id : it->second) {
      if (!source.find_component(source_id)) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "execution weight component `{}` names unknown source component `{}`",
                          component.id.str(), source_id.str());
      }
      used_sources.insert(source_id);
    }
  }
  if (sources.size() != schema.components.size()) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "execution weight sources name components the execution schema lacks");
  }
  for (const auto& component : source.components) {
    if (component.required && !used_sources.contains(component.id)) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "required source weight component `{}` is not used by the execution schema",
                        component.id.str());
    }
  }
  const std::string changed_canonical = unchanged ? "" : canonical_json(schema.to_json());
  return ExecutionWeightPlan(family.weight_schema_fingerprint(), descriptor, std::move(sources),
                             std::move(schema), std::move(approval),
                             unchanged ? family.weight_schema_canonical() : changed_canonical);
}

ExecutionWeightPlan::ExecutionWeightPlan(std::string source_fp,
                                         WeightMaterializerDescriptor materializer,
                                         std::map<WeightId, std::vector<WeightId>> sources,
                                         WeightSchema schema,
                                         std::optional<WeightQualityApproval> approval,
                                         std::string_view schema_canonical)
    : source_schema_fingerprint_(std::move(source_fp)),
      materializer_(std::move(materializer)),
      sources_(std::move(sources)),
      schema_(std::move(schema)),
      approval_(std::move(approval)) {
  // canonical_fingerprint(to_json()), streamed in key order.
  CanonicalSha256 hash;
  hash.begin_object();
  hash.key("component_sources");
  hash.begin_object();
  for (const auto& [id, list] : sources_) {
    hash.key(id);
    hash.id_array(list);
  }
  hash.end_object();
  hash.key("materializer");
  hash.json(materializer_.to_json());
  if (approval_) {
    hash.key("quality_approval");
    hash.json(approval_->to_json());
  }
  hash.key("schema");
  hash.canonical_value(schema_canonical);
  hash.key("source_schema_fingerprint");
  hash.string(source_schema_fingerprint_);
  hash.end_object();
  fingerprint_ = hash.hex();
  component_positions_.reserve(schema_.tensors.size());
  for (const WeightTensorSpec& tensor : schema_.tensors) {
    auto refs = schema_.physical_component_refs(tensor.id);
    if (!refs) continue;  // component_positions answers null; the schema names the error
    std::vector<uint32_t> positions;
    positions.reserve(refs->size());
    for (const WeightComponentSpec* component : *refs) {
      positions.push_back(static_cast<uint32_t>(component - schema_.components.data()));
    }
    component_positions_.emplace(tensor.id, std::move(positions));
  }
}

const std::vector<uint32_t>* ExecutionWeightPlan::component_positions(
    const WeightId& tensor_id) const {
  const auto it = component_positions_.find(tensor_id);
  return it == component_positions_.end() ? nullptr : &it->second;
}

json ExecutionWeightPlan::to_json() const {
  json sources = json::object();
  for (const auto& [id, list] : sources_) {
    json ids = json_array_of(list, [&](const auto& s) { return s.str(); });
    sources[id.str()] = ids;
  }
  json out{{"source_schema_fingerprint", source_schema_fingerprint_},
           {"materializer", materializer_.to_json()},
           {"component_sources", sources},
           {"schema", schema_.to_json()}};
  if (approval_) out["quality_approval"] = approval_->to_json();
  return out;
}

WeightMaterializerRegistry WeightMaterializerRegistry::identity_only() {
  WeightMaterializerRegistry registry;
  auto identity = std::make_shared<IdentityWeightMaterializer>();
  registry.materializers_.emplace(identity->descriptor().id, std::move(identity));
  return registry;
}

Result<WeightMaterializerRegistry> WeightMaterializerRegistry::create(
    std::vector<std::shared_ptr<const WeightMaterializer>> others) {
  WeightMaterializerRegistry registry = identity_only();
  if (others.size() + 1 > kMaxMaterializers) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "at most {} weight materializers may be registered", kMaxMaterializers);
  }
  for (auto& materializer : others) {
    if (!materializer) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "weight materializer registry received a null entry");
    }
    const auto& descriptor = materializer->descriptor();
    FERRITE_RETURN_IF_ERROR(descriptor.validate());
    if (!registry.materializers_.emplace(descriptor.id, materializer).second) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "weight materializer `{}` is registered twice", descriptor.id.str());
    }
  }
  return registry;
}

std::vector<WeightMaterializerDescriptor> WeightMaterializerRegistry::descriptors() const {
  std::vector<WeightMaterializerDescriptor> out;
  for (const auto& [id, m] : materializers_) out.push_back(m->descriptor());
  return out;
}

const WeightMaterializer* WeightMaterializerRegistry::find(const WeightMaterializerId& id) const {
  auto it = materializers_.find(id);
  return it == materializers_.end() ? nullptr : it->second.get();
}

Result<ExecutionWeightPlan> WeightMaterializerRegistry::select(
    const PreparedModelFamily& family, const WeightMaterializerSelection& selection) const {
  const WeightMaterializer* materializer = find(selection.materializer_id);
  if (!materializer) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "weight materializer `{}` is not registered",
                      selection.materializer_id.str());
  }
  const auto& descriptor = materializer->descriptor();
  const bool approximate = descriptor.fidelity == WeightMaterializationFidelity::kApproximate;
  if (approximate && !selection.quality_approval) {
    return make_error(ErrorCode::kWeightMaterializerQualityApprovalRequired,
                      "weight materializer `{}` is approximate and requires "
                      "explicit numerical-quality approval (a measured "
                      "approval of every component it approximates)",
                      descriptor.id.str())
        .with_field("materializer_id", descriptor.id.str());
  }
  if (!approximate && selection.quality_approval) {
    return make_error(ErrorCode::kInvalidArgument,
                      "weight materializer `{}` is exact and cannot consume an "
                      "approximate quality approval",
                      descriptor.id.str())
        .with_field("materializer_id", descriptor.id.str());
  }
  FERRITE_ASSIGN_OR_RETURN(WeightSchema schema, materializer->execution_schema(family));
  schema.normalize();
  FERRITE_ASSIGN_OR_RETURN(auto sources, materializer->component_sources(family, schema));
  if (approximate) {
    FERRITE_ASSIGN_OR_RETURN(auto approximated,
                             materializer->approximate_components(family, schema));
    std::sort(approximated.begin(), approximated.end());
    FERRITE_RETURN_IF_ERROR(check_weight_quality_approval(
        *selection.quality_approval, descriptor, family.weight_schema_fingerprint(),
        schema.fingerprint(), approximated));
  }
  return ExecutionWeightPlan::create(family, descriptor, std::move(sources), std::move(schema),
                                     selection.quality_approval);
}

Result<WeightQualityApproval> measure_weight_quality(const WeightMaterializer& materializer,
                                                     const PreparedModelFamily& family,
                                                     const WeightComponentFill& fill) {
  const auto& descriptor = materializer.descriptor();
  FERRITE_ASSIGN_OR_RETURN(WeightSchema schema, materializer.execution_schema(family));
  schema.normalize();
  FERRITE_ASSIGN_OR_RETURN(auto sources, materializer.component_sources(family, schema));
  FERRITE_ASSIGN_OR_RETURN(auto approximated, materializer.approximate_components(family, schema));
  std::sort(approximated.begin(), approximated.end());
  WeightQualityApproval approval{
      .materializer_id = descriptor.id,
      .materializer_version = descriptor.version,
      .materializer_implementation_fingerprint = descriptor.implementation_fingerprint,
      .source_schema_fingerprint = family.weight_schema_fingerprint(),
      .execution_schema_fingerprint = schema.fingerprint(),
      .components = {}};
  for (const WeightId& id : approximated) {
    const WeightComponentSpec* target = schema.find_component(id);
    auto from = sources.find(id);
    if (target == nullptr || from == sources.end() || from->second.size() != 1) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "weight materializer `{}`: approximated component `{}` "
                        "needs exactly one source component",
                        descriptor.id.str(), id.str());
    }
    const WeightComponentSpec* source = family.weight_schema().find_component(from->second[0]);
    if (source == nullptr) {
      return make_error(ErrorCode::kInvalidExecutionPlan, "unknown source component `{}`",
                        from->second[0].str());
    }
    FERRITE_ASSIGN_OR_RETURN(uint64_t source_size, source->physical_bytes());
    FERRITE_ASSIGN_OR_RETURN(uint64_t target_size, target->physical_bytes());
    std::vector<std::byte> source_bytes(source_size), target_bytes(target_size);
    FERRITE_RETURN_IF_ERROR(fill(*source, source_bytes));
    FERRITE_RETURN_IF_ERROR(
        materializer.materialize_component(*source, source_bytes, *target, target_bytes));
    FERRITE_ASSIGN_OR_RETURN(ComponentQuality quality,
                             materializer.measure_component(*source, source_bytes, *target,
                                                            target_bytes));
    quality.component_id = id;
    quality.source_sha256 = sha256_hex(std::string_view(
        reinterpret_cast<const char*>(source_bytes.data()), source_bytes.size()));
    approval.components.push_back(std::move(quality));
  }
  return approval;
}

Result<void> verify_quality_approval(const PreparedModelFamily& family,
                                     const WeightComponentFill& fill,
                                     const ExecutionWeightPlan& execution_weights,
                                     const WeightMaterializer& materializer) {
  const auto& approval = execution_weights.quality_approval();
  if (!approval) return {};
  if (materializer.descriptor() != execution_weights.materializer()) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "materializer `{}` is not the one the execution weights were planned with",
                      materializer.descriptor().id.str());
  }
  FERRITE_ASSIGN_OR_RETURN(WeightQualityApproval measured,
                           measure_weight_quality(materializer, family, fill));
  for (const ComponentQuality& now : measured.components) {
    const ComponentQuality* approved = approval->find(now.component_id);
    if (approved == nullptr) {
      return make_error(ErrorCode::kWeightMaterializerQualityApprovalRequired,
                        "weight component `{}` is approximated but the quality approval "
                        "has no measurement of it",
                        now.component_id.str())
          .with_field("component_id", now.component_id.str());
    }
    FERRITE_RETURN_IF_ERROR(check_measured_quality(*approved, now));
  }
  if (measured.components.size() != approval->components.size()) {
    return make_error(ErrorCode::kWeightMaterializerQualityApprovalRequired,
                      "the quality approval measures {} components; materializer `{}` "
                      "approximates {}",
                      approval->components.size(), materializer.descriptor().id.str(),
                      measured.components.size());
  }
  return {};
}

}  // namespace ferrite
