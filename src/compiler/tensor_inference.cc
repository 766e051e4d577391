#include "ferrite/compiler/tensor_inference.h"

#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ferrite/core/checked_math.h"

namespace ferrite {
namespace {

std::string describe_element_types(const std::set<ElementType>& types) {
  std::vector<std::string_view> names;
  for (ElementType t : types) names.push_back(element_type_debug_name(t));
  return fmt::format("{{{}}}", fmt::join(names, ", "));
}

// Binds `symbol` to `value` or checks an existing binding. Zero never binds.
bool bind_symbol(SymbolTable& table, std::string_view symbol, uint64_t value) {
  return value != 0 && table.bind(symbol, value);
}

// What names a slot in an error ("node `n` input[0] `value.x`"), formatted
// only when there is an error: unification runs for every binding of every
// node in every resolution round.
struct SlotName {
  const NodeId& node_id;
  std::string_view role;
  size_t ordinal;
  const ProgramValueId& value_id;

  std::string text() const {
    return fmt::format("node `{}` {}[{}] `{}`", node_id.str(), role, ordinal, value_id.str());
  }
};

Result<void> unify_dimensions(const std::vector<DimensionConstraint>& constraints,
                              const std::vector<uint64_t>& dimensions,
                              SymbolTable& symbols, const SlotName& slot) {
  for (size_t axis = 0; axis < constraints.size(); ++axis) {
    const uint64_t extent = dimensions[axis];
    const auto& constraint = constraints[axis];
    bool valid = false;
    if (const auto* exact = std::get_if<DimensionExact>(&constraint)) {
      valid = exact->value == extent;
    } else if (const auto* range = std::get_if<DimensionRange>(&constraint)) {
      valid = range->minimum <= extent && extent <= range->maximum;
    } else {
      valid = bind_symbol(symbols, std::get<DimensionSymbol>(constraint).name, extent);
    }
    if (!valid) {
      return make_error(ErrorCode::kInvalidExecutionPlan, "{} dimension[{}]={} violates `{}`",
                        slot.text(), axis, extent, describe_dimension_constraint(constraint))
          .with_field("axis", std::to_string(axis));
    }
  }
  return {};
}

// Tries each allowed layout in order against a copy of the stride table; the
// first match commits its bindings.
bool layout_matches(const std::vector<LayoutConstraint>& constraints,
                    const ResolvedTensorLayout& layout, SymbolTable& symbols) {
  for (const auto& constraint : constraints) {
    bool matches = false;
    if (std::holds_alternative<ContiguousLayoutConstraint>(constraint)) {
      matches = std::holds_alternative<ContiguousLayout>(layout);
    } else if (const auto* strided = std::get_if<StridedLayoutConstraint>(&constraint)) {
      const auto* actual = std::get_if<StridedLayout>(&layout);
      if (actual && actual->byte_strides.size() == strided->strides.size()) {
        // Only a strided constraint binds symbols: on a copy, committed on a match.
        auto candidate = symbols;
        matches = true;
        for (size_t axis = 0; axis < strided->strides.size() && matches; ++axis) {
          const uint64_t stride = actual->byte_strides[axis];
          const auto& s = strided->strides[axis];
          if (const auto* exact = std::get_if<StrideExactBytes>(&s)) {
            matches = exact->value == stride;
          } else {
            matches = bind_symbol(candidate, std::get<StrideSymbol>(s).name, stride);
          }
        }
        if (matches) symbols = std::move(candidate);
      }
    } else {
      const auto& blocked = std::get<BlockedLayoutConstraint>(constraint);
      const auto* actual = std::get_if<BlockedLayout>(&layout);
      matches = actual && actual->block == blocked.block && actual->axis_order == blocked.axis_order;
    }
    if (matches) return true;
  }
  return false;
}

Result<ResolvedTensorLayout> infer_layout(const std::vector<LayoutConstraint>& layouts,
                                          const std::vector<uint64_t>& dimensions,
                                          const SymbolTable& stride_symbols,
                                          const NodeId& node_id) {
  if (layouts.size() != 1) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "node `{}` output layout is ambiguous; provide an explicit tensor",
                      node_id.str());
  }
  const auto& only = layouts.front();
  if (std::holds_alternative<ContiguousLayoutConstraint>(only)) return ContiguousLayout{};
  if (const auto* strided = std::get_if<StridedLayoutConstraint>(&only)) {
    StridedLayout out;
    for (const auto& s : strided->strides) {
      if (const auto* exact = std::get_if<StrideExactBytes>(&s)) {
        out.byte_strides.push_back(exact->value);
        continue;
      }
      const auto& symbol = std::get<StrideSymbol>(s).name;
      const uint64_t* bound = stride_symbols.find(symbol);
      if (bound == nullptr) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "node `{}` stride symbol `{}` is unresolved; provide an explicit tensor",
                          node_id.str(), symbol);
      }
      out.byte_strides.push_back(*bound);
    }
    return out;
  }
  const auto& blocked = std::get<BlockedLayoutConstraint>(only);
  bool divisible = true;
  for (size_t axis = 0; axis < dimensions.size(); ++axis) {
    if (dimensions[axis] % blocked.block[axis] != 0) divisible = false;
  }
  BlockedLayout out{blocked.block, blocked.axis_order, BlockedPaddingExact{}};
  if (!divisible) {
    BlockedPaddingZeroFill padding;
    for (uint32_t axis : blocked.axis_order) {
      auto padded = checked_round_up(dimensions[axis], blocked.block[axis]);
      if (!padded) {
        return make_error(ErrorCode::kInvalidExecutionPlan, "blocked tensor padding overflows u64");
      }
      padding.physical_dimensions.push_back(*padded);
    }
    out.padding = std::move(padding);
  }
  return out;
}

