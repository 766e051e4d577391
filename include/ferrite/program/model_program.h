// ferrite/program/model_program.h — the semantic model program.
//
// Contract (spec §3.2): a `ModelProgram` is a typed SSA dataflow program over
// program inputs, weights and states, organised in blocks of nodes. It is valid
// by construction; `create` checks, in this order, and names the offending id:
//   1. at least one block;
//   2. inputs non-empty and unique (they seed the set of known values);
//   3. each state: tensor valid, capacity demand valid for its dense byte
//      length, value id new;
//   4. each weight: weight id unique, value id new, tensor valid;
//   5. per block in order: non-empty unique id, at least one node; per node:
//      required version major != 0, at least one output, attribute values valid,
//      node id unique program-wide, a Tokens work spec names a value that occurs
//      exactly once among the node's inputs+outputs and is neither a state nor a
//      weight, every input already known (SSA order: no forward references),
//      every output a new value (single producer);
//   6. state ids unique;
//   7. outputs non-empty, known and unique.
// Then it normalizes: states sorted by id, weights sorted by weight id (inputs,
// blocks and outputs keep their order). "Program order" is blocks in order,
// nodes in order. All errors are InvalidModelConfig.
//
// Consequences the compiler relies on: value ids are unique across inputs,
// states, weights and node outputs; node outputs are activations; states and
// weights appear only as node inputs.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(ModelProgram program,
//       ModelProgram::create(family_id, {tokens}, std::move(blocks), {}, std::move(weights),
//                            {logits}));
//   for (const ProgramNode* node : program.nodes()) { ... }
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferrite/core/canonical_encoder.h"
#include "ferrite/core/contract_version.h"
#include "ferrite/core/identity.h"
#include "ferrite/core/identity_hash_map.h"
#include "ferrite/core/tensor_spec.h"
#include "ferrite/program/semantic_value.h"
#include "ferrite/program/state_spec.h"
#include "ferrite/program/weight_reference.h"

namespace ferrite {

// Which activation axis scales with the scheduled token count, if any.
struct WorkFixed {
  friend bool operator==(const WorkFixed&, const WorkFixed&) = default;
};
struct WorkTokens {
  ProgramValueId value_id;
  uint32_t axis = 0;
  friend bool operator==(const WorkTokens&, const WorkTokens&) = default;
};
using ProgramNodeWorkSpec = std::variant<WorkFixed, WorkTokens>;

struct ProgramNode {
  NodeId id;
  OperationId operation_id;
  ContractVersion required_version;
  ProgramNodeWorkSpec work = WorkFixed{};
  std::vector<ProgramValueId> inputs;
  std::vector<ProgramValueId> outputs;
  std::map<AttributeId, SemanticValue> attributes;

  friend bool operator==(const ProgramNode&, const ProgramNode&) = default;
};

struct ProgramBlock {
  std::string id;  // not an identity: any non-empty string, unique within the program
  std::vector<ProgramNode> nodes;

  friend bool operator==(const ProgramBlock&, const ProgramBlock&) = default;
};

// What kind of value an id names inside a program.
enum class ProgramValueKind : uint8_t { kInput, kState, kWeight, kNodeOutput };

class ModelProgram {
 public:
  static Result<ModelProgram> create(ModelFamilyId family_id, std::vector<ProgramValueId> inputs,
                                     std::vector<ProgramBlock> blocks,
                                     std::vector<StateSpec> states,
                                     std::vector<WeightReference> weights,
                                     std::vector<ProgramValueId> outputs);

  const ModelFamilyId& family_id() const { return family_id_; }
  const std::vector<ProgramValueId>& inputs() const { return inputs_; }
  const std::vector<ProgramBlock>& blocks() const { return blocks_; }
  const std::vector<StateSpec>& states() const { return states_; }    // sorted by id
  const std::vector<WeightReference>& weights() const { return weights_; }  // sorted by weight id
  const std::vector<ProgramValueId>& outputs() const { return outputs_; }

