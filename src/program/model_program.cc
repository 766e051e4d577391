#include "ferrite/program/model_program.h"

#include "ferrite/core/json_array.h"
#include <algorithm>
#include <set>
#include <string_view>
#include <unordered_set>

#include <fmt/format.h>

#include "ferrite/core/fingerprint.h"
#include "ferrite/core/tensor_json.h"

namespace ferrite {
namespace {

using nlohmann::json;

std::string node_field(const ProgramBlock& block, const ProgramNode& node, std::string_view leaf) {
  return fmt::format("program.blocks[{}].nodes[{}].{}", block.id, node.id.str(), leaf);
}

}  // namespace

Result<ModelProgram> ModelProgram::create(ModelFamilyId family_id,
                                          std::vector<ProgramValueId> inputs,
                                          std::vector<ProgramBlock> blocks,
                                          std::vector<StateSpec> states,
                                          std::vector<WeightReference> weights,
                                          std::vector<ProgramValueId> outputs) {
  const std::string family(family_id.str());
  // 1. Blocks.
  if (blocks.empty()) return invalid_model_config(family, "program.blocks", "must not be empty");
  // 2. Inputs seed the known values.
  if (inputs.empty()) return invalid_model_config(family, "program.inputs", "must not be empty");
  // Membership only (never iterated): hash sets of views into the arguments,
  // which outlive them.
  using IdSet = std::unordered_set<std::string_view>;
  size_t value_count = inputs.size() + states.size() + weights.size();
  for (const auto& block : blocks) {
    for (const auto& node : block.nodes) value_count += node.outputs.size();
  }
  IdSet known;
  known.reserve(value_count);
  IdSet state_or_weight_values;
  for (const auto& input : inputs) {
    if (!known.insert(input.view()).second) {
      return invalid_model_config(family, "program.inputs",
                                  fmt::format("duplicate input `{}`", input.str()));
    }
  }
  // 3. States.
  for (const auto& state : states) {
    auto field = [&] { return fmt::format("program.states[{}]", state.id.str()); };
    if (auto valid = state.tensor.validate(field()); !valid) {
      return invalid_model_config(family, field(), valid.error().message());
    }
    auto byte_len = state.tensor.byte_len();
    if (!byte_len) return invalid_model_config(family, field(), byte_len.error().message());
    if (auto demand = validate_capacity_demand(state.capacity_demand, *byte_len); !demand) {
      return invalid_model_config(family, field(), demand.error().message());
    }
    if (!known.insert(state.value_id.view()).second) {
      return invalid_model_config(
          family, field(), fmt::format("duplicate value `{}`", state.value_id.str()));
    }
    state_or_weight_values.insert(state.value_id.view());
  }
  // 4. Weights.
  IdSet weight_ids;
  weight_ids.reserve(weights.size());
  for (const auto& weight : weights) {
    auto field = [&] { return fmt::format("program.weights[{}]", weight.weight_id.str()); };
    if (!weight_ids.insert(weight.weight_id.view()).second) {
      return invalid_model_config(family, field(),
                                  fmt::format("duplicate weight `{}`", weight.weight_id.str()));
    }
    if (!known.insert(weight.value_id.view()).second) {
      return invalid_model_config(
          family, field(), fmt::format("duplicate value `{}`", weight.value_id.str()));
    }
    state_or_weight_values.insert(weight.value_id.view());
    if (auto valid = weight.tensor.validate(field()); !valid) {
      return invalid_model_config(family, field(), valid.error().message());
    }
  }
  // 5. Blocks and nodes, in program order.
  IdSet block_ids;
  IdSet node_ids;
  node_ids.reserve(value_count);
  for (const auto& block : blocks) {
    if (block.id.empty()) {
      return invalid_model_config(family, "program.blocks", "block id must not be empty");
    }
    auto block_field = [&] { return fmt::format("program.blocks[{}]", block.id); };
    if (block.nodes.empty()) {
      return invalid_model_config(family, block_field(),
                                  fmt::format("block `{}` has no nodes", block.id));
    }
    if (!block_ids.insert(block.id).second) {
      return invalid_model_config(family, block_field(),
                                  fmt::format("duplicate block `{}`", block.id));
    }
    for (const auto& node : block.nodes) {
      const std::string_view nid = node.id.str();
      if (!node.required_version.is_stable()) {
        return invalid_model_config(
            family, node_field(block, node, "required_version"),
            fmt::format("node `{}` requires unstable version {}", nid,
                        node.required_version.to_string()));
      }
      if (node.outputs.empty()) {
        return invalid_model_config(family, node_field(block, node, "outputs"),
                                    fmt::format("node `{}` has no outputs", nid));
      }
      for (const auto& [attribute_id, value] : node.attributes) {
        if (auto valid = validate_semantic_value(value); !valid) {
          return invalid_model_config(
              family, node_field(block, node, "attributes"),
              fmt::format("node `{}` attribute `{}`: {}", nid, attribute_id.str(),
                          valid.error().message()));
        }
      }
      if (!node_ids.insert(node.id.view()).second) {
        return invalid_model_config(family, node_field(block, node, "id"),
                                    fmt::format("duplicate node `{}`", nid));
      }
      if (const auto* tokens = std::get_if<WorkTokens>(&node.work)) {
        const auto count = std::count(node.inputs.begin(), node.inputs.end(), tokens->value_id) +
                           std::count(node.outputs.begin(), node.outputs.end(), tokens->value_id);
        if (count != 1) {
          return invalid_model_config(
              family, node_field(block, node, "work"),
              fmt::format("node `{}` token work value `{}` must occur exactly once among its "
                          "inputs and outputs (found {})",
                          nid, tokens->value_id.str(), count));
        }
        if (state_or_weight_values.contains(tokens->value_id.view())) {
          return invalid_model_config(
              family, node_field(block, node, "work"),
              fmt::format("node `{}` token work value `{}` is a state or weight", nid,
                          tokens->value_id.str()));
        }
      }
      for (size_t ordinal = 0; ordinal < node.inputs.size(); ++ordinal) {
        const auto& input = node.inputs[ordinal];
        if (!known.contains(input.view())) {
          return invalid_model_config(
              family, node_field(block, node, "inputs"),
              fmt::format("node `{}` input[{}] `{}` is not defined before its use", nid, ordinal,
                          input.str()));
        }
      }
      for (size_t ordinal = 0; ordinal < node.outputs.size(); ++ordinal) {
        const auto& output = node.outputs[ordinal];
        if (!known.insert(output.view()).second) {
          return invalid_model_config(
              family, node_field(block, node, "outputs"),
              fmt::format("node `{}` output[{}] `{}` is already defined (single producer)", nid,
                          ordinal, output.str()));
        }
      }
    }
  }
  // 6. State ids.
  IdSet state_ids;
  for (const auto& state : states) {
    if (!state_ids.insert(state.id.view()).second) {
      return invalid_model_config(family, fmt::format("program.states[{}]", state.id.str()),
                                  fmt::format("duplicate state `{}`", state.id.str()));
    }
  }
  // 7. Outputs.
  if (outputs.empty()) return invalid_model_config(family, "program.outputs", "must not be empty");
  IdSet seen_outputs;
  for (const auto& output : outputs) {
    if (!known.contains(output.view())) {
      return invalid_model_config(family, "program.outputs",
                                  fmt::format("output `{}` is not a known value", output.str()));
    }
    if (!seen_outputs.insert(output.view()).second) {
      return invalid_model_config(family, "program.outputs",
                                  fmt::format("duplicate output `{}`", output.str()));
    }
  }
  // Ranks in id order are 32-bit (ValueInfo::rank).
  if (known.size() > UINT32_MAX) {
    return invalid_model_config(family, "program",
                                fmt::format("{} values, more than {}", known.size(), UINT32_MAX));
  }
  // 8. Normalization.
  std::stable_sort(states.begin(), states.end(),
                   [](const StateSpec& a, const StateSpec& b) { return a.id < b.id; });
  std::stable_sort(weights.begin(), weights.end(),
                   [](const WeightReference& a, const WeightReference& b) {
                     return a.weight_id < b.weight_id;
                   });

  ModelProgram program(std::move(family_id));
  program.inputs_ = std::move(inputs);
  program.blocks_ = std::move(blocks);
  program.states_ = std::move(states);
  program.weights_ = std::move(weights);
  program.outputs_ = std::move(outputs);
  program.index();
  CanonicalText text;
  program.encode_canonical(text);
  program.fingerprint_ = sha256_hex(text.text());
  program.canonical_text_ = std::make_shared<const std::string>(text.release());
  return program;
}

void ModelProgram::index() {
  nodes_.clear();
  rank_by_id_.clear();
  value_infos_.clear();
  nodes_by_id_.clear();
  node_value_infos_.clear();
  node_value_offsets_.clear();
  size_t nodes = 0;
  size_t outputs = 0;
  size_t bindings = 0;
  for (const auto& block : blocks_) {
    nodes += block.nodes.size();
    for (const auto& node : block.nodes) {
      outputs += node.outputs.size();
      bindings += node.inputs.size() + node.outputs.size();
    }
  }
  nodes_.reserve(nodes);
  nodes_by_id_.reserve(nodes);
  const size_t values = inputs_.size() + states_.size() + weights_.size() + outputs;
  rank_by_id_.reserve(values);
  // Each value's info in the order first recorded (the first kind recorded
  // for a value wins: create refuses a program that defines a value twice),
  // its index in rank_by_id_ until the ranks are known.
  std::vector<ValueInfo> recorded;
  recorded.reserve(values);
  const auto record = [&](const ProgramValueId& id, ValueInfo info) {
    if (rank_by_id_.emplace(id, static_cast<uint32_t>(recorded.size())).second) {
      recorded.push_back(info);
    }
  };
  for (const auto& input : inputs_) record(input, ValueInfo{ProgramValueKind::kInput});
  for (const auto& state : states_) {
    record(state.value_id, ValueInfo{ProgramValueKind::kState, nullptr, &state});
  }
  for (const auto& weight : weights_) {
    record(weight.value_id, ValueInfo{ProgramValueKind::kWeight, &weight});
  }
  for (const auto& block : blocks_) {
    for (const auto& node : block.nodes) {
      nodes_by_id_.emplace(node.id, nodes_.size());
      nodes_.push_back(&node);
      for (const auto& output : node.outputs) record(output, ValueInfo{ProgramValueKind::kNodeOutput});
    }
  }
  // Ranks in id order: sorted once (create), shared by copies.
  if (values_in_id_order_ == nullptr) {
    std::vector<ProgramValueId> order;
    order.reserve(rank_by_id_.size());
    for (const auto& [id, index] : rank_by_id_) order.push_back(id);
    std::sort(order.begin(), order.end());
    values_in_id_order_ = std::make_shared<const std::vector<ProgramValueId>>(std::move(order));
  }
  const auto& order = *values_in_id_order_;
  value_infos_.resize(order.size());
  for (size_t rank = 0; rank < order.size(); ++rank) {
    uint32_t& slot = rank_by_id_.find(order[rank])->second;
    value_infos_[rank] = recorded[slot];
    value_infos_[rank].rank = static_cast<uint32_t>(rank);
    slot = static_cast<uint32_t>(rank);
  }
  // Every node's bindings, looked up once here rather than per pass.
  node_value_infos_.reserve(bindings);
  node_value_offsets_.reserve(nodes + 1);
  node_value_offsets_.push_back(0);
  for (const ProgramNode* node : nodes_) {
    for (const auto& input : node->inputs) node_value_infos_.push_back(find_value(input));
    for (const auto& output : node->outputs) node_value_infos_.push_back(find_value(output));
    node_value_offsets_.push_back(node_value_infos_.size());
  }
}

ModelProgram::ModelProgram(const ModelProgram& other)
    : family_id_(other.family_id_),
      inputs_(other.inputs_),
      blocks_(other.blocks_),
      states_(other.states_),
      weights_(other.weights_),
      outputs_(other.outputs_),
      fingerprint_(other.fingerprint_),
      canonical_text_(other.canonical_text_),
      values_in_id_order_(other.values_in_id_order_) {
  index();
}

ModelProgram& ModelProgram::operator=(const ModelProgram& other) {
  if (this != &other) {
    ModelProgram copy(other);
    *this = std::move(copy);
  }
  return *this;
}

// Moving std::vector keeps element addresses, so the node, weight and state
// pointers in the indexes stay valid.
ModelProgram::ModelProgram(ModelProgram&&) noexcept = default;
ModelProgram& ModelProgram::operator=(ModelProgram&&) noexcept = default;
ModelProgram::~ModelProgram() = default;

const ProgramNode* ModelProgram::find_node(const NodeId& id) const {
  auto it = nodes_by_id_.find(id);
  return it == nodes_by_id_.end() ? nullptr : nodes_[it->second];
}

std::optional<size_t> ModelProgram::find_node_index(const NodeId& id) const {
  auto it = nodes_by_id_.find(id);
  if (it == nodes_by_id_.end()) return std::nullopt;
  return it->second;
}

const ModelProgram::ValueInfo* ModelProgram::find_value(const ProgramValueId& id) const {
  auto it = rank_by_id_.find(id);
  return it == rank_by_id_.end() ? nullptr : &value_infos_[it->second];
}

std::span<const ModelProgram::ValueInfo* const> ModelProgram::node_value_infos(
    size_t node_index) const {
  if (node_index + 1 >= node_value_offsets_.size()) return {};
  const size_t begin = node_value_offsets_[node_index];
  return {node_value_infos_.data() + begin, node_value_offsets_[node_index + 1] - begin};
}

const ModelProgram::ValueInfo* ModelProgram::find_value_at(size_t node_index, size_t slot,
                                                            const ProgramValueId& id) const {
  const std::span<const ValueInfo* const> infos = node_value_infos(node_index);
  if (slot < infos.size()) {
    const ValueInfo* info = infos[slot];
    if (info != nullptr && (*values_in_id_order_)[info->rank] == id) return info;
  }
  return find_value(id);
}

const ModelProgram::ValueInfo* ModelProgram::node_input_info(size_t node_index,
                                                              size_t ordinal) const {
  if (node_index >= nodes_.size() || ordinal >= nodes_[node_index]->inputs.size()) return nullptr;
  return node_value_infos(node_index)[ordinal];
}

const ModelProgram::ValueInfo* ModelProgram::node_output_info(size_t node_index,
                                                               size_t ordinal) const {
  if (node_index >= nodes_.size()) return nullptr;
  const ProgramNode& node = *nodes_[node_index];
  if (ordinal >= node.outputs.size()) return nullptr;
  return node_value_infos(node_index)[node.inputs.size() + ordinal];
}

const ModelProgram::ValueInfo* ModelProgram::find_node_value(size_t node_index,
                                                              const ProgramValueId& id) const {
  if (node_index < nodes_.size()) {
    const ProgramNode& node = *nodes_[node_index];
    const std::span<const ValueInfo* const> infos = node_value_infos(node_index);
    size_t slot = 0;
    for (const auto* list : {&node.inputs, &node.outputs}) {
      for (const ProgramValueId& bound : *list) {
        if (bound == id && slot < infos.size()) return infos[slot];
        ++slot;
      }
    }
  }
  return find_value(id);
}

std::optional<ProgramValueKind> ModelProgram::value_kind(const ProgramValueId& id) const {
  const ValueInfo* entry = find_value(id);
  if (entry == nullptr) return std::nullopt;
  return entry->kind;
}

const WeightReference* ModelProgram::find_weight_by_value(const ProgramValueId& id) const {
  const ValueInfo* entry = find_value(id);
  return entry == nullptr ? nullptr : entry->weight;
}

const StateSpec* ModelProgram::find_state_by_value(const ProgramValueId& id) const {
  const ValueInfo* entry = find_value(id);
  return entry == nullptr ? nullptr : entry->state;
}

json semantic_value_to_json(const SemanticValue& value) {
  return std::visit(
      [](const auto& v) -> json {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, SemanticBool>) {
          return json{{"bool", v.value}};
        } else if constexpr (std::is_same_v<T, SemanticInteger>) {
          return json{{"integer", v.value}};
        } else if constexpr (std::is_same_v<T, SemanticUnsigned>) {
          return json{{"unsigned", v.value}};
        } else if constexpr (std::is_same_v<T, SemanticRational>) {
          return json{{"rational", v.value.to_string()}};
        } else if constexpr (std::is_same_v<T, SemanticText>) {
          return json{{"text", v.value}};
        } else {
          return json{{"integers", v.value}};
        }
      },
      value);
}

