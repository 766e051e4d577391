#include "ferrite/catalog/value_storage.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "ferrite/catalog/canonical_encoding.h"
#include "ferrite/core/canonical_encoder.h"
#include "ferrite/core/checked_math.h"
#include "ferrite/core/enum_names.h"

namespace ferrite {
namespace {

// "component `weight.x` in resource `r`" or "resource `r`" for an unnamed component.
std::string describe_component(const ResolvedStorageComponent& component) {
  if (component.component_id) {
    return fmt::format("storage component `{}` in resource `{}`", component.component_id->str(),
                       component.resource_id.str());
  }
  return fmt::format("storage component in resource `{}`", component.resource_id.str());
}

// The canonical dump of {"components": [component.to_json(), ...]}, in a
// string of its own length: a storage keeps it as long as the storage lives
// (every activation of a compile, in every round), and an encoder's buffer
// starts at 256 bytes, about twice a one-component text.
std::string canonical_components(const std::vector<ResolvedStorageComponent>& components) {
  thread_local CanonicalText out;
  out.reset();
  out.begin_object();
  out.key("components");
  out.begin_array();
  for (const ResolvedStorageComponent& component : components) encode_canonical(component, out);
  out.end_array();
  out.end_object();
  return std::string(out.text());
}

// Overlap within one resource: sort views by (resource, offset) and compare
// neighbours (the furthest end seen so far catches ranges nested inside an
// earlier one).
Result<void> check_no_overlap(const std::vector<ResolvedStorageComponent>& components) {
  std::map<ResourceId, std::vector<const ResolvedStorageComponent*>> by_resource;
  for (const ResolvedStorageComponent& component : components) {
    by_resource[component.resource_id].push_back(&component);
  }
  for (auto& [resource, list] : by_resource) {
    std::sort(list.begin(), list.end(), [](const auto* a, const auto* b) {
      return a->offset_bytes < b->offset_bytes;
    });
    const ResolvedStorageComponent* furthest = nullptr;
    for (const ResolvedStorageComponent* component : list) {
      if (furthest != nullptr && furthest->overlaps(*component)) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "value storage components overlap in resource `{}`: {} "
                          "[{}, +{}) and {} [{}, +{})",
                          resource.str(), describe_component(*furthest), furthest->offset_bytes,
                          furthest->length_bytes, describe_component(*component),
                          component->offset_bytes, component->length_bytes);
      }
      if (furthest == nullptr || component->offset_bytes + component->length_bytes >
                                     furthest->offset_bytes + furthest->length_bytes) {
        furthest = component;
      }
    }
  }
  return {};
}

bool component_less(const ResolvedStorageComponent& a, const ResolvedStorageComponent& b) {
  return std::tie(a.component_id, a.resource_id, a.offset_bytes) <
         std::tie(b.component_id, b.resource_id, b.offset_bytes);
}

}  // namespace

constexpr EnumNames<BufferUsage, 7> kBufferUsageNames{
    "buffer usage",
    {{{BufferUsage::kWeights, "weights"}, {BufferUsage::kActivations, "activations"},
      {BufferUsage::kState, "state"}, {BufferUsage::kPersistent, "persistent"},
      {BufferUsage::kBinding, "binding"}, {BufferUsage::kScratch, "scratch"},
      {BufferUsage::kTransfer, "transfer"}}}};
FERRITE_ENUM_NAME_FUNCTIONS(kBufferUsageNames, BufferUsage::kTransfer,
                            buffer_usage_name, parse_buffer_usage)

Result<ResolvedStorageComponent> ResolvedStorageComponent::create(
    std::optional<WeightId> component_id, ResourceId resource_id, uint64_t offset_bytes,
    uint64_t length_bytes, ElementType element_type) {
  ResolvedStorageComponent component{std::move(component_id), std::move(resource_id),
                                     offset_bytes, length_bytes, element_type};
  FERRITE_RETURN_IF_ERROR(component.validate());
  return component;
}

Result<void> ResolvedStorageComponent::validate() const {
  if (length_bytes == 0) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "{} has zero length",
                      describe_component(*this));
  }
  if (!checked_add(offset_bytes, length_bytes)) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "{} range (offset {} + length {}) overflows u64", describe_component(*this),
                      offset_bytes, length_bytes);
  }
  const uint64_t element_bytes = element_type_size_bytes(element_type);
  if (offset_bytes % element_bytes != 0) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "{} offset {} is not a multiple of the {}-byte {} element",
                      describe_component(*this), offset_bytes, element_bytes,
                      element_type_name(element_type));
  }
  if (length_bytes % element_bytes != 0) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "{} length {} is not a multiple of the {}-byte {} element",
                      describe_component(*this), length_bytes, element_bytes,
                      element_type_name(element_type));
  }
  return {};
}