// unify_tensor without the fields that name the slot (`slot` names it in
// the message).
Result<void> unify_slot(const TensorContract& contract, const ResolvedTensorSpec& tensor,
                        TensorSymbols& symbols, const SlotName& slot) {
  if (!contract.element_types().contains(tensor.element_type()) ||
      contract.rank() != tensor.rank()) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "{} rank or dtype differs from its operation contract: actual rank={} "
                      "dtype={}, expected rank={} dtypes={}",
                      slot.text(), tensor.rank(), element_type_debug_name(tensor.element_type()),
                      contract.rank(), describe_element_types(contract.element_types()));
  }
  FERRITE_RETURN_IF_ERROR(
      unify_dimensions(contract.dimensions(), tensor.dimensions(), symbols.dimensions, slot));
  if (!layout_matches(contract.layouts(), tensor.layout(), symbols.strides)) {
    return make_error(
        ErrorCode::kInvalidExecutionPlan, "{} layout {} differs from its operation contract {}",
        slot.text(), describe_layout(tensor.layout()),
        describe_layout_constraints(contract.layouts()));
  }
  return {};
}

}  // namespace

Result<void> validate_compile_options(const PreparedModelFamily& family,
                                      const ProgramPlanCompileOptions& options) {
  const ModelProgram& program = family.program();
  std::vector<NodeId> referenced;  // in the order they are checked
  for (const auto& [node_id, _] : options.required_capabilities()) referenced.push_back(node_id);
  for (const auto& [node_id, _] : options.preferred_providers()) referenced.push_back(node_id);
  for (const NodeId& node_id : referenced) {
    if (program.find_node(node_id) == nullptr) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "program compile options reference an unknown node `{}`", node_id.str())
          .with_field("node_id", node_id.str());
    }
  }
  for (const auto& [value_id, _] : options.tensor_specs()) {
    if (!program.value_kind(value_id)) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "program compile options contain an unknown semantic value `{}`",
                        value_id.str())
          .with_field("value_id", value_id.str());
    }
  }
  for (const auto& value_id : options.completion_retention().values()) {
    const ModelProgram::ValueInfo* info = program.find_value(value_id);
    if (info == nullptr || info->kind != ProgramValueKind::kNodeOutput) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "completion retention must reference a semantic node "
                        "output; `{}` is not one",
                        value_id.str())
          .with_field("value_id", value_id.str());
    }
  }
  for (const auto& input : program.inputs()) {
    if (!options.tensor_specs().contains(input)) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "every program input requires an explicit canonical "
                        "tensor capacity; `{}` has none",
                        input.str())
          .with_field("value_id", input.str());
    }
  }
  return {};
}