  // Every node in program order (pointers into blocks(); stable for the
  // lifetime of this object).
  const std::vector<const ProgramNode*>& nodes() const { return nodes_; }
  const ProgramNode* find_node(const NodeId& id) const;
  // The position of node `id` in nodes() (for node_value_infos), if any.
  std::optional<size_t> find_node_index(const NodeId& id) const;
  std::optional<ProgramValueKind> value_kind(const ProgramValueId& id) const;
  const WeightReference* find_weight_by_value(const ProgramValueId& id) const;
  const StateSpec* find_state_by_value(const ProgramValueId& id) const;
  // All three of the above in one look-up: null when the program has no
  // such value; `weight` / `state` are set for weights / states only.
  struct ValueInfo {
    ProgramValueKind kind;
    const WeightReference* weight = nullptr;
    const StateSpec* state = nullptr;
    uint32_t rank = 0;  // position in values_in_id_order()
  };
  const ValueInfo* find_value(const ProgramValueId& id) const;
  // find_value of each value the node at `node_index` (in nodes() order)
  // binds — its inputs, then its outputs — looked up once, by create: what a
  // pass over every node's bindings reads instead of a look-up per binding
  // (at 100,000 nodes each look-up is a cache miss). Empty past the last node.
  std::span<const ValueInfo* const> node_value_infos(size_t node_index) const;
  // find_value(id), answered from node_value_infos(node_index)[slot] when
  // that entry is `id`'s (one compare of interned ids; no hash): what a pass
  // over bindings that mirror the program's nodes (resolutions, plan nodes)
  // calls with each binding's node and position. Any other id, slot or node
  // — a binding list that does not mirror its node — gets the look-up, so
  // the answer is find_value's whatever the hint.
  const ValueInfo* find_value_at(size_t node_index, size_t slot, const ProgramValueId& id) const;
  // find_value of input / output `ordinal` of the node at `node_index`,
  // read from node_value_infos (no look-up): what a pass over nodes()
  // reads for the values it walks. Null past the node's bindings, past the
  // last node, or for a value the program does not define.
  const ValueInfo* node_input_info(size_t node_index, size_t ordinal) const;
  const ValueInfo* node_output_info(size_t node_index, size_t ordinal) const;
  // find_value(id), answered from the bindings of the node at `node_index`
  // when it binds `id` (a scan of its few bindings, one compare of interned
  // ids each; no hash): for a value a node names apart from its bindings
  // (its work spec's value, an alias target). Any other id gets the
  // look-up, so the answer is find_value's whatever the node.
  const ValueInfo* find_node_value(size_t node_index, const ProgramValueId& id) const;
  // Every value the program defines (inputs, states, weights, node
  // outputs), sorted by id: what a pass that must walk values in id order
  // indexes by ValueInfo::rank instead of sorting. Sorted once, by create;
  // copies share it.
  const std::vector<ProgramValueId>& values_in_id_order() const { return *values_in_id_order_; }
  // The same vector, shared: for a table that outlives the program
  // (program/value_table.h).
  std::shared_ptr<const std::vector<ProgramValueId>> shared_values_in_id_order() const {
    return values_in_id_order_;
  }

  // Canonical JSON (the program-file "program" object) and its SHA-256
  // (computed once, by create: the program cannot change afterwards).
  nlohmann::json to_json() const;
  const std::string& fingerprint() const { return fingerprint_; }
  // canonical_json(to_json()), kept from create (the fingerprint is its
  // SHA-256; a prepared family hashes it as its "program" member instead of
  // encoding the program again). Copies share it.
  const std::string& canonical_text() const { return *canonical_text_; }
  // Writes canonical_json(to_json()) into `out` without building the
  // document.
  void encode_canonical(CanonicalEncoder& out) const;

  ModelProgram(const ModelProgram& other);
  ModelProgram& operator=(const ModelProgram& other);
  ModelProgram(ModelProgram&&) noexcept;
  ModelProgram& operator=(ModelProgram&&) noexcept;
  ~ModelProgram();

  friend bool operator==(const ModelProgram& a, const ModelProgram& b) {
    return a.family_id_ == b.family_id_ && a.inputs_ == b.inputs_ && a.blocks_ == b.blocks_ &&
           a.states_ == b.states_ && a.weights_ == b.weights_ && a.outputs_ == b.outputs_;
  }

 private:
  explicit ModelProgram(ModelFamilyId family_id) : family_id_(std::move(family_id)) {}
  void index();

  ModelFamilyId family_id_;
  std::vector<ProgramValueId> inputs_;
  std::vector<ProgramBlock> blocks_;
  std::vector<StateSpec> states_;
  std::vector<WeightReference> weights_;
  std::vector<ProgramValueId> outputs_;
  std::string fingerprint_;
  std::shared_ptr<const std::string> canonical_text_;  // never null after create
  std::shared_ptr<const std::vector<ProgramValueId>> values_in_id_order_;  // likewise
  // Derived indexes (rebuilt on copy), for lookups only: never iterated, so
  // hashed by the interned ids' addresses (one multiply per look-up, no
  // string hashing or comparison). The node, weight and state pointers point
  // into the vectors above (moving a vector keeps its elements in place; a
  // copy re-indexes).
  std::vector<const ProgramNode*> nodes_;
  // Each defined value's rank, and its info by rank (a vector: moving the
  // program keeps the infos where they are, so the pointers below hold).
  IdentityHashMap<ProgramValueId, uint32_t> rank_by_id_;
  std::vector<ValueInfo> value_infos_;
  IdentityHashMap<NodeId, size_t> nodes_by_id_;  // position in nodes_
  // node_value_infos: every node's entries in one array (pointers into
  // value_infos_), node i's from offset i to offset i + 1.
  std::vector<const ValueInfo*> node_value_infos_;
  std::vector<size_t> node_value_offsets_;
};

// JSON of node attributes / work specs, shared with the interchange readers:
//   SemanticValue: {"bool":true} | {"integer":-3} | {"unsigned":8} |
//                  {"rational":"1/100000"} | {"text":"rope"} | {"integers":[1,2]}
//   work:          "fixed" | {"tokens":{"value":"value.x","axis":0}}
nlohmann::json semantic_value_to_json(const SemanticValue& value);
nlohmann::json work_spec_to_json(const ProgramNodeWorkSpec& work);
nlohmann::json state_spec_to_json(const StateSpec& state);

// The canonical encodings of semantic_value_to_json(value) and
// work_spec_to_json(work) (the same bytes as out.json(...) of them), written
// straight to `out`: no document is built (what plan nodes and estimator
// inputs hash, once per node and round).
void encode_semantic_value(const SemanticValue& value, CanonicalEncoder& out);
void encode_work_spec(const ProgramNodeWorkSpec& work, CanonicalEncoder& out);

}  // namespace ferrite
