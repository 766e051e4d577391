#include "ferrite/compiler/value_placement.h"

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ferrite/core/canonical_encoder.h"
#include "ferrite/core/checked_math.h"
#include "ferrite/core/parallel_indices.h"

namespace ferrite {
namespace {

// Values one thread takes at a time when hashing their resource ids.
constexpr size_t kValuesPerChunk = 64;

// schema.physical_component_refs(tensor_id) from the plan's positions, or
// the schema's error when the plan has none for it.
Result<const std::vector<uint32_t>*> component_positions(const ExecutionWeightPlan& weights,
                                                         const WeightId& tensor_id) {
  if (const std::vector<uint32_t>* positions = weights.component_positions(tensor_id)) {
    return positions;
  }
  FERRITE_RETURN_IF_ERROR(weights.schema().physical_component_refs(tensor_id));
  return make_error(ErrorCode::kInvalidExecutionPlan,
                    "logical weight `{}` has no component positions (internal)", tensor_id.str());
}

// Components referenced by the program's weights, in schema (id) order.
Result<std::vector<const WeightComponentSpec*>> referenced_components(
    const PreparedModelFamily& family, const ExecutionWeightPlan& weights) {
  const WeightSchema& schema = weights.schema();
  // Marked by position in schema.components, no id compared.
  std::vector<bool> referenced(schema.components.size(), false);
  for (const auto& weight : family.program().weights()) {
    FERRITE_ASSIGN_OR_RETURN(const std::vector<uint32_t>* positions,
                             component_positions(weights, weight.weight_id));
    for (uint32_t position : *positions) referenced[position] = true;
  }
  std::vector<const WeightComponentSpec*> out;
  for (size_t i = 0; i < schema.components.size(); ++i) {
    if (referenced[i]) out.push_back(&schema.components[i]);
  }
  return out;
}

// `info` is the program's ValueInfo of `value` (null when it defines none),
// `tensors` indexes the program (checked by the caller).
Result<ResolvedValueStorage> activation_storage(const ProgramValueId& value,
                                                const ModelProgram::ValueInfo* info,
                                                const ValueTensors& tensors,
                                                const std::string& family_fingerprint) {
  const ResolvedTensorSpec* tensor = tensors.at(info);
  if (tensor == nullptr) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "activation `{}` has no resolved tensor",
                      value.str());
  }
  FERRITE_ASSIGN_OR_RETURN(auto id, hashed_resource_id("activation", family_fingerprint, value.str()));
  return ResolvedValueStorage::single(std::move(id), 0, tensor->minimum_storage_bytes(),
                                      tensor->element_type());
}

}  // namespace

Result<ResourceId> hashed_resource_id(std::string_view kind, std::string_view fingerprint,
                                      std::string_view semantic_identity) {
  // One per activation and probed weight of every compile: the material and
  // the id, digits included, are written into buffers the thread keeps, so
  // only the interned text is allocated.
  thread_local std::string material;
  thread_local std::string id;
  thread_local CanonicalSha256 hash;
  material.assign(kind);
  material.push_back('\0');
  material.append(fingerprint);
  material.push_back('\0');
  material.append(semantic_identity);
  hash.reset();
  hash.update(material);
  id.assign("resource/").append(kind).append("/sha256/");
  hash.append_hex(id);
  return ResourceId::create(id);
}

Result<WeightLocations> probe_weight_locations(const PreparedModelFamily& family,
                                               const ExecutionWeightPlan& weights) {
  FERRITE_ASSIGN_OR_RETURN(auto components, referenced_components(family, weights));
  WeightLocations locations;
  for (const auto* component : components) {
    FERRITE_ASSIGN_OR_RETURN(uint64_t length, component->physical_bytes());
    FERRITE_ASSIGN_OR_RETURN(auto id, hashed_resource_id("weight-probe", weights.fingerprint(),
                                                         component->id.str()));
    // In schema order, which is id order: each goes in at the end.
    locations.emplace_hint(locations.end(), component->id,
                           WeightComponentLocation{std::move(id), 0, length,
                                                   component->physical_element_type()});
  }
  return locations;
}