bool ResolvedStorageComponent::overlaps(const ResolvedStorageComponent& other) const {
  if (resource_id != other.resource_id) return false;
  // Valid components: offset + length fits u64, so the subtractions cannot wrap.
  return offset_bytes < other.offset_bytes + other.length_bytes &&
         other.offset_bytes < offset_bytes + length_bytes;
}

nlohmann::json ResolvedStorageComponent::to_json() const {
  return nlohmann::json{
      {"component_id",
       component_id ? nlohmann::json(component_id->str()) : nlohmann::json(nullptr)},
      {"resource_id", resource_id.str()},
      {"offset_bytes", offset_bytes},
      {"length_bytes", length_bytes},
      {"element_type", std::string(element_type_name(element_type))}};
}

Result<ResolvedValueStorage> ResolvedValueStorage::single(ResourceId resource_id,
                                                          uint64_t offset_bytes,
                                                          uint64_t length_bytes,
                                                          ElementType element_type) {
  std::vector<ResolvedStorageComponent> components;
  components.push_back(ResolvedStorageComponent{std::nullopt, std::move(resource_id), offset_bytes,
                                                length_bytes, element_type});
  return create(std::move(components));
}

Result<ResolvedValueStorage> ResolvedValueStorage::composite(
    std::vector<ResolvedStorageComponent> components) {
  for (const ResolvedStorageComponent& component : components) {
    if (!component.component_id) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "composite storage {} has no component id", describe_component(component));
    }
  }
  return create(std::move(components));
}

Result<ResolvedValueStorage> ResolvedValueStorage::create(
    std::vector<ResolvedStorageComponent> components) {
  if (components.empty()) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "value storage has no components");
  }
  if (components.size() > 1) {
    for (const ResolvedStorageComponent& component : components) {
      if (!component.component_id) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "value storage with {} components: {} has no component id",
                          components.size(), describe_component(component));
      }
    }
  }
  for (const ResolvedStorageComponent& component : components) {
    FERRITE_RETURN_IF_ERROR(component.validate());
  }
  std::sort(components.begin(), components.end(), component_less);

  uint64_t total = 0;
  for (size_t i = 0; i < components.size(); ++i) {
    if (i > 0 && components[i].component_id &&
        components[i].component_id == components[i - 1].component_id) {
      return make_error(ErrorCode::kInvalidExecutionPlan, "value storage repeats component id `{}`",
                        components[i].component_id->str());
    }
    auto sum = checked_add(total, components[i].length_bytes);
    if (!sum) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "value storage total byte size overflows u64 at {}",
                        describe_component(components[i]));
    }
    total = *sum;
  }

  // One component cannot overlap itself.
  if (components.size() > 1) FERRITE_RETURN_IF_ERROR(check_no_overlap(components));
  auto state = std::make_shared<State>();
  state->components = std::move(components);
  state->total_physical_bytes = total;
  return ResolvedValueStorage(std::move(state));
}

std::string_view ResolvedValueStorage::canonical() const {
  const State& state = *state_;
  run_once(state.canonical_once,
           [&state] { state.canonical = canonical_components(state.components); });
  return state.canonical;
}

std::set<ResourceId> ResolvedValueStorage::resource_ids() const {
  std::set<ResourceId> ids;
  for (const ResolvedStorageComponent& component : components()) ids.insert(component.resource_id);
  return ids;
}

bool ResolvedValueStorage::overlaps(const ResolvedValueStorage& other) const {
  for (const ResolvedStorageComponent& a : components()) {
    for (const ResolvedStorageComponent& b : other.components()) {
      if (a.overlaps(b)) return true;
    }
  }
  return false;
}

nlohmann::json ResolvedValueStorage::to_json() const {
  nlohmann::json components = nlohmann::json::array();
  for (const ResolvedStorageComponent& component : this->components()) {
    components.push_back(component.to_json());
  }
  return nlohmann::json{{"components", std::move(components)}};
}

}  // namespace ferrite
