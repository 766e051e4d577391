#include "ferrite/format/program_reader.h"

#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ferrite/format/attribute_reader.h"
#include "ferrite/format/tensor_reader.h"

namespace ferrite {

Result<ProgramNodeWorkSpec> read_work_spec(const JsonCursor& cursor) {
  if (cursor.is_string()) {
    FERRITE_ASSIGN_OR_RETURN(std::string name, cursor.string());
    if (name == "fixed") return WorkFixed{};
    return cursor.error("must be \"fixed\" or {{\"tokens\":{{...}}}}, found string `{}`", name);
  }
  if (!cursor.is_object()) return cursor.type_error("\"fixed\" or {\"tokens\":{...}}");
  FERRITE_ASSIGN_OR_RETURN(auto entry, cursor.single_key({"tokens"}));
  FERRITE_ASSIGN_OR_RETURN(ObjectReader tokens, entry.second.object({"value", "axis"}));
  FERRITE_ASSIGN_OR_RETURN(ProgramValueId value, tokens.required_identity<ProgramValueId>("value"));
  FERRITE_ASSIGN_OR_RETURN(uint32_t axis, tokens.required_u32("axis"));
  return WorkTokens{std::move(value), axis};
}

Result<StateCapacityDemand> read_capacity_demand(const JsonCursor& cursor) {
  if (cursor.is_string()) {
    FERRITE_ASSIGN_OR_RETURN(std::string name, cursor.string());
    if (name == "fixed_per_scope") return StateCapacityFixedPerScope{};
    return cursor.error(
        "must be \"fixed_per_scope\" or {{\"token_scaled\":{{...}}}}, found string `{}`", name);
  }
  if (!cursor.is_object()) {
    return cursor.type_error("\"fixed_per_scope\" or {\"token_scaled\":{...}}");
  }
  FERRITE_ASSIGN_OR_RETURN(auto entry, cursor.single_key({"token_scaled"}));
  FERRITE_ASSIGN_OR_RETURN(ObjectReader scaled,
                           entry.second.object({"bytes_per_token", "maximum_tokens"}));
  FERRITE_ASSIGN_OR_RETURN(uint64_t bytes_per_token, scaled.required_u64("bytes_per_token"));
  FERRITE_ASSIGN_OR_RETURN(uint64_t maximum_tokens, scaled.required_u64("maximum_tokens"));
  return StateCapacityTokenScaled{bytes_per_token, maximum_tokens};
}

Result<StateSpec> read_state_spec(const JsonCursor& cursor) {
  FERRITE_ASSIGN_OR_RETURN(ObjectReader object,
                           cursor.object({"id", "value", "tensor", "lifetime", "capacity_demand",
                                          "initialization"}));
  FERRITE_ASSIGN_OR_RETURN(StateId id, object.required_identity<StateId>("id"));
  FERRITE_ASSIGN_OR_RETURN(ProgramValueId value, object.required_identity<ProgramValueId>("value"));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor tensor_cursor, object.required("tensor"));
  FERRITE_ASSIGN_OR_RETURN(ProgramTensorSpec tensor, read_program_tensor_spec(tensor_cursor));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor lifetime_cursor, object.required("lifetime"));
  FERRITE_ASSIGN_OR_RETURN(StateLifetime lifetime,
                           lifetime_cursor.parsed_string(parse_state_lifetime, "state lifetime"));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor demand_cursor, object.required("capacity_demand"));
  FERRITE_ASSIGN_OR_RETURN(StateCapacityDemand demand, read_capacity_demand(demand_cursor));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor init_cursor, object.required("initialization"));
  FERRITE_ASSIGN_OR_RETURN(
      StateInitialization initialization,
      init_cursor.parsed_string(parse_state_initialization, "state initialization"));
  return StateSpec{std::move(id), std::move(value), std::move(tensor),
                   lifetime,      demand,           initialization};
}

// GCC 12 reports a false -Wmaybe-uninitialized when it inlines the move of a
// ProgramTensorSpec (a variant holding vectors) into the returned struct.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
Result<WeightReference> read_weight_reference(const JsonCursor& cursor) {
  FERRITE_ASSIGN_OR_RETURN(ObjectReader object, cursor.object({"weight", "value", "tensor"}));
  FERRITE_ASSIGN_OR_RETURN(WeightId weight, object.required_identity<WeightId>("weight"));
  FERRITE_ASSIGN_OR_RETURN(ProgramValueId value, object.required_identity<ProgramValueId>("value"));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor tensor_cursor, object.required("tensor"));
  FERRITE_ASSIGN_OR_RETURN(ProgramTensorSpec tensor, read_program_tensor_spec(tensor_cursor));
  return WeightReference{std::move(weight), std::move(value), std::move(tensor)};
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