Result<WeightLocations> arena_weight_locations(const PreparedModelFamily& family,
                                               const ExecutionWeightPlan& weights,
                                               uint64_t provider_alignment_bytes) {
  FERRITE_ASSIGN_OR_RETURN(auto components, referenced_components(family, weights));
  std::map<ElementType, uint64_t> next_offsets;
  std::map<ElementType, ResourceId> arena_ids;  // one arena, so one id, per dtype
  WeightLocations locations;
  for (const auto* component : components) {
    const ElementType type = component->physical_element_type();
    const uint64_t alignment = std::max(provider_alignment_bytes, element_type_size_bytes(type));
    auto offset = checked_align_up(next_offsets[type], alignment);
    if (!offset) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "weight arena alignment is invalid or overflows u64");
    }
    FERRITE_ASSIGN_OR_RETURN(uint64_t length, component->physical_bytes());
    auto end = checked_add(*offset, length);
    if (!end) {
      return make_error(ErrorCode::kInvalidExecutionPlan, "weight arena byte range overflows u64");
    }
    next_offsets[type] = *end;
    auto arena = arena_ids.find(type);
    if (arena == arena_ids.end()) {
      const std::string key = nlohmann::json(element_type_name(type)).dump();  // "\"f32\""
      FERRITE_ASSIGN_OR_RETURN(auto id,
                               hashed_resource_id("weight-arena", weights.fingerprint(), key));
      arena = arena_ids.emplace(type, std::move(id)).first;
    }
    locations.emplace_hint(locations.end(), component->id,
                           WeightComponentLocation{arena->second, *offset, length, type});
  }
  return locations;
}