Result<void> unify_tensor(const TensorContract& contract, const ResolvedTensorSpec& tensor,
                          TensorSymbols& symbols, const NodeId& node_id, std::string_view role,
                          size_t ordinal, const ProgramValueId& value_id) {
  const SlotName slot{node_id, role, ordinal, value_id};
  if (auto unified = unify_slot(contract, tensor, symbols, slot); !unified) {
    return make_error(std::move(unified)
                          .error()
                          .with_field("node_id", node_id.str())
                          .with_field("role", std::string(role))
                          .with_field("ordinal", std::to_string(ordinal))
                          .with_field("value_id", value_id.str()));
  }
  return {};
}

Result<ResolvedTensorSpec> infer_tensor(const TensorContract& contract,
                                        const TensorSymbols& symbols, const NodeId& node_id) {
  if (contract.element_types().size() != 1) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "node `{}` output dtype is ambiguous; provide an explicit tensor",
                      node_id.str());
  }
  const ElementType element_type = *contract.element_types().begin();
  std::vector<uint64_t> dimensions;
  for (const auto& constraint : contract.dimensions()) {
    if (const auto* exact = std::get_if<DimensionExact>(&constraint)) {
      dimensions.push_back(exact->value);
    } else if (const auto* range = std::get_if<DimensionRange>(&constraint)) {
      if (range->minimum != range->maximum) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "node `{}` output range is ambiguous; provide an explicit tensor",
                          node_id.str());
      }
      dimensions.push_back(range->minimum);
    } else {
      const auto& symbol = std::get<DimensionSymbol>(constraint).name;
      const uint64_t* bound = symbols.dimensions.find(symbol);
      if (bound == nullptr) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "node `{}` output symbol `{}` is unresolved; provide an explicit tensor",
                          node_id.str(), symbol);
      }
      dimensions.push_back(*bound);
    }
  }
  FERRITE_ASSIGN_OR_RETURN(auto layout,
                           infer_layout(contract.layouts(), dimensions, symbols.strides, node_id));
  return ResolvedTensorSpec::create(std::move(dimensions), element_type, std::move(layout));
}

