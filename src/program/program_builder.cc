#include "ferrite/program/program_builder.h"

#include <utility>

#include <fmt/format.h>

namespace ferrite {
namespace {

std::string call_name(std::string_view method, std::string_view id) {
  return fmt::format("ProgramBuilder::{}(`{}`)", method, id);
}

}  // namespace

ProgramBuilder::ProgramBuilder(std::string_view family_id) {
  auto id = checked_id<ModelFamilyId>(call_name("ProgramBuilder", family_id), family_id);
  if (!id) return;
  family_id_ = std::move(*id);
}

void ProgramBuilder::fail(std::string_view call, const Status& status) {
  if (error_) return;
  error_ = Status(status).annotate("{}", call);
}

ValueRef ProgramBuilder::new_value(std::string_view call, std::string_view value_id) {
  auto id = checked_id<ProgramValueId>(call, value_id);
  if (!id) return {};
  if (known_.contains(*id)) {
    fail(call, make_error(ErrorCode::kInvalidModelConfig, "value `{}` is already defined", value_id)
                   .with_field("value_id", value_id)
                   .value());
    return {};
  }
  const auto index = static_cast<uint32_t>(values_.size());
  known_.emplace(*id, index);
  values_.push_back(std::move(*id));
  return ValueRef{index};
}

const ProgramValueId* ProgramBuilder::value_id(ValueRef value) const {
  return value.index < values_.size() ? &values_[value.index] : nullptr;
}

bool ProgramBuilder::resolve(std::string_view call, const std::vector<ValueRef>& refs,
                             std::vector<ProgramValueId>& out) {
  for (size_t i = 0; i < refs.size(); ++i) {
    const ProgramValueId* id = value_id(refs[i]);
    if (id == nullptr) {
      fail(call,
           make_error(ErrorCode::kInvalidModelConfig, "value {} is not a value of this builder", i)
               .value());
      return false;
    }
    out.push_back(*id);
  }
  return true;
}

ValueRef ProgramBuilder::input(std::string_view value_id) {
  if (error_) return {};
  ValueRef ref = new_value(call_name("input", value_id), value_id);
  if (ref.valid()) inputs_.push_back(values_[ref.index]);
  return ref;
}

ValueRef ProgramBuilder::weight(std::string_view weight_id, std::string_view value_id,
                                ProgramTensorSpec tensor, WeightStorage storage) {
  if (error_) return {};
  const std::string call = call_name("weight", weight_id);
  auto id = checked_id<WeightId>(call, weight_id);
  if (!id) return {};
  ValueRef ref = new_value(call, value_id);
  if (!ref.valid()) return ref;
  weight_tensors_.push_back(WeightTensorSpec{.id = *id,
                                             .dimensions = tensor.dimensions,
                                             .logical_element_type = tensor.element_type,
                                             .physical_layout = std::move(storage.layout),
                                             .required = true});
  for (auto& component : storage.components) components_.push_back(std::move(component));
  weights_.push_back(WeightReference{std::move(*id), values_[ref.index], std::move(tensor)});
  return ref;
}

ValueRef ProgramBuilder::dense_f32_weight(std::string_view weight_id, std::string_view value_id,
                                          std::vector<uint64_t> dimensions,
                                          std::string_view component_id,
                                          std::string_view external_name) {
  if (error_) return {};
  auto component = checked_id<WeightId>(call_name("dense_f32_weight", weight_id), component_id);
  if (!component) return {};
  WeightStorage storage{
      .components = {WeightComponentSpec{.id = *component,
                                         .role = WeightComponentRole::kValues,
                                         .external_names = {std::string(external_name)},
                                         .dimensions = dimensions,
                                         .encoding = DenseEncoding{ElementType::kF32},
                                         .required = true}},
      .layout = DenseLayout{*component}};
  return weight(weight_id, value_id,
                ProgramTensorSpec{std::move(dimensions), ElementType::kF32, ContiguousLayout{}},
                std::move(storage));
}

ValueRef ProgramBuilder::state(std::string_view state_id, std::string_view value_id,
                               ProgramTensorSpec tensor, StateLifetime lifetime,
                               StateCapacityDemand capacity, StateInitialization initialization) {
  if (error_) return {};
  const std::string call = call_name("state", state_id);
  auto id = checked_id<StateId>(call, state_id);
  if (!id) return {};
  ValueRef ref = new_value(call, value_id);
  if (!ref.valid()) return ref;
  states_.push_back(StateSpec{std::move(*id), values_[ref.index], std::move(tensor), lifetime,
                              capacity, initialization});
  return ref;
}

void ProgramBuilder::block(std::string_view id) {
  if (error_) return;
  if (id.empty()) {
    fail(call_name("block", id),
         make_error(ErrorCode::kInvalidModelConfig, "block id is empty").value());
    return;
  }
  blocks_.push_back(ProgramBlock{std::string(id), {}});
}

std::vector<ValueRef> ProgramBuilder::add_node(const NodeSpec& spec) {
  std::vector<ValueRef> out;
  if (error_) return out;
  const std::string call = call_name("add_node", spec.id);
  if (blocks_.empty()) {
    fail(call, make_error(ErrorCode::kInvalidModelConfig, "no block: call block() first")
                   .with_field("node_id", spec.id)
                   .value());
    return {};
  }
  if (spec.outputs.empty()) {
    fail(call, make_error(ErrorCode::kInvalidModelConfig, "a node needs at least one output")
                   .with_field("node_id", spec.id)
                   .value());
    return {};
  }
  auto id = checked_id<NodeId>(call, spec.id);
  if (!id) return out;
  auto operation = checked_id<OperationId>(call, spec.operation);
  if (!operation) return out;
  ProgramNode node{.id = std::move(*id),
                   .operation_id = std::move(*operation),
                   .required_version = spec.version,
                   .work = WorkFixed{},
                   .inputs = {},
                   .outputs = {},
                   .attributes = {}};
  if (!resolve(call, spec.inputs, node.inputs)) return out;
  for (const auto& [name, value] : spec.attributes) {
    auto attribute = AttributeId::create(name);
    if (!attribute) return fail(call, attribute.error()), std::vector<ValueRef>{};
    node.attributes.emplace(std::move(*attribute), value);
  }
  for (std::string_view output : spec.outputs) {
    ValueRef ref = new_value(call, output);
    if (!ref.valid()) return {};
    node.outputs.push_back(values_[ref.index]);
    out.push_back(ref);
  }
  switch (spec.work) {
    case NodeWork::kTokensOfOutput: node.work = WorkTokens{node.outputs[0], 0}; break;
    case NodeWork::kTokensOfInput:
      if (node.inputs.empty()) {
        fail(call, make_error(ErrorCode::kInvalidModelConfig,
                              "work follows input 0, but the node has no inputs")
                       .with_field("node_id", spec.id)
                       .value());
        return {};
      }
      node.work = WorkTokens{node.inputs[0], 0};
      break;
    case NodeWork::kFixed: break;
  }
  blocks_.back().nodes.push_back(std::move(node));
  return out;
}

void ProgramBuilder::output(ValueRef value) {
  if (error_) return;
  std::vector<ProgramValueId> ids;
  if (resolve("ProgramBuilder::output", {value}, ids)) outputs_.push_back(std::move(ids[0]));
}

Result<PreparedModelFamily> ProgramBuilder::finish(WeightSchemaHeader schema,
                                                   nlohmann::json config) && {
  if (error_) return make_error(std::move(*error_));
  FERRITE_ASSIGN_OR_RETURN(
      ModelProgram program,
      ModelProgram::create(*family_id_, std::move(inputs_), std::move(blocks_), std::move(states_),
                           std::move(weights_), std::move(outputs_)));
  WeightSchema weights{std::move(schema.format_id), std::move(schema.layout_id), schema.version,
                       std::move(components_), std::move(weight_tensors_)};
  return PreparedModelFamily::create(*family_id_, std::move(config), std::move(weights),
                                     std::move(program));
}

}  // namespace ferrite
