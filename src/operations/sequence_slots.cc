#include "ferrite/operations/sequence_slots.h"

#include <set>
#include <utility>
#include <vector>

#include "ferrite/operations/operation_table.h"

namespace ferrite {
namespace {

// Operations whose output row t depends only on input row t (and weights or
// attributes): they run unchanged over tokens of many sequences.
bool rows_independent(OpKind kind) {
  switch (kind) {
    case OpKind::kAdd:
    case OpKind::kAddBias:
    case OpKind::kGeglu:
    case OpKind::kHeadRmsNorm:
    case OpKind::kLinear:
    case OpKind::kRmsNorm:
    case OpKind::kRope:
    case OpKind::kRopeFactors:
    case OpKind::kRopeScaled:
    case OpKind::kScale:
    case OpKind::kSwiglu:
    case OpKind::kTokenEmbedding:
      return true;
    default:
      return false;
  }
}

Error form_error(std::string message) {
  return make_error(ErrorCode::kInvalidModelConfig, "sequence slots: {}", std::move(message));
}

Result<ProgramNode> rewrite(const ProgramNode& node, const ProgramValueId& slots,
                            const ProgramValueId& sample_rows, uint64_t& gathers) {
  const std::optional<OpKind> kind = find_op_kind(node.operation_id);
  if (!kind) {
    return form_error(fmt::format("node `{}` runs unknown operation `{}`", node.id.str(),
                                  node.operation_id.str()));
  }
  if (rows_independent(*kind)) return node;
  ProgramNode out = node;
  auto become = [&](OpKind to) -> Result<void> {
    FERRITE_ASSIGN_OR_RETURN(OperationDescriptor descriptor, operation_descriptor(to));
    out.operation_id = descriptor.id;
    out.required_version = descriptor.version;
    return {};
  };
  switch (*kind) {
    case OpKind::kAttention:
    case OpKind::kSlidingAttention:
      if (node.inputs.size() != 6) {
        return form_error(fmt::format("node `{}` has {} inputs; attention has 6",
                                      node.id.str(), node.inputs.size()));
      }
      FERRITE_RETURN_IF_ERROR(become(*kind == OpKind::kAttention
                                         ? OpKind::kSequenceAttention
                                         : OpKind::kSequenceSlidingAttention));
      out.inputs.insert(out.inputs.begin() + 4, slots);
      return out;
    case OpKind::kTakeLastToken:
      if (node.inputs.size() != 1) {
        return form_error(fmt::format("node `{}` has {} inputs; take_last_token has 1",
                                      node.id.str(), node.inputs.size()));
      }
      FERRITE_RETURN_IF_ERROR(become(OpKind::kGatherRows));
      out.inputs.push_back(sample_rows);
      out.work = WorkFixed{};  // S rows, whatever the step's tokens
      ++gathers;
      return out;
    default:
      return form_error(fmt::format(
          "node `{}` runs `{}`, whose rows may depend on other tokens' rows; a sequence-slot "
          "plan runs only operations that keep tokens apart",
          node.id.str(), node.operation_id.str()));
  }
}

}  // namespace

Result<PreparedModelFamily> decoder_with_sequence_slots(const PreparedModelFamily& decoder) {
  const ModelProgram& program = decoder.program();
  const ProgramValueId slots = ProgramValueId::literal(kDecoderSlots);
  const ProgramValueId sample_rows = ProgramValueId::literal(kDecoderSampleRows);
  for (const ProgramValueId& input : program.inputs()) {
    if (input == slots || input == sample_rows) {
      return form_error(fmt::format("the program already has input `{}`", input.str()));
    }
  }
  std::vector<ProgramValueId> inputs = program.inputs();
  inputs.push_back(slots);
  inputs.push_back(sample_rows);
  uint64_t gathers = 0;
  std::vector<ProgramBlock> blocks;
  blocks.reserve(program.blocks().size());
  for (const ProgramBlock& block : program.blocks()) {
    ProgramBlock copy{block.id, {}};
    copy.nodes.reserve(block.nodes.size());
    for (const ProgramNode& node : block.nodes) {
      FERRITE_ASSIGN_OR_RETURN(ProgramNode rewritten, rewrite(node, slots, sample_rows, gathers));
      copy.nodes.push_back(std::move(rewritten));
    }
    blocks.push_back(std::move(copy));
  }
  if (gathers == 0) {
    return form_error("the program has no take_last_token whose rows become one per sequence");
  }
  FERRITE_ASSIGN_OR_RETURN(
      ModelProgram rewritten,
      ModelProgram::create(program.family_id(), std::move(inputs), std::move(blocks),
                           program.states(), program.weights(), program.outputs()));
  nlohmann::json config = decoder.canonical_config();
  config["decoder_form"] = "sequence_slots";
  return PreparedModelFamily::create(decoder.family_id(), std::move(config),
                                     decoder.weight_schema(), std::move(rewritten));
}

std::map<ProgramValueId, ProgramTensorSpec> sequence_compile_inputs(
    std::map<ProgramValueId, ProgramTensorSpec> inputs, uint64_t sequences) {
  uint64_t tokens = 0;
  for (const auto& [id, spec] : inputs) {
    if (!spec.dimensions.empty()) tokens = std::max(tokens, spec.dimensions[0]);
  }
  inputs[ProgramValueId::literal(kDecoderSlots)] =
      ProgramTensorSpec{{tokens}, ElementType::kU32, ContiguousLayout{}};
  inputs[ProgramValueId::literal(kDecoderSampleRows)] =
      ProgramTensorSpec{{sequences}, ElementType::kU32, ContiguousLayout{}};
  return inputs;
}

}  // namespace ferrite
