#include "ferrite/compiler/weight_materializer.h"

#include <fmt/format.h>

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

// The logical contract a materializer must keep: id → (dims, dtype, required).
std::map<WeightId, json> logical_tensor_contract(const WeightSchema& schema) {
  std::map<WeightId, json> out;
  for (const auto& tensor : schema.tensors) {
    out.emplace(tensor.id, json{{"dimensions", tensor.dimensions},
                                {"element_type", element_type_name(tensor.logical_element_type)},
                                {"required", tensor.required}});
  }
  return out;
}

}  // namespace

const WeightMaterializerDescriptor& identity_weight_materializer_descriptor() {
  static const WeightMaterializerDescriptor descriptor = [] {
    WeightMaterializerDescriptor d{
        .id = WeightMaterializerId::literal(kIdentityWeightMaterializerId),
        .version = {2, 0},
        .implementation_fingerprint = "",
        .fidelity = WeightMaterializationFidelity::kExact,
        .required_capabilities = {}};
    d.implementation_fingerprint = canonical_fingerprint(
        json{{"id", d.id.str()}, {"version", d.version.to_string()}, {"contract", "identity"}});
    return d;
  }();
  return descriptor;
}

Result<void> WeightMaterializerDescriptor::validate() const {
  if (!version.is_stable()) {
    return invalid_plan(fmt::format("weight materializer `{}` has unstable version {}", id.str(),
                                    version.to_string()));
  }
  if (!is_canonical_sha256(implementation_fingerprint)) {
    return invalid_plan(fmt::format(
        "weight materializer `{}` implementation fingerprint is not a canonical sha256", id.str()));
  }
  return {};
}

json WeightMaterializerDescriptor::to_json() const {
  json capabilities = json::array();
  for (const auto& c : required_capabilities) capabilities.push_back(c.str());
  return json{{"id", id.str()},
              {"version", version.to_string()},
              {"implementation_fingerprint", implementation_fingerprint},
              {"fidelity", fidelity == WeightMaterializationFidelity::kExact ? "exact" : "approximate"},
              {"required_capabilities", capabilities}};
}

Result<std::map<WeightId, std::vector<WeightId>>> WeightMaterializer::component_sources(
    const PreparedModelFamily& family, const WeightSchema& execution_schema) const {
  std::map<WeightId, std::vector<WeightId>> sources;
  for (const auto& component : execution_schema.components) {
    if (!family.weight_schema().find_component(component.id)) {
      return invalid_plan(fmt::format(
          "weight materializer `{}` execution component `{}` has no source component of the "
          "same id",
          descriptor().id.str(), component.id.str()));
    }
    sources.emplace(component.id, std::vector<WeightId>{component.id});
  }
  return sources;
}

Result<ExecutionWeightPlan> ExecutionWeightPlan::create(
    const PreparedModelFamily& family, const WeightMaterializerDescriptor& descriptor,
    std::map<WeightId, std::vector<WeightId>> sources, WeightSchema schema) {
  FERRITE_RETURN_IF_ERROR(descriptor.validate());
  schema.normalize();
  FERRITE_RETURN_IF_ERROR(schema.validate(family.family_id()));
  const WeightSchema& source = family.weight_schema();
  if (logical_tensor_contract(schema) != logical_tensor_contract(source)) {
    return invalid_plan(fmt::format(
        "weight materializer `{}`: execution weight schema changes the prepared family's logical "
        "tensor contract",
        descriptor.id.str()));
  }
  std::set<WeightId> used_sources;
  for (const auto& component : schema.components) {
    auto it = sources.find(component.id);
    if (it == sources.end() || it->second.empty()) {
      return invalid_plan(fmt::format("execution weight component `{}` has no source components",
                                      component.id.str()));
    }
    std::set<WeightId> unique(it->second.begin(), it->second.end());
    if (unique.size() != it->second.size()) {
      return invalid_plan(fmt::format(
          "execution weight component `{}` lists a source component twice", component.id.str()));
    }
    for (const auto& source_id : it->second) {
      if (!source.find_component(source_id)) {
        return invalid_plan(fmt::format(
            "execution weight component `{}` names unknown source component `{}`",
            component.id.str(), source_id.str()));
      }
      used_sources.insert(source_id);
    }
  }
  if (sources.size() != schema.components.size()) {
    return invalid_plan("execution weight sources name components the execution schema lacks");
  }
  for (const auto& component : source.components) {
    if (component.required && !used_sources.contains(component.id)) {
      return invalid_plan(fmt::format(
          "required source weight component `{}` is not used by the execution schema",
          component.id.str()));
    }
  }
  return ExecutionWeightPlan(source.fingerprint(), descriptor, std::move(sources),
                             std::move(schema));
}

ExecutionWeightPlan::ExecutionWeightPlan(std::string source_fp,
                                         WeightMaterializerDescriptor materializer,
                                         std::map<WeightId, std::vector<WeightId>> sources,
                                         WeightSchema schema)
    : source_schema_fingerprint_(std::move(source_fp)),
      materializer_(std::move(materializer)),
      sources_(std::move(sources)),
      schema_(std::move(schema)) {
  fingerprint_ = canonical_fingerprint(to_json());
}

json ExecutionWeightPlan::to_json() const {
  json sources = json::object();
  for (const auto& [id, list] : sources_) {
    json ids = json::array();
    for (const auto& s : list) ids.push_back(s.str());
    sources[id.str()] = ids;
  }
  return json{{"source_schema_fingerprint", source_schema_fingerprint_},
              {"materializer", materializer_.to_json()},
              {"component_sources", sources},
              {"schema", schema_.to_json()}};
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
    return invalid_plan(fmt::format("at most {} weight materializers may be registered",
                                    kMaxMaterializers));
  }
  for (auto& materializer : others) {
    if (!materializer) return invalid_plan("weight materializer registry received a null entry");
    const auto& descriptor = materializer->descriptor();
    FERRITE_RETURN_IF_ERROR(descriptor.validate());
    if (!registry.materializers_.emplace(descriptor.id, materializer).second) {
      return invalid_plan(fmt::format("weight materializer `{}` is registered twice",
                                      descriptor.id.str()));
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
    return invalid_plan(fmt::format("weight materializer `{}` is not registered",
                                    selection.materializer_id.str()));
  }
  const auto& descriptor = materializer->descriptor();
  if (descriptor.fidelity == WeightMaterializationFidelity::kApproximate) {
    return make_error(Status(ErrorCode::kWeightMaterializerQualityApprovalRequired,
                             fmt::format("weight materializer `{}` is approximate and requires "
                                         "explicit numerical-quality approval",
                                         descriptor.id.str()))
                          .with_field("materializer_id", descriptor.id.str()));
  }
  FERRITE_ASSIGN_OR_RETURN(WeightSchema schema, materializer->execution_schema(family));
  schema.normalize();
  FERRITE_ASSIGN_OR_RETURN(auto sources, materializer->component_sources(family, schema));
  return ExecutionWeightPlan::create(family, descriptor, std::move(sources), std::move(schema));
}

}  // namespace ferrite
