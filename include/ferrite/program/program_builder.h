// ferrite/program/program_builder.h — build a prepared model family in C++.
//
// Contract: a `ProgramBuilder` assembles a `PreparedModelFamily` (program +
// weight schema + config) from typed calls, without going through JSON. Each
// call that introduces a value returns a `ValueRef`, a handle that only this
// builder can resolve. Errors are reported at the call: the first failing call
// records a Status whose message starts with the call and the id involved
// (e.g. "ProgramBuilder::add_node(`node.blk.0.attn_q`): input 1 is not a value
// of this builder"); every later call is ignored (it returns an invalid
// handle) and `finish` returns that first error. Checked at the call: ids
// are valid identities, value ids are new, handles belong to this builder, a
// node has a block to go in and at least one output. Everything else
// (SSA order, states, weights against the schema, ...) is checked by
// `ModelProgram::create` / `PreparedModelFamily::create` in `finish`, so a
// built family is exactly the one the program-file reader would produce from
// the same content (same fingerprint).
//
// Layering: this is the generic, operation-agnostic builder (nodes name their
// operation by id). Typed helpers for the operations Ferrite knows (`linear`,
// `rms_norm`, ...) live one stage up, in ferrite/operations/operation_builders.h.
//
// Example:
//   ProgramBuilder b("family.example");
//   ValueRef x = b.input("value.x");
//   ValueRef w = b.dense_f32_weight("weight.w", "value.w", {64, 64}, "component.w", "w.weight");
//   b.block("block.main");
//   ValueRef y = b.add_node({.id = "node.y", .operation = "operation.linear", .version = {1, 0},
//                            .inputs = {x, w}, .outputs = {"value.y"}})[0];
//   b.output(y);
//   FERRITE_ASSIGN_OR_RETURN(PreparedModelFamily family,
//       std::move(b).finish({WeightFormatId::literal("weight-format.dense"),
//                            WeightLayoutId::literal("weight-layout.example"), {1, 0}},
//                           nlohmann::json::object()));
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferrite/program/model_program.h"
#include "ferrite/program/prepared_model_family.h"
#include "ferrite/program/weight_schema.h"

namespace ferrite {

// A value of one ProgramBuilder (an input, weight, state or node output).
struct ValueRef {
  static constexpr uint32_t kInvalid = UINT32_MAX;
  uint32_t index = kInvalid;
  bool valid() const { return index != kInvalid; }
  friend bool operator==(const ValueRef&, const ValueRef&) = default;
};

// How a node's work scales with the scheduled token count: along axis 0 of
// its first output (the default), along axis 0 of its first input, or not.
enum class NodeWork : uint8_t { kTokensOfOutput, kTokensOfInput, kFixed };

struct NodeSpec {
  std::string_view id;
  std::string_view operation;
  ContractVersion version;
  std::vector<ValueRef> inputs;
  std::vector<std::string_view> outputs;  // new value ids
  std::map<std::string, SemanticValue> attributes = {};
  NodeWork work = NodeWork::kTokensOfOutput;
};

// How one logical weight is stored: its components and the layout tree over them.
struct WeightStorage {
  std::vector<WeightComponentSpec> components;
  PhysicalWeightLayout layout;
};

struct WeightSchemaHeader {
  WeightFormatId format_id;
  WeightLayoutId layout_id;
  ContractVersion version;
};

class ProgramBuilder {
 public:
  explicit ProgramBuilder(std::string_view family_id);

  ValueRef input(std::string_view value_id);
  // A logical weight (added to the weight schema with its storage) and the
  // program value that reads it.
  ValueRef weight(std::string_view weight_id, std::string_view value_id, ProgramTensorSpec tensor,
                  WeightStorage storage);
  // A contiguous f32 weight stored as one dense f32 component `component_id`
  // (checkpoint name `external_name`).
  ValueRef dense_f32_weight(std::string_view weight_id, std::string_view value_id,
                            std::vector<uint64_t> dimensions, std::string_view component_id,
                            std::string_view external_name);
  ValueRef state(std::string_view state_id, std::string_view value_id, ProgramTensorSpec tensor,
                 StateLifetime lifetime, StateCapacityDemand capacity,
                 StateInitialization initialization);
  // Starts a new block; nodes go into the latest block.
  void block(std::string_view id);
  // Adds a node to the current block; one handle per output.
  std::vector<ValueRef> add_node(const NodeSpec& spec);
  void output(ValueRef value);

  // The program value id of a handle (nullptr for an invalid or foreign one).
  const ProgramValueId* value_id(ValueRef value) const;
  // Records `status` as the first error, prefixed with `call` (for helpers
  // layered on top that check more at the call).
  void fail(std::string_view call, const Status& status);
  // The first error, if any.
  const std::optional<Status>& error() const { return error_; }

  Result<PreparedModelFamily> finish(WeightSchemaHeader schema, nlohmann::json config) &&;

 private:
  // `text` as an Id, or nullopt after recording its error as the call's.
  template <class Id>
  std::optional<Id> checked_id(std::string_view call, std::string_view text) {
    auto id = Id::create(std::string(text));
    if (!id) {
      fail(call, id.error());
      return std::nullopt;
    }
    return std::move(*id);
  }
  ValueRef new_value(std::string_view call, std::string_view value_id);
  bool resolve(std::string_view call, const std::vector<ValueRef>& refs,
               std::vector<ProgramValueId>& out);

  std::optional<ModelFamilyId> family_id_;
  std::optional<Status> error_;
  std::vector<ProgramValueId> values_;
  std::map<ProgramValueId, uint32_t> known_;
  std::vector<ProgramValueId> inputs_;
  std::vector<ProgramBlock> blocks_;
  std::vector<StateSpec> states_;
  std::vector<WeightReference> weights_;
  std::vector<WeightComponentSpec> components_;
  std::vector<WeightTensorSpec> weight_tensors_;
  std::vector<ProgramValueId> outputs_;
};

}  // namespace ferrite