Result<ValueTensors> infer_value_tensors(const PreparedModelFamily& family,
                                         const OperationCatalog& operations,
                                         const ProgramPlanCompileOptions& options) {
  const ModelProgram& program = family.program();
  // Worked out by the values' ranks (one hash of the id's address per
  // look-up, not a search of an ordered map) in the table handed back.
  ValueTensors tensors(program);
  // The value's tensor, or null (also for an id the program does not define).
  const auto find = [&](const ProgramValueId& id) -> const ResolvedTensorSpec* {
    return tensors.find(program, id);
  };
  // Inserts unless present; the tensor the value has either way. An option
  // tensor of a value the program does not define is refused, with the
  // error validate_compile_options gives (a caller may not have asked it).
  using Emplaced = std::pair<const ResolvedTensorSpec*, bool>;
  // `info` is find_value(id)'s answer (the node walk below reads it by
  // position).
  const auto emplace_info = [&](const ModelProgram::ValueInfo* info, const ProgramValueId& id,
                                ResolvedTensorSpec tensor) -> Result<Emplaced> {
    if (info == nullptr) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "program compile options contain an unknown semantic value `{}`",
                        id.str())
          .with_field("value_id", id.str());
    }
    if (const ResolvedTensorSpec* present = tensors.at_rank(info->rank)) {
      return Emplaced{present, false};
    }
    tensors.set_at_rank(info->rank, std::move(tensor));
    return Emplaced{tensors.at_rank(info->rank), true};
  };
  const auto emplace = [&](const ProgramValueId& id,
                           ResolvedTensorSpec tensor) -> Result<Emplaced> {
    return emplace_info(program.find_value(id), id, std::move(tensor));
  };
  const auto insert_exact = [&](const ProgramValueId& id, const ResolvedTensorSpec& tensor,
                                std::string_view kind) -> Result<void> {
    FERRITE_ASSIGN_OR_RETURN(const Emplaced emplaced, emplace(id, tensor));
    const auto [present, inserted] = emplaced;
    if (!inserted && !(*present == tensor)) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "explicit {} tensor `{}` differs from model semantics "
                        "(model: {}, explicit: {})",
                        kind, id.str(), tensor.to_string(), present->to_string())
          .with_field("value_id", id.str());
    }
    return {};
  };
  for (const auto& [value_id, spec] : options.tensor_specs()) {
    FERRITE_ASSIGN_OR_RETURN(auto tensor, spec.resolve());
    FERRITE_RETURN_IF_ERROR(emplace(value_id, std::move(tensor)));
  }
  for (const auto& weight : program.weights()) {
    FERRITE_ASSIGN_OR_RETURN(auto tensor, weight.tensor.resolve());
    FERRITE_RETURN_IF_ERROR(insert_exact(weight.value_id, tensor, "weight"));
  }
  for (const auto& state : program.states()) {
    FERRITE_ASSIGN_OR_RETURN(auto tensor, state.tensor.resolve());
    FERRITE_RETURN_IF_ERROR(insert_exact(state.value_id, tensor, "state"));
  }
  // Each node's values by position (ModelProgram::node_value_infos), not a
  // look-up per binding: at 100,000 nodes each look-up is a cache miss.
  const auto at_info = [&](const ModelProgram::ValueInfo* info) -> const ResolvedTensorSpec* {
    return tensors.at(info);
  };
  const std::vector<const ProgramNode*>& nodes = program.nodes();
  for (size_t index = 0; index < nodes.size(); ++index) {
    const ProgramNode* node = nodes[index];
    FERRITE_ASSIGN_OR_RETURN(const OperationDescriptor* op,
                             operations.operation_for_node(node->id, node->operation_id));
    if (node->inputs.size() != op->inputs.size() || node->outputs.size() != op->outputs.size()) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "node `{}` arity differs from operation `{}`: node has {} inputs and "
                        "{} outputs, operation has {} and {}",
                        node->id.str(), op->id.str(), node->inputs.size(), node->outputs.size(),
                        op->inputs.size(), op->outputs.size())
          .with_field("node_id", node->id.str());
    }
    // Attribute values are a separate typed contract: an attribute never
    // binds a dimension symbol of the same name.
    TensorSymbols symbols;
    for (size_t ordinal = 0; ordinal < node->inputs.size(); ++ordinal) {
      const auto& value_id = node->inputs[ordinal];
      const ResolvedTensorSpec* tensor = at_info(program.node_input_info(index, ordinal));
      if (tensor == nullptr) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "node `{}` input `{}` has no concrete tensor", node->id.str(),
                          value_id.str())
            .with_field("node_id", node->id.str())
            .with_field("value_id", value_id.str());
      }
      FERRITE_RETURN_IF_ERROR(unify_tensor(op->inputs[ordinal], *tensor, symbols, node->id,
                                           "input", ordinal, value_id));
    }
    for (size_t ordinal = 0; ordinal < node->outputs.size(); ++ordinal) {
      const auto& value_id = node->outputs[ordinal];
      if (const ResolvedTensorSpec* tensor = at_info(program.node_output_info(index, ordinal))) {
        FERRITE_RETURN_IF_ERROR(unify_tensor(op->outputs[ordinal], *tensor, symbols, node->id,
                                             "output", ordinal, value_id));
      }
    }
    for (size_t ordinal = 0; ordinal < node->outputs.size(); ++ordinal) {
      const auto& value_id = node->outputs[ordinal];
      const ModelProgram::ValueInfo* info = program.node_output_info(index, ordinal);
      if (at_info(info) != nullptr) continue;
      auto tensor = infer_tensor(op->outputs[ordinal], symbols, node->id);
      if (!tensor) {
        Status status = std::move(tensor).error();
        status.with_field("node_id", node->id.str())
            .with_field("role", "output")
            .with_field("ordinal", std::to_string(ordinal))
            .with_field("value_id", value_id.str());
        return make_error(std::move(status));
      }
      FERRITE_RETURN_IF_ERROR(emplace_info(info, value_id, std::move(*tensor)));
    }
  }
  for (const auto& output : program.outputs()) {
    if (find(output) == nullptr) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "program compilation did not resolve every semantic output");
    }
  }
  return tensors;
}

}  // namespace ferrite
