// ferrite/plan/retained_completion.h — completion values kept readable.
//
// Contract (spec §9): every retained value must be a node output; exactly one
// plan-node output binding carries it, with usage Activations and exactly one
// storage component; the retained range is [offset, offset + tensor minimum
// bytes); no node at or after the producer (other than the producing binding)
// may write an overlapping range of that resource. Result sorted by value id.
//
// Readback (spec §9 `readback_request`, plan-side only; runtime participants
// come with the runtime): a request reads a contiguous tensor from the start of
// the retained range; its element type must equal the retained one ("element
// type differs") and it may need no more bytes than the retained tensor's
// minimum storage ("exceeds retained activation capacity").
// `readback_for_work` is the readback of what the producer actually wrote for
// one executed work shape: the whole tensor for Fixed work; for Tokens work
// whose token value is the retained value, the tensor with its token axis cut
// to the scheduled tokens (1..=capacity extent), which must be a contiguous
// prefix (every axis before the token axis has extent 1); anything else is an
// error.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto kept, resolve_retained_completion_values(family, nodes, spec));
//   kept[0].resource_id;
//   FERRITE_ASSIGN_OR_RETURN(auto read, kept[0].readback_for_work(producer.work, 2));
//   read.length_bytes;
#pragma once

#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferrite/compiler/compile_options.h"
#include "ferrite/plan/plan_node.h"

namespace ferrite {

// One contiguous read of a retained value: [offset, offset + length) of `resource_id`.
struct CompletionReadback {
  ProgramValueId value_id;
  NodeId producer_node_id;
  ResourceId resource_id;
  uint64_t offset_bytes = 0;
  uint64_t length_bytes = 0;
  ResolvedTensorSpec tensor;  // what is read (contiguous)

  friend bool operator==(const CompletionReadback&, const CompletionReadback&) = default;
};

struct RetainedCompletionValue {
  ProgramValueId value_id;
  NodeId producer_node_id;
  uint32_t output_ordinal = 0;
  ResourceId resource_id;
  uint64_t logical_offset_bytes = 0;
  ResolvedTensorSpec tensor;

  Result<CompletionReadback> readback_request(const ResolvedTensorSpec& requested) const;
  Result<CompletionReadback> readback_for_work(const ProgramNodeWorkSpec& producer_work,
                                               uint64_t scheduled_tokens) const;

  nlohmann::json to_json() const;
  friend bool operator==(const RetainedCompletionValue&, const RetainedCompletionValue&) = default;
};

Result<std::vector<RetainedCompletionValue>> resolve_retained_completion_values(
    const PreparedModelFamily& family, std::span<const PlanNode> nodes,
    const CompletionRetentionSpec& retention);

}  // namespace ferrite