json work_spec_to_json(const ProgramNodeWorkSpec& work) {
  if (std::holds_alternative<WorkFixed>(work)) return "fixed";
  const auto& tokens = std::get<WorkTokens>(work);
  return json{{"tokens", {{"value", tokens.value_id.str()}, {"axis", tokens.axis}}}};
}

void encode_semantic_value(const SemanticValue& value, CanonicalEncoder& out) {
  out.begin_object();
  std::visit(
      [&out](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, SemanticBool>) {
          out.key("bool");
          out.boolean(v.value);
        } else if constexpr (std::is_same_v<T, SemanticInteger>) {
          out.key("integer");
          out.integer(v.value);
        } else if constexpr (std::is_same_v<T, SemanticUnsigned>) {
          out.key("unsigned");
          out.unsigned_integer(v.value);
        } else if constexpr (std::is_same_v<T, SemanticRational>) {
          out.key("rational");
          out.string(v.value.to_string());
        } else if constexpr (std::is_same_v<T, SemanticText>) {
          out.key("text");
          out.string(v.value);
        } else {
          out.key("integers");
          out.begin_array();
          for (int64_t element : v.value) out.integer(element);
          out.end_array();
        }
      },
      value);
  out.end_object();
}

void encode_work_spec(const ProgramNodeWorkSpec& work, CanonicalEncoder& out) {
  const auto* tokens = std::get_if<WorkTokens>(&work);
  if (tokens == nullptr) {
    out.string("fixed");
    return;
  }
  out.begin_object();
  out.key("tokens");
  out.begin_object();
  out.key("axis");
  out.unsigned_integer(tokens->axis);
  out.key("value");
  out.string(tokens->value_id);
  out.end_object();
  out.end_object();
}

