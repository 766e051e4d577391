#include "ferrite/format/program_reader.h"

#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ferrite/core/parallel_indices.h"
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

namespace {

// A block's id and its nodes array, before the nodes are read.
struct BlockHeader {
  std::string id;
  JsonCursor nodes;
  size_t count = 0;
};

Result<BlockHeader> read_block_header(const JsonCursor& cursor, const StreamedJson* streamed) {
  FERRITE_ASSIGN_OR_RETURN(ObjectReader object, cursor.object({"id", "nodes"}));
  FERRITE_ASSIGN_OR_RETURN(std::string id, object.required_string("id"));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor nodes, object.required("nodes"));
  FERRITE_ASSIGN_OR_RETURN(size_t count, element_count(nodes, streamed));
  return BlockHeader{std::move(id), std::move(nodes), count};
}

// Every node of `headers`' blocks, read on up to `threads` threads (each a
// parse of its own streamed text) and returned in program order; the error
// is the first a serial reading would meet.
Result<std::vector<ProgramBlock>> read_block_nodes(std::vector<BlockHeader> headers,
                                                   const StreamedJson* streamed,
                                                   unsigned threads) {
  struct Site {
    size_t block = 0, index = 0;
  };
  std::vector<Site> sites;
  for (size_t b = 0; b < headers.size(); ++b) {
    for (size_t i = 0; i < headers[b].count; ++i) sites.push_back({b, i});
  }
  FERRITE_ASSIGN_OR_RETURN(
      std::vector<ProgramNode> nodes,
      results_in_order<ProgramNode>(sites.size(), threads, 16, [&](size_t n) -> Result<ProgramNode> {
        std::optional<ProgramNode> node;
        FERRITE_RETURN_IF_ERROR(visit_element(
            headers[sites[n].block].nodes, streamed, sites[n].index,
            [&](const JsonCursor& item) -> Result<void> {
              FERRITE_ASSIGN_OR_RETURN(node, read_program_node(item));
              return {};
            }));
        return std::move(*node);
      }));
  std::vector<ProgramBlock> blocks;
  blocks.reserve(headers.size());
  size_t next = 0;
  for (BlockHeader& header : headers) {
    std::vector<ProgramNode> block_nodes(std::make_move_iterator(nodes.begin() + next),
                                         std::make_move_iterator(nodes.begin() + next +
                                                                 header.count));
    next += header.count;
    blocks.push_back(ProgramBlock{std::move(header.id), std::move(block_nodes)});
  }
  return blocks;
}

}  // namespace

Result<ProgramBlock> read_program_block(const JsonCursor& cursor, const StreamedJson* streamed) {
  FERRITE_ASSIGN_OR_RETURN(BlockHeader header, read_block_header(cursor, streamed));
  std::vector<BlockHeader> headers;
  headers.push_back(std::move(header));
  FERRITE_ASSIGN_OR_RETURN(auto blocks, read_block_nodes(std::move(headers), streamed, 1));
  return std::move(blocks.front());
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
  // The blocks' ids and node counts first, up to the first block that has an
  // error; then the nodes of the blocks before it, in parallel. A node error
  // among those comes first in the text, so it wins over the block's.
  std::vector<BlockHeader> headers;
  headers.reserve(block_items.size());
  std::optional<Status> header_error;
  for (const JsonCursor& item : block_items) {
    auto header = read_block_header(item, streamed);
    if (!header) {
      header_error = std::move(header).error();
      break;
    }
    headers.push_back(std::move(*header));
  }
  FERRITE_ASSIGN_OR_RETURN(std::vector<ProgramBlock> blocks,
                           read_block_nodes(std::move(headers), streamed, default_compile_threads()));
  if (header_error) return make_error(std::move(*header_error));
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