Result<ValueStorages> build_value_storages(const PreparedModelFamily& family,
                                           const ExecutionWeightPlan& weights,
                                           const OperationCatalog& operations,
                                           const ValueTensors& tensors,
                                           const WeightLocations& locations,
                                           const ValueStorages* earlier, unsigned threads) {
  const ModelProgram& program = family.program();
  const std::string& family_fp = family.fingerprint();
  if (earlier != nullptr && !earlier->indexes(program)) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "the earlier value storages were built for another program");
  }
  if (!tensors.indexes(program)) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "the value tensors were inferred for another program");
  }
  // Tensors and storages are read and written by the values' ranks: the
  // nodes' values by position (ModelProgram::node_value_infos), the others
  // by one hash of the id's address; no search of an ordered map. `info`
  // below is the program's ValueInfo of `value`, null when it defines none.
  using ValueInfo = ModelProgram::ValueInfo;
  ValueStorages storages(program);
  const auto earlier_at = [&](const ValueInfo* info) -> const ResolvedValueStorage* {
    return earlier != nullptr ? earlier->at(info) : nullptr;
  };
  // Every value stored below is one the program defines.
  const auto store_at = [&](const ValueInfo* info, const ProgramValueId& value,
                            ResolvedValueStorage storage) -> Result<void> {
    if (info == nullptr) {
      return make_error(ErrorCode::kInvalidExecutionPlan, "value `{}` is not in the program",
                        value.str());
    }
    storages.set_at_rank(info->rank, std::move(storage));
    return {};
  };
  const auto store = [&](const ProgramValueId& value, ResolvedValueStorage storage) {
    return store_at(program.find_value(value), value, std::move(storage));
  };
  // The node outputs that get storage of their own (not must-alias), in the
  // order the walk below meets them: without `earlier`, each one's storage
  // (a hashed resource id) is derived on `threads` threads first and kept,
  // result or error, for the walk to take in its turn.
  const std::vector<const ProgramNode*>& nodes = program.nodes();
  std::vector<std::optional<Result<ResolvedValueStorage>>> derived;
  if (earlier == nullptr && threads > 1) {
    std::vector<std::pair<const ProgramValueId*, const ValueInfo*>> own;
    for (size_t index = 0; index < nodes.size(); ++index) {
      const ProgramNode* node = nodes[index];
      auto op = operations.operation_for_node(node->id, node->operation_id);
      if (!op) break;  // the walk reports it, before taking anything past it
      for (size_t ordinal = 0; ordinal < node->outputs.size() && ordinal < (*op)->outputs.size();
           ++ordinal) {
        if (!std::holds_alternative<MustAlias>((*op)->outputs[ordinal].alias())) {
          own.emplace_back(&node->outputs[ordinal], program.node_output_info(index, ordinal));
        }
      }
    }
    derived.resize(own.size());
    for_each_index(own.size(), threads, kValuesPerChunk, [&](size_t i) {
      derived[i] = activation_storage(*own[i].first, own[i].second, tensors, family_fp);
      return true;
    });
  }
  size_t next_derived = 0;
  // An input's or activation's storage, from `earlier` when it has one.
  auto own_storage = [&](const ProgramValueId& value,
                         const ValueInfo* info) -> Result<ResolvedValueStorage> {
    if (const ResolvedValueStorage* kept = earlier_at(info)) return *kept;
    return activation_storage(value, info, tensors, family_fp);
  };
  for (const auto& input : program.inputs()) {
    const ValueInfo* info = program.find_value(input);
    FERRITE_ASSIGN_OR_RETURN(auto storage, own_storage(input, info));
    FERRITE_RETURN_IF_ERROR(store_at(info, input, std::move(storage)));
  }
  const std::vector<WeightComponentSpec>& schema_components = weights.schema().components;
  for (const auto& weight : program.weights()) {
    FERRITE_ASSIGN_OR_RETURN(const std::vector<uint32_t>* positions,
                             component_positions(weights, weight.weight_id));
    std::vector<ResolvedStorageComponent> components;
    components.reserve(positions->size());
    for (uint32_t position : *positions) {
      const WeightComponentSpec* component = &schema_components[position];
      auto it = locations.find(component->id);
      if (it == locations.end()) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "weight component `{}` has no physical location", component->id.str());
      }
      FERRITE_ASSIGN_OR_RETURN(auto placed, ResolvedStorageComponent::create(
                                                component->id, it->second.resource_id,
                                                it->second.offset_bytes, it->second.length_bytes,
                                                it->second.element_type));
      components.push_back(std::move(placed));
    }
    FERRITE_ASSIGN_OR_RETURN(auto storage, ResolvedValueStorage::composite(std::move(components)));
    FERRITE_RETURN_IF_ERROR(store(weight.value_id, std::move(storage)));
  }
  for (const auto& state : program.states()) {
    const ValueInfo* info = program.find_value(state.value_id);
    if (const ResolvedValueStorage* kept = earlier_at(info)) {
      FERRITE_RETURN_IF_ERROR(store_at(info, state.value_id, *kept));
      continue;
    }
    const ResolvedTensorSpec* found = tensors.at(info);
    if (found == nullptr) {
      return make_error(ErrorCode::kInvalidExecutionPlan, "state `{}` has no resolved tensor",
                        state.id.str());
    }
    const auto& tensor = *found;
    FERRITE_ASSIGN_OR_RETURN(uint64_t demand, capacity_minimum_bytes(state.capacity_demand,
                                                                      tensor.minimum_storage_bytes()));
    auto length = checked_round_up(demand, element_type_size_bytes(tensor.element_type()));
    if (!length) {
      return make_error(ErrorCode::kInvalidExecutionPlan, "state `{}` size overflows u64",
                        state.id.str());
    }
    FERRITE_ASSIGN_OR_RETURN(auto id, hashed_resource_id("state", family_fp, state.id.str()));
    FERRITE_ASSIGN_OR_RETURN(auto storage, ResolvedValueStorage::single(std::move(id), 0, *length,
                                                                         tensor.element_type()));
    FERRITE_RETURN_IF_ERROR(store_at(info, state.value_id, std::move(storage)));
  }
  for (size_t index = 0; index < nodes.size(); ++index) {
    const ProgramNode* node = nodes[index];
    FERRITE_ASSIGN_OR_RETURN(const OperationDescriptor* op,
                             operations.operation_for_node(node->id, node->operation_id));
    for (size_t ordinal = 0; ordinal < node->outputs.size() && ordinal < op->outputs.size();
         ++ordinal) {
      const auto& value = node->outputs[ordinal];
      const ValueInfo* info = program.node_output_info(index, ordinal);
      if (const auto* must = std::get_if<MustAlias>(&op->outputs[ordinal].alias())) {
        if (must->tensor_index >= node->inputs.size()) {
          return make_error(ErrorCode::kInvalidExecutionPlan, "node `{}` aliases an absent input",
                            node->id.str());
        }
        const auto& input = node->inputs[must->tensor_index];
        const ValueInfo* input_info = program.node_input_info(index, must->tensor_index);
        const ResolvedValueStorage* aliased = storages.at(input_info);
        if (aliased == nullptr) {
          return make_error(ErrorCode::kInvalidExecutionPlan,
                            "node `{}` alias input `{}` has no storage", node->id.str(),
                            input.str());
        }
        FERRITE_RETURN_IF_ERROR(store_at(info, value, ResolvedValueStorage(*aliased)));
      } else {
        FERRITE_ASSIGN_OR_RETURN(auto storage, next_derived < derived.size()
                                                   ? std::move(*derived[next_derived++])
                                                   : own_storage(value, info));
        FERRITE_RETURN_IF_ERROR(store_at(info, value, std::move(storage)));
      }
    }
  }
  return storages;
}

}  // namespace ferrite