json state_spec_to_json(const StateSpec& state) {
  json demand;
  if (std::holds_alternative<StateCapacityFixedPerScope>(state.capacity_demand)) {
    demand = "fixed_per_scope";
  } else {
    const auto& scaled = std::get<StateCapacityTokenScaled>(state.capacity_demand);
    demand = json{{"token_scaled",
                   {{"bytes_per_token", scaled.bytes_per_token},
                    {"maximum_tokens", scaled.maximum_tokens}}}};
  }
  return json{{"id", state.id.str()},
              {"value", state.value_id.str()},
              {"tensor", tensor_spec_to_json(state.tensor)},
              {"lifetime", state_lifetime_name(state.lifetime)},
              {"capacity_demand", demand},
              {"initialization", state_initialization_name(state.initialization)}};
}

json ModelProgram::to_json() const {
  auto ids = [](const std::vector<ProgramValueId>& values) {
    json out = json_array_of(values, [&](const auto& v) { return v.str(); });
    return out;
  };
  json blocks = json::array();
  for (const auto& block : blocks_) {
    json nodes = json::array();
    for (const auto& node : block.nodes) {
      json attributes = json::object();
      for (const auto& [id, value] : node.attributes) {
        attributes[id.str()] = semantic_value_to_json(value);
      }
      nodes.push_back(json{{"id", node.id.str()},
                           {"operation", node.operation_id.str()},
                           {"version", node.required_version.to_string()},
                           {"work", work_spec_to_json(node.work)},
                           {"inputs", ids(node.inputs)},
                           {"outputs", ids(node.outputs)},
                           {"attributes", attributes}});
    }
    blocks.push_back(json{{"id", block.id}, {"nodes", nodes}});
  }
  json states =
      json_array_of(states_, [&](const auto& state) { return state_spec_to_json(state); });
  json weights = json::array();
  for (const auto& weight : weights_) {
    weights.push_back(json{{"weight", weight.weight_id.str()},
                           {"value", weight.value_id.str()},
                           {"tensor", tensor_spec_to_json(weight.tensor)}});
  }
  return json{{"family", family_id_.str()}, {"inputs", ids(inputs_)}, {"blocks", blocks},
              {"states", states},           {"weights", weights},     {"outputs", ids(outputs_)}};
}