Result<ProgramNode> read_program_node(const JsonCursor& cursor) {
  FERRITE_ASSIGN_OR_RETURN(ObjectReader object,
                           cursor.object({"id", "operation", "version", "work", "inputs", "outputs",
                                          "attributes"}));
  FERRITE_ASSIGN_OR_RETURN(NodeId id, object.required_identity<NodeId>("id"));
  FERRITE_ASSIGN_OR_RETURN(OperationId operation,
                           object.required_identity<OperationId>("operation"));
  FERRITE_ASSIGN_OR_RETURN(ContractVersion version, object.required_version_text("version"));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor work_cursor, object.required("work"));
  FERRITE_ASSIGN_OR_RETURN(ProgramNodeWorkSpec work, read_work_spec(work_cursor));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor inputs_cursor, object.required("inputs"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<ProgramValueId> inputs,
                           inputs_cursor.identity_array<ProgramValueId>());
  FERRITE_ASSIGN_OR_RETURN(JsonCursor outputs_cursor, object.required("outputs"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<ProgramValueId> outputs,
                           outputs_cursor.identity_array<ProgramValueId>());
  FERRITE_ASSIGN_OR_RETURN(JsonCursor attributes_cursor, object.required("attributes"));
  FERRITE_ASSIGN_OR_RETURN(auto attributes, read_attribute_values(attributes_cursor));
  return ProgramNode{std::move(id),     std::move(operation), version,
                     std::move(work),   std::move(inputs),    std::move(outputs),
                     std::move(attributes)};
}

Result<ProgramBlock> read_program_block(const JsonCursor& cursor, const StreamedJson* streamed) {
  FERRITE_ASSIGN_OR_RETURN(ObjectReader object, cursor.object({"id", "nodes"}));
  FERRITE_ASSIGN_OR_RETURN(std::string id, object.required_string("id"));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor nodes_cursor, object.required("nodes"));
  FERRITE_ASSIGN_OR_RETURN(size_t count, element_count(nodes_cursor, streamed));
  std::vector<ProgramNode> nodes;
  nodes.reserve(count);
  FERRITE_RETURN_IF_ERROR(
      for_each_element(nodes_cursor, streamed, [&](const JsonCursor& item) -> Result<void> {
        FERRITE_ASSIGN_OR_RETURN(ProgramNode node, read_program_node(item));
        nodes.push_back(std::move(node));
        return {};
      }));
  return ProgramBlock{std::move(id), std::move(nodes)};
}

Result<ModelProgram> read_model_program(const JsonCursor& cursor, const StreamedJson* streamed) {
  FERRITE_ASSIGN_OR_RETURN(ObjectReader object,
                           cursor.object({"family", "inputs", "blocks", "states", "weights",
                                          "outputs"}));
  FERRITE_ASSIGN_OR_RETURN(ModelFamilyId family, object.required_identity<ModelFamilyId>("family"));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor inputs_cursor, object.required("inputs"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<ProgramValueId> inputs,
                           inputs_cursor.identity_array<ProgramValueId>());
  FERRITE_ASSIGN_OR_RETURN(JsonCursor blocks_cursor, object.required("blocks"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> block_items, blocks_cursor.array());
  std::vector<ProgramBlock> blocks;
  blocks.reserve(block_items.size());
  for (const JsonCursor& item : block_items) {
    FERRITE_ASSIGN_OR_RETURN(ProgramBlock block, read_program_block(item, streamed));
    blocks.push_back(std::move(block));
  }
  FERRITE_ASSIGN_OR_RETURN(JsonCursor states_cursor, object.required("states"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> state_items, states_cursor.array());
  std::vector<StateSpec> states;
  states.reserve(state_items.size());
  for (const JsonCursor& item : state_items) {
    FERRITE_ASSIGN_OR_RETURN(StateSpec state, read_state_spec(item));
    states.push_back(std::move(state));
  }
  FERRITE_ASSIGN_OR_RETURN(JsonCursor weights_cursor, object.required("weights"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> weight_items, weights_cursor.array());
  std::vector<WeightReference> weights;
  weights.reserve(weight_items.size());
  for (const JsonCursor& item : weight_items) {
    FERRITE_ASSIGN_OR_RETURN(WeightReference weight, read_weight_reference(item));
    weights.push_back(std::move(weight));
  }
  FERRITE_ASSIGN_OR_RETURN(JsonCursor outputs_cursor, object.required("outputs"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<ProgramValueId> outputs,
                           outputs_cursor.identity_array<ProgramValueId>());
  return ModelProgram::create(std::move(family), std::move(inputs), std::move(blocks),
                              std::move(states), std::move(weights), std::move(outputs));
}

}  // namespace ferrite