void ModelProgram::encode_canonical(CanonicalEncoder& out) const {
  // Members in canonical (byte-wise sorted) key order, as to_json's document
  // would be written.
  out.begin_object();
  out.key("blocks");
  out.begin_array();
  for (const auto& block : blocks_) {
    out.begin_object();
    out.key("id");
    out.string(block.id);
    out.key("nodes");
    out.begin_array();
    for (const auto& node : block.nodes) {
      out.begin_object();
      out.key("attributes");
      out.begin_object();
      for (const auto& [id, value] : node.attributes) {
        out.key(id);
        encode_semantic_value(value, out);
      }
      out.end_object();
      out.key("id");
      out.string(node.id);
      out.key("inputs");
      out.id_array(node.inputs);
      out.key("operation");
      out.string(node.operation_id);
      out.key("outputs");
      out.id_array(node.outputs);
      out.key("version");
      out.string(node.required_version.to_string());
      out.key("work");
      encode_work_spec(node.work, out);
      out.end_object();
    }
    out.end_array();
    out.end_object();
  }
  out.end_array();
  out.key("family");
  out.string(family_id_);
  out.key("inputs");
  out.id_array(inputs_);
  out.key("outputs");
  out.id_array(outputs_);
  out.key("states");
  out.begin_array();
  for (const auto& state : states_) out.json(state_spec_to_json(state));
  out.end_array();
  out.key("weights");
  out.begin_array();
  for (const auto& weight : weights_) {
    out.begin_object();
    out.key("tensor");
    out.json(tensor_spec_to_json(weight.tensor));
    out.key("value");
    out.string(weight.value_id);
    out.key("weight");
    out.string(weight.weight_id);
    out.end_object();
  }
  out.end_array();
  out.end_object();
}

}  // namespace ferrite
